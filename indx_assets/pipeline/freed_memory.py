"""Memory the process freed, handed back to the system (glibc's `malloc_trim`).

glibc keeps what a program frees for its next allocations, in the heap of each thread that
allocated it (torch's, LanceDB's and Arrow's threads each have their own), and returns the top
of a heap only. After a stage that made and dropped many objects (embedding a long document,
writing its rows to LanceDB) most of that is free but still counted in the process's memory,
and the next stage's allocations land beside it, so the peak is the sum of the stages rather
than the largest of them. Measured on a 100,000-row sheet through `indx ingest` (tiny
embedder, one run each, load average 4 to 13 on 2 cores): after embedding, 900 MiB resident,
766 after the trim; the whole ingest's peak 1,084 MiB without it (in the LanceDB write and
indexes), 989 with it (0.91x).

Where there is no glibc (macOS, musl) this does nothing: their allocators return memory as
they go, or keep it, and there is nothing to ask.
"""

import ctypes
import ctypes.util
from functools import cache


@cache
def _trim() -> "ctypes._CFuncPtr | None":
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc: no malloc_trim
        return None


def return_freed_memory() -> bool:
    """Hand the memory freed so far back to the system; True when some was (glibc only).
    Costs a walk of the free lists (milliseconds for a heap of a gigabyte), so it is called
    once a batch's stage, not once a document."""
    trim = _trim()
    return bool(trim(0)) if trim is not None else False
