"""The event-log storages' stable address, named by `dagster.yaml` files (`module:
indx_assets.event_log`): the ones `indx` wrote into existing instances and `deploy/`.

The storages live in `indx_assets.app.event_log` (SQLite) and `indx_assets.app.event_log_postgres`
(PostgreSQL, which needs `pip install 'indx-assets[scale]'` and so is imported only when named);
keeping this name means an instance written by any version of `indx` loads with any other.
"""

from typing import Any

from indx_assets.app.event_log import PooledSqliteEventLogStorage

__all__ = ["PooledPostgresEventLogStorage", "PooledSqliteEventLogStorage"]


def __getattr__(name: str) -> Any:
    if name == "PooledPostgresEventLogStorage":
        from indx_assets.app.event_log_postgres import PooledPostgresEventLogStorage

        return PooledPostgresEventLogStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
