"""One `indx` writer per data directory: OS advisory locks on files in `INDX_HOME`.

`writer_lock` is held by every command that writes the index (`indx ingest`, `backfill`,
`forget`) for as long as it runs; `instance_lock` is held briefly while the Dagster instance is
created or opened (two first uses of a new data directory would otherwise both stamp its
SQLite schema and leave it with two alembic heads). Both are `flock` locks: the kernel drops
them when their process ends however it ends, so a killed `indx` never leaves one behind. The
holder writes its pid and start time into the lock file, which a refused process quotes.
"""

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

#: The writer lock's file in `INDX_HOME`.
WRITER_LOCK_FILE = "indx.lock"
#: The instance lock's file in `INDX_HOME`.
INSTANCE_LOCK_FILE = "instance.lock"
#: Exit status of a command refused because another process holds the data directory
#: (`EX_TEMPFAIL` of sysexits.h: try again later).
EXIT_LOCKED = 75
#: How long opening the instance waits for another process to finish opening it.
INSTANCE_WAIT_S = 300.0
#: How often a waiting process tries the lock again.
POLL_S = 0.2

# Locks this process holds, by file, with how often each was entered: a command that holds the
# writer lock and then opens the instance (or a nested helper) must not lock itself out, since
# flock locks on two descriptors of one file exclude each other even within one process.
_held: dict[Path, int] = {}
_held_guard = threading.Lock()


class HomeLocked(RuntimeError):
    """Another process holds the lock; the message names it (pid and since when)."""

    def __init__(self, home: Path, holder: dict):
        self.home = home
        self.holder = holder
        pid = holder.get("pid", "unknown")
        since = holder.get("since", "an unknown time")
        super().__init__(f"another indx process (pid {pid}) holds INDX_HOME since {since} ({home})")


def _read_holder(path: Path) -> dict:
    # The holder writes its record right after it takes the lock: an empty or torn record
    # means it is between the two, so look again briefly.
    for _ in range(10):
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            time.sleep(0.05)
    return {}


@contextmanager
def _flock(home: Path, name: str, wait: float) -> Iterator[None]:
    """Hold an exclusive flock on `home/name`, trying for up to `wait` seconds (0: once)."""
    home.mkdir(parents=True, exist_ok=True)
    path = (home / name).resolve()
    with _held_guard:
        if path in _held:
            _held[path] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _held_guard:
                _held[path] -= 1
        return
    # Opened without truncating: the holder's record must survive a refused process's open.
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise HomeLocked(home, _read_holder(path)) from None
                time.sleep(POLL_S)
        record = {"pid": os.getpid(), "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)
        with _held_guard:
            _held[path] = 1
        try:
            yield
        finally:
            with _held_guard:
                del _held[path]
            os.ftruncate(fd, 0)  # the record describes a holder only while there is one
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def writer_lock(home: Path, wait: float = 0.0):
    """Hold `INDX_HOME` for writing; raise `HomeLocked` if another process still holds it
    after `wait` seconds. Re-entrant within one process."""
    return _flock(home, WRITER_LOCK_FILE, wait)


def instance_lock(home: Path, wait: float = INSTANCE_WAIT_S):
    """Hold `INDX_HOME` while its Dagster instance is created or opened (briefly; waits)."""
    return _flock(home, INSTANCE_LOCK_FILE, wait)
