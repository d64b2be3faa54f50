"""The LanceDB chunk table: one upsert per source, full-text and scalar indexes, search.

Each source is written by one `merge_insert` keyed on the chunk id (declared the table's
primary key) that updates changed chunks, inserts new ones and deletes the source's chunks
that no longer exist, all in one commit: readers never see a half-replaced document. The one
exception is a long document (more rows than `MERGE_STEP`): its first ingest is appended in
steps, its re-ingest merged in steps then cleared of its vanished chunks
(`LanceDBResource._merge_in_steps`), as a write holds what it writes.

Every write goes through `LanceDBResource.writing`: one process writes the table at a time, so
several workers may ingest at once (a pool of more than one slot) and each source's rows are
still replaced by one writer at a time.
"""

import fcntl
import itertools
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
from pydantic import PrivateAttr

from indx_assets.pipeline.embedders.registry import check_space, same_space
from indx_assets.pipeline.schema import CHUNK_ROWS, SearchMode, space_of

__all__ = ["HIT_COLUMNS", "LanceDBResource", "SearchMode", "sql_string"]
#: What a search hit carries: identity, place, text and score.
HIT_COLUMNS = ["id", "document_id", "source_id", "locator", "chunk_type", "parent_ref", "page", "bbox",
               "bbox_reason", "chunker", "text", "start_offset", "end_offset", "metadata"]


#: A long document's rows are written this many at a time: appended on its first ingest,
#: merged on a re-ingest (`upsert_stream`).
MERGE_STEP = 8192
#: Rows deleted by id in one commit (the ids are a SQL `IN` list).
DELETE_STEP = 1000
#: MiB the full-text index build may hold before it writes a partition out (LanceDB's
#: `memory_limit`; its default, 2 GiB a worker, held every posting list of a long document's
#: first ingest: on ledger chunks of 10 rows, the build grew 53 MiB for 10,000 chunks and 278
#: for 100,000; with 16 MiB, 52 and 98-107, the index in more partitions).
FTS_BUILD_MIB = 16
#: The writer lock's file in a local database's folder (see `LanceDBResource.writing`).
WRITER_LOCK_FILE = ".indx-writer.lock"

# Writer locks this thread holds, by file, with how often each was entered: a write that builds
# the indexes (`ensure_indexes`) inside another's must not lock itself out, since flock locks on
# two descriptors of one file exclude each other even within one process. Per thread: another
# thread's write opens its own descriptor and waits, as another process's does.
_held = threading.local()


def _steps(rows: Iterable[pa.RecordBatch], size: int) -> Iterator[pa.Table]:
    """`rows` re-cut into tables of `size` rows (the last, what is left)."""
    held, count = [], 0
    for batch in rows:
        while batch.num_rows:
            take = batch.slice(0, size - count)
            held.append(take)
            count += take.num_rows
            batch = batch.slice(take.num_rows)
            if count == size:
                yield pa.Table.from_batches(held)
                held, count = [], 0
    if held:
        yield pa.Table.from_batches(held)


