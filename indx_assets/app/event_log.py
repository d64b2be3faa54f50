"""Dagster's SQLite event log, keeping its connections open and writing batches at once.

Dagster's `SqliteEventLogStorage` builds a fresh SQLAlchemy engine for every statement batch
and disposes of it afterwards (`NullPool`), so each event pays for opening two database files
(the run's shard and the cross-run index) and for compiling its statements anew, and it writes
an event batch one event at a time: about 8 ms per event on this project's machines, and an
ingest run writes five materializations per document. This subclass keeps one pooled engine
per shard and writes a batch of one run's asset events in one transaction per shard. Files,
schema and locking are Dagster's own, so an instance can switch between the two classes at
any time.

It also indexes every provenance tag of an asset event (code version, input data versions),
where Dagster indexes only the data version, so `provenance.latest_records` reads what
staleness needs from the tag index in one query instead of unpacking every stored event
(`indx status` on 10,000 sources: 50,000 events).

Configured in `$INDX_HOME/dagster/dagster.yaml` (see `runner.DEFAULT_DAGSTER_YAML`); with
no `base_dir` it uses Dagster's own place for the event log, `$DAGSTER_HOME/history/runs`::

    event_log_storage:
      module: indx_assets.app.event_log
      class: PooledSqliteEventLogStorage
"""

import os
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import dagster as dg
import sqlalchemy as sa
from dagster._core.events import ASSET_EVENTS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SqliteEventLogStorage,
)
from dagster._core.storage.sql import create_engine
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._serdes import ConfigurableClassData

from indx_assets.wiring.dagster_internals import CODE_VERSION_TAG, INPUT_DATA_VERSION_TAG_PREFIX

#: Run shards whose engines stay open besides the index's; a long-lived webserver reads many
#: runs, and an ingest run writes to one, so the least recently used ones are closed.
OPEN_RUN_SHARDS = 8


class ProvenanceIndex:
    """What indx's event logs (SQLite and PostgreSQL) add to Dagster's SQL storage: every
    provenance tag of an asset event in the tag index, so `provenance.latest_records` reads
    staleness from one query, and the schema checks Dagster makes before every asset event
    answered from memory once true. Mixed in before the Dagster storage class."""

    def get_asset_tags_to_index(self, tag_keys: set[str]) -> set[str]:
        """Dagster's indexed tags, and the code version and input data versions besides."""
        return super().get_asset_tags_to_index(tag_keys) | {  # type: ignore[misc]
            key for key in tag_keys if key == CODE_VERSION_TAG or key.startswith(INPUT_DATA_VERSION_TAG_PREFIX)
        }

    def _index_asset_events(self, conn: sa.Connection, events: Sequence[EventLogEntry], ids: Sequence[int]) -> None:
        """What the index holds of these stored asset events, in one transaction: their
        indexed tags, and the asset-key rows as storing them one by one would leave them: the
        last event of each kind per asset decides each row's columns, applied in batch order."""
        self._store_asset_event_tags(conn, events, ids)  # type: ignore[attr-defined]
        latest = {(e.dagster_event.asset_key, e.dagster_event_type): n for n, e in enumerate(events)}  # type: ignore[union-attr]
        for n in sorted(latest.values()):
            self._store_asset_event(conn, events[n], ids[n])  # type: ignore[attr-defined]

    # Dagster checks the schema before every asset event (whether the tags table exists, which
    # columns the asset-key table has), opening a connection for it. Tables and columns are
    # only ever added (by `dagster instance migrate`), so a "yes" stays true.

    def has_table(self, table_name: str) -> bool:
        seen = self.__dict__.setdefault("_schema_seen", set())
        if table_name not in seen and super().has_table(table_name):  # type: ignore[misc]
            seen.add(table_name)
        return table_name in seen

    def _has_asset_key_col_on_connection(self, conn: sa.Connection, column_name: str) -> bool:
        seen, key = self.__dict__.setdefault("_schema_seen", set()), f"asset_keys.{column_name}"
        if key not in seen and super()._has_asset_key_col_on_connection(conn, column_name):  # type: ignore[misc]
            seen.add(key)
        return key in seen


class PooledSqliteEventLogStorage(ProvenanceIndex, SqliteEventLogStorage):
    """`SqliteEventLogStorage` with one connection pool per shard file, reused across events."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engines: OrderedDict[str, sa.Engine] = OrderedDict()
        self._engines_pid = os.getpid()
        super().__init__(base_dir, inst_data)

    @classmethod
    def config_type(cls) -> dict[str, dg.Field]:
        return {"base_dir": dg.Field(dg.StringSource, is_required=False)}

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: dict[str, str]
    ) -> "PooledSqliteEventLogStorage":
        base_dir = config_value.get("base_dir")
        if not base_dir:
            home = os.environ.get("DAGSTER_HOME")
            if not home:
                raise dg.DagsterInvariantViolationError(
                    "PooledSqliteEventLogStorage needs `base_dir` in its config or DAGSTER_HOME in the environment"
                )
            base_dir = os.path.join(home, "history", "runs")
        return cls(base_dir, inst_data=inst_data)

    def _engine(self, shard: str) -> sa.Engine:
        """The shard's engine (caller holds `_db_lock`)."""
        if self._engines_pid != os.getpid():
            # A forked child must not share its parent's open files: forget them unclosed.
            for engine in self._engines.values():
                engine.dispose(close=False)
            self._engines.clear()
            self._engines_pid = os.getpid()
        engine = self._engines.get(shard)
        if engine is None:
            # One connection stays open per shard: `_db_lock` lets one statement batch at a
            # time through; Dagster's schema check at first use briefly needs a second.
            engine = create_engine(
                self.conn_string_for_shard(shard), pool_size=1, max_overflow=2,
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
            )
            self._engines[shard] = engine
            run_shards = [s for s in self._engines if s != INDEX_SHARD_NAME]
            for stale in run_shards[:-OPEN_RUN_SHARDS]:
                self._engines.pop(stale).dispose()
        else:
            self._engines.move_to_end(shard)
        if shard not in self._initialized_dbs:
            self._initdb(engine)
            self._initialized_dbs.add(shard)
        return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator[sa.Connection]:
        with self._db_lock:
            with self._engine(shard).connect() as conn, conn.begin():
                yield conn

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        """Store one run's asset events in one transaction per shard: the run's shard, then the
        cross-run index (each event, its indexed tags, the asset-key rows). Any other batch goes
        event by event."""
        if len({e.run_id for e in events}) != 1 or not all(
            e.dagster_event is not None and e.dagster_event_type in ASSET_EVENTS and e.dagster_event.asset_key
            for e in events
        ):
            super().store_event_batch(events)
            return
        rows = [self._event_to_row(event) for event in events]
        with self.run_connection(events[0].run_id) as conn:
            conn.execute(SqlEventLogStorageTable.insert(), rows)
        with self.index_transaction() as conn:
            ids = [conn.execute(SqlEventLogStorageTable.insert(), row).inserted_primary_key[0] for row in rows]
            self._index_asset_events(conn, events, ids)

    def _close_engines(self) -> None:
        with self._db_lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()

    def wipe(self) -> None:
        # Wiping unlinks the run shards: an open connection would go on writing to the
        # deleted file.
        self._close_engines()
        super().wipe()

    def dispose(self) -> None:
        super().dispose()
        self._close_engines()
