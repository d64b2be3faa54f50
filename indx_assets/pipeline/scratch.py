"""Where the pipeline's temporary files go.

A reader or chunker that spools a large document (the HTML reader's page text, a page decoded
into UTF-8, a long table's markup: `SpooledText`) writes it to an unnamed temporary file
(`scratch_file`). A stage that reads or cuts a stored source names its storage's scratch
folder for the time it runs (`scratch_in`), so those files fill the data directory's disk,
sized for them, not the system's temporary directory (often a small tmpfs, whose files are
memory). Elsewhere (the library, `indx chunk`) they go to the system's temporary directory.
"""

import mmap
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO

_FOLDER: ContextVar[str | None] = ContextVar("scratch_folder", default=None)


@contextmanager
def scratch_in(folder: str | None) -> Iterator[None]:
    """Temporary files made in the block go to `folder` (None: the system's temporary directory)."""
    token = _FOLDER.set(folder)
    try:
        yield
    finally:
        _FOLDER.reset(token)


def scratch_file() -> IO[bytes]:
    """An unnamed temporary file (nothing is left however the process ends) in the scratch folder."""
    return tempfile.TemporaryFile(dir=_FOLDER.get())


#: Characters encoded at a time into a spooled text (so no copy of a long text is made at once).
_STEP = 1 << 20


class SpooledText:
    """A long text kept in a scratch file as UTF-8 as it is written, not in memory: a long
    table's markup, which the HTML chunker reads again a piece at a time (`mapped`). Held as a
    string beside its page's text it cost the page as much again, and joining it from its
    parts twice that. `read` gives it whole where a string is wanted. Its file is closed by
    `close`, or when it is let go."""

    def __init__(self) -> None:
        self._file = scratch_file()
        self.close = weakref.finalize(self, self._file.close)  #: closes its file, at the latest when let go
        self.size = 0  #: in bytes

    def write(self, text: str) -> None:
        for at in range(0, len(text), _STEP):
            # (a lone surrogate has no UTF-8: left out, as the HTML parser leaves it out of the bytes it reads)
            self.size += self._file.write(text[at : at + _STEP].encode("utf-8", errors="ignore"))

    def read(self) -> str:
        self._file.flush()
        self._file.seek(0)
        return self._file.read().decode("utf-8")

    @contextmanager
    def mapped(self) -> Iterator[mmap.mmap | bytes]:
        """Its bytes, as a read-only map of its file (empty bytes when it has none)."""
        self._file.flush()
        if not self.size:
            yield b""
            return
        with mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) as source:
            yield source
