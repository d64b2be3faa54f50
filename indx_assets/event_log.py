"""The event-log storage's stable address, named by `dagster.yaml` files (`module:
indx_assets.event_log`): the ones `indx` wrote into existing instances and `deploy/`.

The storage lives in `indx_assets.app.event_log`; keeping this name means an instance written
by any version of `indx` loads with any other.
"""

from indx_assets.app.event_log import PooledSqliteEventLogStorage

__all__ = ["PooledSqliteEventLogStorage"]
