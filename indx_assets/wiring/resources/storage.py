"""Per-partition Arrow/Parquet files for every asset, on a local path or an object store.

Layout (hive-style, one file per source): `{root}/{asset}/source={quoted source_id}/part-0.parquet`.
Query it directly: `pyarrow.dataset.dataset(f"{root}/chunk_map", partitioning="hive")`.
A source's raw bytes sit beside its `source_documents` row as `content.bin`, and a long text
(a page's, `write_text`) beside its row as `text-{sha256}.txt`, both written in steps: Parquet
builds a whole value in memory two to three times over while writing it, so a 256 MiB file cost
1.3 GB to store as a Parquet value.
"""

import hashlib
import mmap
import os
import tempfile
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO
from urllib.parse import quote
from uuid import uuid4

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import PrivateAttr
from upath import UPath

from indx_assets.pipeline.bounds import is_local
from indx_assets.pipeline.readers.text import utf8_text
from indx_assets.pipeline.stage_clock import CLOCK

FILE_NAME = "part-0.parquet"
#: The folder of temporary files under a local root (`StorageResource.scratch_dir`): no asset's name.
SCRATCH = ".scratch"
BLOB_NAME = "content.bin"
#: Texts stored beside a row (`write_text`) are named `text-{sha256}.txt`; the one being written, `text-.partial`.
TEXT_PREFIX = "text-"
_COPY_STEP = 1 << 20


def sha256_file(path: UPath) -> str:
    """The sha256 of a file, read in steps (memory stays flat whatever its size)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(_COPY_STEP), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_steps(partial: UPath, blocks: Iterable[bytes]) -> tuple[str, int]:
    """Write `blocks` one after another to the temporary file `partial` (the caller renames it
    into place once whole, so a reader never sees half a file); returns the sha256 and size of
    what was written. Memory stays that of one block whatever the size."""
    digest, size = hashlib.sha256(), 0
    try:
        with CLOCK.stage("write"), partial.open("wb") as dst:
            for block in blocks:
                digest.update(block)
                size += len(block)
                dst.write(block)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return digest.hexdigest(), size


#: A column holding a value longer than this is written without a dictionary (see `_dictionary_columns`).
_DICTIONARY_MAX_VALUE = 1 << 20


#: How every stored file is written. Snappy and no column statistics: a file holds one source,
#: which its hive path already selects, and the min/max of a text or bytes column copies whole
#: values into the footer. Half the size and under half the time of zstd with statistics. Data
#: pages of format 2.0: a long value is compressed without the extra whole copy format 1.0
#: makes of it (a 128 MiB page: 2.2x its size to write -> 1.2x).
_PARQUET_OPTIONS: dict[str, Any] = {"compression": "snappy", "write_statistics": False, "data_page_version": "2.0"}
#: The most rows in a row group of a table written whole (`StorageResource.write`); those written
#: in steps (`write_batches`) have a group per batch. A reader holds a row group at a time
#: (`row_group_batches`), so this bounds what reading any stored output holds.
ROW_GROUP_ROWS = 8192


def _longest(column: pa.Array | pa.ChunkedArray) -> int:
    """The longest value of a text or bytes column, in bytes (0 for any other column)."""
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
            or pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
        return 0
    return pc.max(pc.binary_length(column)).as_py() or 0


def _dictionary_columns(table: pa.Table | pa.RecordBatch) -> list[str]:
    """The columns worth a Parquet dictionary: all but those holding a value over 1 MiB. A
    dictionary of such values never pays (they are not repeated) and copies them while it is
    tried: a page of 128 MiB cost 3.1x its size to write with one, 2.2x without."""
    return [name for name, column in zip(table.schema.names, table.columns, strict=True)
            if _longest(column) <= _DICTIONARY_MAX_VALUE]


def row_group_batches(parquet: pq.ParquetFile, columns: list[str] | None = None, step: int = 4096) -> Iterator[pa.RecordBatch]:
    """The rows of `parquet` (its `columns`; all when None), `step` at a time, read one row group
    at a time, so what is held is one row group, which the writers bound: a `write_batches`
    batch, or `ROW_GROUP_ROWS` rows of a table written whole. Not `ParquetFile.iter_batches`,
    whose memory grows with every row group read when the rows hold a fixed-size list (vectors):
    over a 426 MB file of 60 row groups of 4,096 chunks, 551 MiB resident at its end against
    142 MiB this way (pyarrow 26)."""
    for group in range(parquet.metadata.num_row_groups):
        rows = parquet.read_row_group(group, columns=columns, use_threads=False)
        yield from rows.to_batches(max_chunksize=step)
        del rows  # before the next group is read: one group held at a time


class Spool:
    """Record batches written to a temporary local file (`StorageResource.spool`) and read back
    in steps: for a stored output whose schema metadata is known only once all its rows are made
    (a document's status, its fidelity), so its rows need not be held meanwhile. An Arrow IPC
    stream, not Parquet: a Parquet writer holds each row group's metadata until it closes (1,600
    row groups of 256 short chunks: 24 MiB resident, and 20 MiB more to write its footer), a
    stream nothing of the batches it has written.
    Uncompressed: a spool lives for one document's stage, and with LZ4 the cut of an 8 MiB HTML
    table rose by 3.45x the file resident, 1.85x without. `dictionary`: the columns worth a
    dictionary by the rule of `_dictionary_columns`, over all the rows spooled."""

    def __init__(self, schema: pa.Schema, directory: str | None = None) -> None:
        self._schema = schema
        self._file = tempfile.TemporaryFile(dir=directory)  # nameless: gone however the process ends
        self._writer: pa.ipc.RecordBatchStreamWriter | None = pa.ipc.new_stream(self._file, schema)
        self._too_long: set[str] = set()
        self.rows = 0

    def write(self, batch: pa.RecordBatch) -> None:
        assert self._writer is not None, "the spool is read: nothing more is written to it"
        self._too_long.update(set(batch.schema.names) - set(_dictionary_columns(batch)))
        self.rows += batch.num_rows
        self._writer.write_batch(batch)

    @property
    def dictionary(self) -> list[str]:
        return [name for name in self._schema.names if name not in self._too_long]

    def batches(self, step: int = 4096) -> Iterator[pa.RecordBatch]:
        """The rows spooled, in the batches written, each cut to `step` rows at most (the spool
        takes no more rows once read)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._file.seek(0)
        for batch in pa.ipc.open_stream(self._file):
            for at in range(0, batch.num_rows, step):
                yield batch.slice(at, step)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._file.close()