def utc_stamp() -> str:
    """The time now as a tag's suffix (`20261201T210000Z`)."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def sql_string(value: str) -> str:
    """A SQL string literal (LanceDB filters are SQL)."""
    return "'" + value.replace("'", "''") + "'"


class LanceDBResource(dg.ConfigurableResource):
    """The `chunks` table in a LanceDB database (a local directory or an object-store URI)."""

    uri: str
    table_name: str = "chunks"
    _db: Any = PrivateAttr(default=None)

    @property
    def db(self) -> Any:
        if self._db is None:
            import lancedb

            self._db = lancedb.connect(self.uri)
        return self._db

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the database's writer lock: one process writes the table at a time, whatever
        runs hold which sources (two backfills over the same partitions, on two workers) and
        however many ingest steps run at once; each waits for the one before (a commit or an
        index build takes seconds, the reading and embedding around it do not wait).
        Re-entrant within a thread. A `flock` on a file in a local database's folder, which
        the kernel drops when its process ends however it ends; an object store has no such
        file: there, one ingest step at a time (the pool's one slot) keeps one writer."""
        if "://" in self.uri:
            yield
            return
        folder = Path(self.uri).resolve()
        path = folder / WRITER_LOCK_FILE
        depths: dict[Path, int] = _held.__dict__.setdefault("depths", {})
        if depths.get(path):
            depths[path] += 1
            try:
                yield
            finally:
                depths[path] -= 1
            return
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits for the writer before
            depths[path] = 1
            try:
                yield
            finally:
                depths[path] = 0
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def existing_table(self) -> Any | None:
        """The chunk table, or None before the first write (a local database that does not exist
        yet is not connected to: connecting creates its folder, and reading creates nothing)."""
        if "://" not in self.uri and not Path(self.uri).exists():
            return None
        try:
            return self.db.open_table(self.table_name)
        except ValueError:  # LanceDB's "table not found"
            return None

    def table(self, schema: pa.Schema = CHUNK_ROWS) -> Any:
        """The chunk table, created on first use (with `schema`: its vector dimension and space)."""
        table = self.existing_table()
        if table is not None:
            return table
        try:
            return self.db.create_table(self.table_name, schema=schema)
        except ValueError:  # another process created it between our check and create
            return self.db.open_table(self.table_name)

    def space(self) -> str | None:
        """The vector space the table's vectors are in (None: no table, or one from before
        spaces were recorded, which MiniLM wrote)."""
        table = self.existing_table()
        return None if table is None else space_of(table.schema)

    def check_query_space(self, space: str) -> None:
        """Refuse (`SpaceMismatch`) queries embedded in another space than the table's."""
        if self.existing_table() is not None:
            check_space(self.space(), space)

    def tag_current(self, name: str) -> int | None:
        """Tag the table's current version `name` (None if no table yet): `indx restore` goes back to it."""
        table = self.existing_table()
        if table is None:
            return None
        table.tags.create(name, table.version)
        return table.version

    def table_for(self, schema: pa.Schema) -> Any:
        """The chunk table for rows of `schema`. A table of another vector space (the embedder
        changed) is tagged `before-embedder-<UTC time>` and re-created empty with `schema` in a
        new version of itself, so `indx restore` can go back; the backfill that re-embeds every
        source then fills it."""
        table = self.existing_table()
        recorded, space = (space_of(table.schema) if table is not None else None), space_of(schema)
        if table is None or space is None or same_space(recorded, space):
            return self.table(schema)
        self.tag_current(f"before-embedder-{utc_stamp()}")
        return self.db.create_table(self.table_name, schema=schema, mode="overwrite")

    def ensure_indexes(self) -> None:
        """Full-text index on text and scalar indexes on source_id and id, if missing (see
        `_ensure_indexes`), under the writer lock."""
        with self.writing():
            self._ensure_indexes()

    def _ensure_indexes(self) -> None:
        """Full-text index on text and scalar indexes on source_id and id, if missing (indexes
        cover rows written since on `optimize()`; unindexed rows are still searched, just
        slower). The id index serves the upsert's join on the key and search's step from a
        sentence to its chunk. The full-text build holds at most `FTS_BUILD_MIB` of postings
        at a time, so building it over a long document does not hold all of its words."""
        from lancedb.index import FTS, BTree

        table = self.table()
        present = {tuple(i.columns) for i in table.list_indices()}
        if table.count_rows() == 0:
            return
        if ("text",) not in present:
            table.create_index("text", config=FTS(with_position=True, memory_limit=FTS_BUILD_MIB))
        for column in ("source_id", "id"):
            if (column,) not in present:
                table.create_index(column, config=BTree())

    def upsert_source(self, source_id: str, rows: pa.Table) -> dict[str, int]:
        """Make the table hold exactly `rows` for `source_id`, in one commit."""
        return self.upsert_sources({source_id: rows})

    def upsert_sources(self, rows_by_source: Mapping[str, pa.Table]) -> dict[str, int]:
        """Make the table hold exactly the given rows for each given source, in one commit.
        The rows' schema (`schema.chunk_rows`) says their vectors' dimension and space."""
        tables = list(rows_by_source.values())
        schema = tables[0].schema if tables else CHUNK_ROWS
        rows = pa.concat_tables([r.select(schema.names).cast(schema) for r in tables])
        return self.upsert_stream(list(rows_by_source), schema, pa.RecordBatchReader.from_batches(schema, rows.to_batches()))

    def upsert_stream(self, source_ids: Sequence[str], schema: pa.Schema, rows: pa.RecordBatchReader,
                      merge_step: int | None = None) -> dict[str, int]:
        """`_upsert_stream` under the writer lock."""
        with self.writing():
            return self._upsert_stream(source_ids, schema, rows, merge_step)

    def _upsert_stream(self, source_ids: Sequence[str], schema: pa.Schema, rows: pa.RecordBatchReader,
                       merge_step: int | None = None) -> dict[str, int]:
        """Make the table hold exactly `rows` (of `schema`, `schema.chunk_rows`) for the given
        sources, in one commit; the rows are read batch by batch as the commit takes them, so
        a long document's rows are never all in memory.

        One `merge_insert` keyed on the chunk id updates changed chunks, inserts new ones and
        deletes the listed sources' chunks that are no longer there; a batch of sources costs
        one table version instead of one each. A single source of more than `merge_step` rows
        (`MERGE_STEP` when None; a long document) is written `merge_step` rows a commit instead:
        appended on its first ingest, merged on a re-ingest as `_merge_in_steps` says: a write
        holds what it writes. A run killed between two steps leaves some of the document's
        chunks, each once; the next run, which finds the stage not done, finds them there and
        merges, after which the table holds exactly `rows`.
        """
        merge_step = MERGE_STEP if merge_step is None else merge_step
        table = self.table_for(schema)
        scope = f"source_id IN ({', '.join(sql_string(s) for s in source_ids)})"
        batches = (batch for batch in rows if batch.num_rows)
        first = next(batches, None)
        if first is None:
            deleted = table.count_rows(scope)
            if deleted:
                table.delete(scope)
            return {"inserted": 0, "updated": 0, "deleted": deleted, "version": table.version}
        head, count = [first], first.num_rows
        for batch in batches:  # up to a step's rows, to tell a long document
            head.append(batch)
            count += batch.num_rows
            if count > merge_step:
                break
        rest = itertools.chain(head, batches)
        if count > merge_step and len(source_ids) == 1:  # a batch of documents keeps its one commit
            if table.count_rows(scope) == 0:
                # a long document's first ingest: nothing to match or delete, and an append holds
                # under half what a merge does (at 19,000 rows of a sheet, 120 MiB against 270),
                # in steps (one `add` of 103,200 rows grew 108 MiB, steps of 8,192 67 MiB). Unlike
                # a merge, an append is not checked against a concurrent writer of the same ids:
                # it relies on one writer per source (DESIGN §5), which `writing` keeps.
                for part in _steps(rest, merge_step):
                    table.add(part, on_bad_vectors="null")
                return {"inserted": table.count_rows(scope), "updated": 0, "deleted": 0, "version": table.version}
            return self._merge_in_steps(table, scope, schema, rest, merge_step)
        # Always a merge, a first ingest too: keyed on the declared primary key, a merge that
        # races another writer's commit of the same ids is retried against it, where two
        # appends would both land (two processes that each counted no rows yet).
        result = (
            table.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(scope)
            # image chunks have no vector: null is their honest value, not a bad vector
            .execute(pa.RecordBatchReader.from_batches(schema, rest), on_bad_vectors="null")
        )
        return {
            "inserted": result.num_inserted_rows,
            "updated": result.num_updated_rows,
            "deleted": result.num_deleted_rows,
            "version": result.version,
        }

    @staticmethod
    def _merge_in_steps(table: Any, scope: str, schema: pa.Schema, rows: Iterable[pa.RecordBatch], step: int) -> dict[str, int]:
        """Make the table hold exactly `rows` for the sources `scope` selects, `step` rows a
        merge: each updates its chunks and inserts its new ones (keyed on the chunk id, so a chunk
        never has two rows); then the sources' rows whose ids are not among `rows` are deleted,
        `DELETE_STEP` ids a commit. Not one commit: a reader may see the document half replaced
        meanwhile, and a run killed part way leaves some chunks old and some gone ones still
        there, but never a chunk twice; the next run, which finds the stage not done, merges
        and deletes again, after which rows = distinct ids = the chunk map's ids."""
        inserted = updated = 0
        ids: set[str] = set()
        for part in _steps(rows, step):
            ids.update(part.column("id").to_pylist())
            result = (table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
                      .execute(part, on_bad_vectors="null"))
            inserted += result.num_inserted_rows
            updated += result.num_updated_rows
        present = table.search().where(scope).select(["id"]).limit(None).to_arrow().column("id").to_pylist()
        gone = [i for i in present if i not in ids]
        for at in range(0, len(gone), DELETE_STEP):
            table.delete(f"id IN ({', '.join(map(sql_string, gone[at:at + DELETE_STEP]))})")
        return {"inserted": inserted, "updated": updated, "deleted": len(gone), "version": table.version}

    def delete_sources(self, source_ids: Sequence[str], per_commit: int = 500) -> None:
        """Delete every row of these sources, `per_commit` sources a commit."""
        table = self.existing_table()
        if table is None:
            return
        with self.writing():
            for i in range(0, len(source_ids), per_commit):
                table.delete(f"source_id IN ({', '.join(map(sql_string, source_ids[i:i + per_commit]))})")

    def source_rows(self, source_ids: Sequence[str], columns: Sequence[str] = HIT_COLUMNS) -> list[dict[str, Any]]:
        """Every row of these sources (through the scalar index on `source_id`)."""
        table = self.existing_table()
        if table is None or not source_ids:
            return []
        where = f"source_id IN ({', '.join(map(sql_string, source_ids))})"
        return table.search().where(where).select(list(columns)).limit(None).to_list()

    def rows_by_id(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The rows with these ids (hit columns), in one query (through the scalar index on `id`)."""
        table = self.existing_table()
        if table is None or not ids:
            return []
        where = f"id IN ({', '.join(sql_string(i) for i in dict.fromkeys(ids))})"
        return table.search().where(where).select(HIT_COLUMNS).limit(None).to_list()

    def search(self, query: str, *, k: int = 5, mode: SearchMode = "hybrid", vector: Any = None,
               where: str | None = None) -> list[dict[str, Any]]:
        """Ranked hits with identity, page, bbox, text and `score` (higher is better), among the
        rows `where` (SQL) admits, filtered before ranking so `k` hits come back when `k` match."""
        table = self.table()
        if mode == "fts":
            builder = table.search(query, query_type="fts")
        elif mode == "vector":
            builder = table.search(vector, vector_column_name="vector").distance_type("cosine")
        else:
            builder = (
                table.search(query_type="hybrid", vector_column_name="vector")
                .vector(vector).text(query).distance_type("cosine")
            )
        if where:
            builder = builder.where(where, prefilter=True)
        score_key = {"fts": "_score", "vector": "_distance", "hybrid": "_relevance_score"}[mode]
        hits = []
        for row in builder.limit(k).to_list():
            raw = row.get(score_key)
            hit = {column: row[column] for column in HIT_COLUMNS}
            # cosine distance on unit vectors: similarity = 1 - distance, so higher is better in every mode
            hit["score"] = (1.0 - raw) if mode == "vector" and raw is not None else raw
            hits.append(hit)
        return hits
