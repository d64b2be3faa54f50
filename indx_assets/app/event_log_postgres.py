"""Dagster's PostgreSQL event log, keeping its connections open and indexing provenance.

`dagster-postgres` opens a new connection for every statement (`NullPool`: PostgreSQL forks
a backend for each), and an ingest run makes thousands of them: its steps read every
partition's latest records and write five materializations per document. Its tag index keeps
only the data version, so `provenance.latest_records` has to read each record whole (about a
millisecond to unpack, per partition and stage). This subclass keeps a small pool of
connections per process, tested before each use (a pooled connection outlives a PostgreSQL
restart only as a dead socket, and must not fail the statement), indexes every
provenance tag as indx's SQLite event log does (`event_log.ProvenanceIndex`), writes the
materializations a run plans in one statement (`store_event_batch`), and has a step
waiting for a pool slot look again every half second. Tables and
schema are dagster-postgres' own: an instance can switch between the two classes at any time.

Configured in a `dagster.yaml` (`deploy/local-cluster/dagster.yaml`) beside dagster-postgres'
run and schedule storage::

    event_log_storage:
      module: indx_assets.event_log
      class: PooledPostgresEventLogStorage
      config:
        postgres_url: { env: DAGSTER_PG_URL }
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import dagster as dg
import sqlalchemy as sa
from dagster_postgres import PostgresEventLogStorage

from indx_assets.app.event_log import ProvenanceIndex
from indx_assets.app.postgres_pool import PooledEngine

#: Seconds between a blocked step's checks for a pool slot. Dagster backs off to 15 s (1.1^n
#: after n checks), so a run launched ahead to wait for the `embedder` slot found it freed
#: only seconds later (a median 8.8 s idle between steps on the local cluster): a check is one
#: query on a pooled connection. Half a second, with the Celery loop looking every quarter
#: second (`executors.CELERY_POLL_S`).
SLOT_RECHECK_S = 0.5


class PooledPostgresEventLogStorage(PooledEngine, ProvenanceIndex, PostgresEventLogStorage):
    """`PostgresEventLogStorage` with a pool of connections per process, checked before use
    (the rule is `postgres_pool.PooledEngine`'s)."""

    @contextmanager
    def _connect(self) -> Iterator[sa.Connection]:  # type: ignore[override]
        self._own_engine()
        with super()._connect() as conn:
            yield conn

    def claim_concurrency_slot(self, concurrency_key: str, run_id: str, step_key: str,
                               priority: int | None = None) -> Any:
        """Dagster's claim; a blocked step is told to look again in `SLOT_RECHECK_S`."""
        status = super().claim_concurrency_slot(concurrency_key, run_id, step_key, priority)
        if status.is_claimed or status.sleep_interval is not None:
            return status
        return status.with_sleep_interval(SLOT_RECHECK_S)

    def store_event_batch(self, events: Sequence[dg.EventLogEntry]) -> None:
        """Dagster's, except for one run's planned materializations, which a run announces as it
        is created, one per asset and partition (500 for 100 documents; see `runner.
        daemon_environment`). dagster-postgres stores such a batch one event at a time: an
        insert, a NOTIFY and an asset-key update each, each over a connection tested before use,
        which took 60% of the local cluster's daemon's CPU. Here, one insert and one index
        transaction, which leave the same rows (without the NOTIFYs, which dagster-postgres keeps
        for older versions' event watchers and its own batch path for materializations omits)."""
        planned = dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
        if len({e.run_id for e in events}) != 1 or not all(
                e.dagster_event_type == planned and e.dagster_event and e.dagster_event.asset_key for e in events):
            super().store_event_batch(events)
            return
        insert = self.prepare_insert_event_batch(events)
        with self._connect() as conn:
            ids = [int(row[0]) for row in conn.execute(insert.returning(insert.table.c.id)).fetchall()]
        with self.index_transaction() as conn:
            self._index_asset_events(conn, events, ids)
