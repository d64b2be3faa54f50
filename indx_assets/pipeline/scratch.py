"""Where the pipeline's temporary files go.

A reader or chunker that spools a large document (the HTML reader's page text, a page decoded
into UTF-8, a long table's markup) writes it to an unnamed temporary file (`scratch_file`). A
stage that reads or cuts a stored source names its storage's scratch folder for the time it
runs (`scratch_in`), so those files fill the data directory's disk, sized for them, not the
system's temporary directory (often a small tmpfs, whose files are memory). Elsewhere (the
library, `indx chunk`) they go to the system's temporary directory.
"""

import tempfile
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
