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
from array import array
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


class SpooledTexts:
    """Many texts kept one after another in one scratch file as UTF-8 as they are added, each
    read back by its number: the markup of every small table of a page, which the HTML
    chunker takes in page order. Held as strings, some 200,000 tables of a 32 MiB page (old
    sites lay out each section in one) cost more than the page. Its file is made with the
    first text and closed when it is let go."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._ends = array("q")  # each text's end in the file, in bytes

    def __len__(self) -> int:
        return len(self._ends)

    def append(self, text: str) -> None:
        if self._file is None:
            self._file = scratch_file()
            weakref.finalize(self, self._file.close)
        # (a lone surrogate has no UTF-8: left out, as `SpooledText` leaves it)
        written = self._file.write(text.encode("utf-8", errors="ignore"))
        self._ends.append((self._ends[-1] if self._ends else 0) + written)

    def __getitem__(self, number: int) -> str:
        if self._file is None or not 0 <= number < len(self._ends):
            raise IndexError(number)
        start = self._ends[number - 1] if number else 0
        self._file.seek(start)
        return self._file.read(self._ends[number] - start).decode("utf-8")
