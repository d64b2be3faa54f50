"""The Celery app of indx's workers: dagster-celery's app and tasks, with every worker process
warmed as it starts (`pip install 'indx-assets[scale]'`).

    dagster-celery worker start -A indx_assets.app.celery_worker -y celery.yaml -- --concurrency=1

Rules:
- The tasks are dagster-celery's own (`dagster_celery.app`), under their names and queue, so a
  run's Celery executor sends its steps here as it would to `-A dagster_celery.app`.
- Each process that executes tasks (a prefork child: `worker_process_init`) loads, in a thread
  started as it starts, the Dagster definitions (the chunker chain, the embedder's identity) and
  the embedding model with its weights, and embeds once. Its first step then finds them loaded,
  instead of spending its first seconds on them while it holds the `embedder` slot. A step that
  starts before the warm-up ends waits for the same load (the loads are cached per process
  and locked), so the model is loaded once per worker process.
- Nothing is loaded in the worker's main process: it forks the children, and torch's thread
  pools do not survive a fork. A child that dies (a killed step) is replaced by a fresh one,
  which warms itself the same way.
"""

import logging
import os
import threading
import time

from celery.signals import worker_process_init
from dagster_celery.app import app, execute_job, execute_plan, resume_job

from indx_assets.pipeline.embedders.registry import preload

__all__ = ["app", "execute_job", "execute_plan", "resume_job", "warm", "warm_up"]

log = logging.getLogger(__name__)


#: What a worker process logs once it is warm (tests/test_local_cluster.py looks for it).
WARMED = "indx worker process warmed"


def warm_up() -> None:
    """Load what a worker's first step would: the definitions a step reconstructs (the module
    workspace.yaml names), then the embedder with its weights (`registry.preload`)."""
    started = time.perf_counter()
    try:
        import indx_assets.wiring.definitions  # noqa: F401  (builds `defs` from the environment)
    except Exception:  # the first step loads them again and reports the error itself
        log.warning("loading the definitions in a starting worker process failed", exc_info=True)
        return
    preload().join()
    log.info(f"{WARMED} in {time.perf_counter() - started:.1f} s (pid {os.getpid()})")


@worker_process_init.connect
def warm(**_: object) -> None:
    """Start `warm_up` in a thread: Celery gives a child's init handlers a few seconds before it
    gives up on the child, and the loading takes tens of seconds on a busy machine."""
    threading.Thread(target=warm_up, name="indx-worker-warm-up", daemon=True).start()
