"""Partition keys for source paths, and the index of what the corpus sensor last saw.

A source's partition key is its id, `{root label}/{path relative to the root}` (`roots`),
when that is a valid Dagster partition key. Ids that are not (control characters, `...`,
undecodable bytes, more than `MAX_KEY_LENGTH` characters) get a stable key instead: a
readable prefix (which keeps the label: labels are short and printable) and a hash of the
whole id. The index remembers, per key, where the file is and the size, mtime and sha256
the sensor last saw, so `CorpusResource.locate` can resolve mapped keys and the sensor
hashes only files whose size or mtime moved. It is one SQLite file: many readers,
one writer (the sensor).
"""

import hashlib
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from indx_assets.wiring.dagster_internals import INVALID_PARTITION_SUBSTRINGS

#: Longer keys are mapped: they are unreadable in the UI and overflow indexed columns of
#: the MySQL/Postgres storages.
MAX_KEY_LENGTH = 200
_PREFIX_LENGTH = 120
INDEX_FILE = "sources.sqlite"


def _valid(entry: str) -> bool:
    return (
        len(entry) <= MAX_KEY_LENGTH
        and entry.isprintable()
        and not any(s in entry for s in INVALID_PARTITION_SUBSTRINGS)
    )


def partition_key(entry: str) -> str:
    """The partition key (and source id) of a file's `{label}/{relative path}`; stable across runs."""
    if _valid(entry):
        return entry
    raw = entry.encode("utf-8", "surrogateescape")
    readable = "".join(c if c.isprintable() else "_" for c in entry[:_PREFIX_LENGTH]).replace("...", "._.")
    return f"{readable}~{hashlib.sha256(raw).hexdigest()[:16]}"


def readable_name(name: str) -> str:
    """A file name as text that can be stored and shown: bytes that are not UTF-8 (held as
    lone surrogates by `os.fsdecode`) become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@dataclass(frozen=True)
class SeenSource:
    """A file as the sensor last saw it."""

    key: str
    root: str
    relative: str
    size: int
    mtime_ns: int
    sha256: str

    @property
    def path(self) -> str:
        return os.path.join(self.root, self.relative)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    key TEXT PRIMARY KEY, root TEXT NOT NULL, relative BLOB NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL
)
"""


class SourceIndex:
    """The sensor's record of the corpus, keyed by partition key."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30)) as db:
            db.execute(_SCHEMA)
            with db:  # one transaction
                yield db

    @staticmethod
    def _row(row: tuple) -> SeenSource:
        key, root, relative, size, mtime_ns, sha = row
        return SeenSource(key, root, os.fsdecode(relative), size, mtime_ns, sha)

    def get(self, keys: Iterable[str]) -> dict[str, SeenSource]:
        """The recorded sources among `keys` (queried in chunks: SQLite caps bound variables)."""
        keys = list(keys)
        found: dict[str, SeenSource] = {}
        if not keys or not self.path.exists():
            return found
        with self._connect() as db:
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                marks = ",".join("?" * len(chunk))
                for row in db.execute(f"SELECT * FROM sources WHERE key IN ({marks})", chunk):
                    found[row[0]] = self._row(row)
        return found

    def put(self, sources: Iterable[SeenSource]) -> None:
        rows = [(s.key, s.root, os.fsencode(s.relative), s.size, s.mtime_ns, s.sha256) for s in sources]
        if rows:
            with self._connect() as db:
                db.executemany("INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?)", rows)

    def delete(self, keys: Iterable[str]) -> None:
        keys = [(k,) for k in keys]
        if keys and self.path.exists():
            with self._connect() as db:
                db.executemany("DELETE FROM sources WHERE key = ?", keys)
