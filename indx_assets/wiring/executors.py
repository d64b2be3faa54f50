"""Which executor runs the steps of the runs Dagster launches: `INDX_EXECUTOR`.

- unset or `default`: Dagster's default (steps in subprocesses of the run's process);
- `in_process`: every step in the run's process;
- `celery`: steps go to Celery workers (`pip install 'indx-assets[scale]'`), over the broker
  in `CELERY_BROKER_URL` with results in `CELERY_BACKEND_URL` (default `rpc://`); the workers
  are `dagster-celery worker start -A indx_assets.app.celery_worker` processes (deploy/local-cluster;
  `-A dagster_celery.app` works too, with cold workers);
- `dask`: each step is a task of the Dask scheduler at `DASK_SCHEDULER_ADDRESS`
  (`pip install 'indx-assets[dask]'`; `wiring/dask_steps.py`), run by `dask worker
  --preload indx_assets.app.dask_worker` processes, warmed as they start.

It applies to runs launched by the daemon, the webserver or `dagster job launch`; `indx ingest`
runs its work in its own process whatever this says. Each source's rows are still written by
one writer at a time: every commit to the LanceDB table holds its writer lock
(`LanceDBResource.writing`), and the `embedder` pool bounds how many ingest steps run at once
across every worker (the run's execution loop takes a slot before it hands a step to Celery or
Dask).
"""

import importlib.util

import dagster as dg

from indx_assets.wiring.settings import EXECUTOR_ENV, EXECUTORS, ExecutorError

#: Seconds between two looks of a run's Celery loop at its steps' results and at the pool
#: (dagster-celery's own is 1 s). The `embedder` slot is freed only when the loop has seen its
#: step's result, and the next run's step is handed to a worker only when its loop has claimed
#: the slot: each second here was up to a second of idle slot between two steps. A look is a
#: Redis read per step in flight.
CELERY_POLL_S = 0.25


def build_executor(name: str) -> dg.ExecutorDefinition | None:
    """The executor `INDX_EXECUTOR` names (`settings.executor_from_env` checked the name); None
    leaves Dagster's default."""
    if name == "default":
        return None
    if name == "in_process":
        return dg.in_process_executor
    if name == "celery":
        try:
            from dagster_celery import celery_executor, core_execution_loop
        except ImportError as exc:
            raise ExecutorError(f"{EXECUTOR_ENV}=celery needs dagster-celery: pip install 'indx-assets[scale]'") from exc
        core_execution_loop.TICK_SECONDS = CELERY_POLL_S  # read by the loop at each turn
        return celery_executor.configured(
            {"broker": {"env": "CELERY_BROKER_URL"}, "backend": {"env": "CELERY_BACKEND_URL"}}, name="celery"
        )
    if name == "dask":
        # looked for, not imported: only a run's process connects to the scheduler with it
        if importlib.util.find_spec("distributed") is None:
            raise ExecutorError(f"{EXECUTOR_ENV}=dask needs Dask's distributed: pip install 'indx-assets[dask]'")
        from indx_assets.wiring.dask_steps import dask_executor

        return dask_executor.configured({"address": {"env": "DASK_SCHEDULER_ADDRESS"}}, name="dask")
    raise ExecutorError(f"{EXECUTOR_ENV}={name!r} is not an executor; use one of: {', '.join(EXECUTORS)}")