class StorageResource(dg.ConfigurableResource):
    """Reads and writes one Parquet file per (asset, source).

    Within a run, what the run wrote is read back from memory, up to `run_cache_mb`: each
    stage of a batch reads what the stage before it has just written, and reading a small
    Parquet file back costs more than the work on it. The files are written all the same. An
    output over `run_cache_item_mb` is not kept: reading a large file back costs little beside
    the work on it, and holding it would keep a long document's every chunk in memory through
    the stages after its own (a 1,000,000-row sheet's chunk map is about 200 MB).
    """

    root: str
    run_cache_mb: int = 256
    """Memory for the tables a run wrote (the oldest are dropped first); 0 turns it off."""
    run_cache_item_mb: int = 16
    """The largest table the run keeps in memory; a larger one is read back from its file."""

    _written: "OrderedDict[tuple[str, str], pa.Table] | None" = PrivateAttr(default=None)
    _written_bytes: int = PrivateAttr(default=0)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._written, self._written_bytes = OrderedDict(), 0

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self._written, self._written_bytes = None, 0

    def path(self, asset: str, source_id: str) -> UPath:
        return UPath(self.root) / asset / f"source={quote(source_id, safe='')}" / FILE_NAME

    def write(self, asset: str, source_id: str, table: pa.Table, beside: Collection[str] = ()) -> str:
        """Write atomically where the filesystem allows: a reader never sees half a file.

        The temporary file's name is unique to this write, so two writers of one source (two
        processes, or a retried run beside its predecessor) never rename each other's file.
        `beside`: the names of the texts stored beside the row (`write_text`) that it refers
        to; once the row is in place every other text beside it is removed (an earlier row's,
        or one a write killed before its row was in place left behind)."""
        with CLOCK.stage("write"):
            return self._write(asset, source_id, table, beside)

    def _write(self, asset: str, source_id: str, table: pa.Table, beside: Collection[str]) -> str:
        def write(f: BinaryIO) -> None:
            pq.write_table(table, f, **_PARQUET_OPTIONS, use_dictionary=_dictionary_columns(table), row_group_size=ROW_GROUP_ROWS)

        path = self._replace(asset, source_id, write)
        self._remove_texts(path.parent, keep=beside)
        self._remember(asset, source_id, table)
        return str(path)

    def scratch_dir(self) -> str | None:
        """Where a stage's temporary files go (`Spool`, and a reader's or chunker's through
        `scratch.scratch_in`): `.scratch` under a local root, beside what they become, so a long
        document's spools fill the data directory's disk, sized for it, not the system's
        temporary directory (often a small tmpfs); the system's temporary directory (None) for
        an object-store root. Each file there has no name (`tempfile.TemporaryFile`), so none is
        left however a process ends."""
        folder = UPath(self.root) / SCRATCH
        if not is_local(folder):
            return None
        folder.mkdir(parents=True, exist_ok=True)
        return folder.path

    @contextmanager
    def spool(self, schema: pa.Schema) -> Iterator[Spool]:
        """A `Spool` of rows of `schema` (in `scratch_dir`), removed when the block ends."""
        spooled = Spool(schema, self.scratch_dir())
        try:
            yield spooled
        finally:
            spooled.close()

    def write_batches(self, asset: str, source_id: str, schema: pa.Schema, batches: Iterable[pa.RecordBatch],
                      dictionary: Collection[str] | None = None, beside: Collection[str] = ()) -> str:
        """Write the rows of `batches` (of `schema`) as one file through one Parquet writer, a
        batch at a time, so a long document's output is never whole in memory; atomically, as
        `write` (a write killed half way leaves only its temporary file, never a half file read
        as whole). `dictionary`: the columns worth a dictionary (`_dictionary_columns`; all
        when None), decided before the first row. `beside`: as for `write`. Not kept for the
        run (see the class)."""
        def write(f: BinaryIO) -> None:
            # only the writing counts as "write": the work making each batch (an embedding) is its own stage's
            with CLOCK.stage("write"):
                writer = pq.ParquetWriter(f, schema, **_PARQUET_OPTIONS,
                                          use_dictionary=list(dictionary) if dictionary is not None else True)
            with writer:
                for batch in batches:
                    with CLOCK.stage("write"):
                        writer.write_batch(batch)

        self._forget(asset, source_id)
        path = self._replace(asset, source_id, write)
        with CLOCK.stage("write"):
            self._remove_texts(path.parent, keep=beside)
        return str(path)

    def _replace(self, asset: str, source_id: str, write: Callable[[BinaryIO], None]) -> UPath:
        """Put what `write` writes in place of the stored file of (asset, source): written to a
        temporary name unique to this write (two writers of one source, two processes or a
        retried run beside its predecessor, never rename each other's file) and renamed once whole."""
        path = self.path(asset, source_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{FILE_NAME}.{uuid4().hex}.partial")
        try:
            with partial.open("wb") as f:
                write(f)
            partial.rename(path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        return path

    @staticmethod
    def _remove_texts(folder: UPath, keep: Collection[str] = ()) -> None:
        for file in folder.iterdir():
            if file.name.startswith(TEXT_PREFIX) and file.name not in keep:
                file.unlink(missing_ok=True)

    def _remember(self, asset: str, source_id: str, table: pa.Table) -> None:
        if self._written is None:
            return
        key = (asset, source_id)
        self._forget(asset, source_id)
        budget = self.run_cache_mb * 2**20
        if table.nbytes > min(budget, self.run_cache_item_mb * 2**20):
            return
        self._written[key] = table
        self._written_bytes += table.nbytes
        while self._written_bytes > budget:
            self._written_bytes -= self._written.popitem(last=False)[1].nbytes

    def write_blob(self, asset: str, source_id: str, source: UPath) -> tuple[str, int]:
        """Copy the file `source` to the blob of (asset, source); returns the sha256 and size of
        what was copied. Copied in steps, so memory stays flat whatever the size, and
        atomically where the filesystem allows, like `write`."""
        path = self.path(asset, source_id).with_name(BLOB_NAME)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(BLOB_NAME + ".partial")
        with source.open("rb") as src:
            sha, size = _write_steps(partial, iter(lambda: src.read(_COPY_STEP), b""))
        partial.rename(path)
        return sha, size

    def write_text(self, asset: str, source_id: str, text: str) -> str:
        """Store `text` (as UTF-8) beside the row of (asset, source), encoded and written in steps
        of 1 MiB characters, so it costs no copy of itself; returns the file's name, which
        the row written next names (`write`'s `beside`). The name is the text's sha256: a
        re-written row naming the same text names the same file, and a text no row names is
        removed when the row is written."""
        folder = self.path(asset, source_id).parent
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f"{TEXT_PREFIX}.partial"
        steps = (text[at:at + _COPY_STEP].encode() for at in range(0, len(text), _COPY_STEP))
        sha, _ = _write_steps(partial, steps)
        name = f"{TEXT_PREFIX}{sha}.txt"
        partial.rename(folder / name)
        return name

    def read_text(self, asset: str, source_id: str, name: str) -> str:
        """A text stored beside the row of (asset, source) by `write_text`, decoded a step at a
        time (`utf8_text`): its bytes read whole and then decoded were twice the text at once."""
        with (self.path(asset, source_id).parent / name).open("rb") as f:
            return utf8_text(f)

    def read_blob(self, asset: str, source_id: str, limit: int = -1) -> bytes:
        """The blob of (asset, source), or its first `limit` bytes."""
        with self.open_blob(asset, source_id) as f:
            return f.read(limit)

    def open_blob(self, asset: str, source_id: str) -> BinaryIO:
        """The blob of (asset, source), opened for reading (as a binary file)."""
        return self.path(asset, source_id).with_name(BLOB_NAME).open("rb")  # type: ignore[no-any-return]

    @contextmanager
    def map_blob(self, asset: str, source_id: str) -> Iterator[mmap.mmap | None]:
        """A read-only map of the blob of (asset, source) while the block runs, when it is a
        non-empty local file (else None): its pages can be let go once read, the file's bytes
        are never all in memory at once."""
        with self.open_blob(asset, source_id) as f:
            try:
                fileno = f.fileno()
            except (AttributeError, OSError):  # not a local file
                yield None
                return
            if os.fstat(fileno).st_size == 0:
                yield None
                return
            with mmap.mmap(fileno, 0, access=mmap.ACCESS_READ) as mapped:
                yield mapped

    def read(self, asset: str, source_id: str) -> pa.Table:
        if self._written is not None and (asset, source_id) in self._written:
            return self._written[(asset, source_id)]
        path = self.path(asset, source_id)
        if not path.exists():
            raise FileNotFoundError(f"{asset} has no stored output for source {source_id!r} (looked in {path})")
        with path.open("rb") as f:
            return pq.ParquetFile(f).read()  # a small file reads twice as fast as via read_table

    def _forget(self, asset: str, source_id: str) -> None:
        if self._written is not None:
            dropped = self._written.pop((asset, source_id), None)
            self._written_bytes -= dropped.nbytes if dropped is not None else 0

    def read_batches(self, asset: str, source_id: str, columns: list[str] | None = None, step: int = 4096) -> Iterator[pa.RecordBatch]:
        """The `columns` of the stored output of (asset, source), `step` rows a batch, read from
        its file as they are wanted (from memory when the run holds it): a long document's
        output is never whole in memory. `columns`: all when None."""
        if self._written is not None and (asset, source_id) in self._written:
            table = self._written[(asset, source_id)]
            yield from (table if columns is None else table.select(columns)).to_batches(max_chunksize=step)
            return
        path = self.path(asset, source_id)
        if not path.exists():
            raise FileNotFoundError(f"{asset} has no stored output for source {source_id!r} (looked in {path})")
        # the caller closes this generator when it stops early (`contextlib.closing`), which
        # closes the file: an exception would otherwise keep it open with the traceback's frames
        with path.open("rb") as f:
            yield from row_group_batches(pq.ParquetFile(f), columns, step)

    def schema(self, asset: str, source_id: str) -> pa.Schema:
        """The schema (with its metadata) of the stored output of (asset, source), from its footer."""
        if self._written is not None and (asset, source_id) in self._written:
            return self._written[(asset, source_id)].schema
        with self.path(asset, source_id).open("rb") as f:
            return pq.ParquetFile(f).schema_arrow

    def rows(self, asset: str, source_id: str) -> int:
        """How many rows the stored output of (asset, source) has (from its footer)."""
        if self._written is not None and (asset, source_id) in self._written:
            return self._written[(asset, source_id)].num_rows
        with self.path(asset, source_id).open("rb") as f:
            return pq.ParquetFile(f).metadata.num_rows

    def delete(self, asset: str, source_id: str) -> bool:
        """Remove a source's stored output; True if there was one."""
        self._forget(asset, source_id)
        path = self.path(asset, source_id)
        blob = path.with_name(BLOB_NAME)
        if blob.exists():
            blob.unlink()
        if path.parent.exists():
            self._remove_texts(path.parent)
        if not path.exists():
            return False
        path.unlink()
        try:
            path.parent.rmdir()
        except OSError:
            pass
        return True
