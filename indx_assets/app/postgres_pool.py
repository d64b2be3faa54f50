"""dagster-postgres' storages keeping their connections open: the pool rule, and the run and
schedule storages that follow it (the event log's is `event_log_postgres`).

dagster-postgres opens a new connection for every statement (`NullPool`), and PostgreSQL
forks a backend for each: on the local cluster the daemon's queue, sensor and monitoring loops,
the webserver and every run process started about 13 sessions a second with nothing to do,
and PostgreSQL spent about 11 CPU-seconds a minute forking and ending them (measured with
`cluster.cpu_seconds`). The rule, for every storage here:

- each process keeps a small pool (`POOL_SIZE`, more under load and closed after use);
- a pooled connection is tested before each use (it outlives a PostgreSQL restart only as a
  dead socket, and must not fail the statement);
- a forked child (a Celery worker's, a run's process forked from the code server's fork
  server) never uses its parent's sockets: it forgets them, unclosed, and opens its own;
- `dispose` closes the pool (the code server builds an instance per sensor tick).

Tables and schema are dagster-postgres' own: an instance can switch between these classes and
dagster-postgres' at any time. Configured in a `dagster.yaml` (`deploy/local-cluster/dagster.yaml`)::

    run_storage:
      module: indx_assets.app.postgres_pool
      class: PooledPostgresRunStorage
      config:
        postgres_url: { env: DAGSTER_PG_URL }
"""

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Self

import sqlalchemy as sa
from dagster_postgres import PostgresRunStorage, PostgresScheduleStorage
from dagster_postgres.utils import create_pg_engine, get_token_provider_from_config, pg_url_from_config

#: Connections a process keeps open; more are opened (and closed after use) under load.
POOL_SIZE = 2
POOL_OVERFLOW = 8


class PooledEngine:
    """The pool rule for a dagster-postgres storage, mixed in before the storage's class: the
    storage is built as dagster-postgres builds it, then its engine is replaced by a pooled one
    (`_pool_engine`); each connection is taken after `_own_engine`, which the storage's own
    connect method calls; `dispose` closes the pool."""

    _engine: sa.Engine
    postgres_url: str

    def __init__(self, postgres_url: str, should_autocreate_tables: bool = True, inst_data: Any = None,
                 token_provider: Any = None) -> None:
        super().__init__(postgres_url, should_autocreate_tables, inst_data, token_provider)  # type: ignore[call-arg]
        self._pool_engine(token_provider)

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Mapping[str, Any]) -> Self:
        return cls(inst_data=inst_data, postgres_url=pg_url_from_config(config_value),
                   should_autocreate_tables=config_value.get("should_autocreate_tables", True),
                   token_provider=get_token_provider_from_config(config_value))

    def _pool_engine(self, token_provider: Any) -> None:
        self._engine.dispose()
        self._engine = create_pg_engine(
            self.postgres_url, token_provider, isolation_level="AUTOCOMMIT",
            pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW, pool_pre_ping=True,
        )
        self._engine_pid = os.getpid()

    def _own_engine(self) -> None:
        """Forget a parent's pooled sockets in a forked child (the pid is set before the pool
        exists, so a storage made without `_pool_engine` is left alone)."""
        if self.__dict__.setdefault("_engine_pid", os.getpid()) != os.getpid():
            self._engine.dispose(close=False)
            self._engine_pid = os.getpid()

    def dispose(self) -> None:
        super().dispose()  # type: ignore[misc]
        self._engine.dispose()


class PooledPostgresRunStorage(PooledEngine, PostgresRunStorage):
    """`PostgresRunStorage` with a pool of connections per process, checked before use."""

    @contextmanager
    def connect(self) -> Iterator[sa.Connection]:  # type: ignore[override]
        self._own_engine()
        with super().connect() as conn:
            yield conn


class PooledPostgresScheduleStorage(PooledEngine, PostgresScheduleStorage):
    """`PostgresScheduleStorage` (sensor and schedule ticks, cursors) with a pool of connections
    per process, checked before use."""

    @contextmanager
    def connect(self) -> Iterator[sa.Connection]:  # type: ignore[override]
        self._own_engine()
        with super().connect() as conn:
            yield conn
