"""What a worker process loads before its first step (Celery's and Dask's workers alike).

A step reconstructs the Dagster definitions and embeds with the model; loaded as the process
starts, they are there when the first step comes, instead of costing its first seconds while it
holds the `embedder` slot. A step that starts before the warm-up ends waits for the same load
(the loads are cached per process and locked), so the model is loaded once per worker process.
"""

import logging
import os
import threading
import time

from indx_assets.pipeline.embedders.registry import preload

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


def warm_in_background() -> threading.Thread:
    """`warm_up` in a thread of its own: a worker's start hooks return at once (Celery gives a
    child's init handlers a few seconds), and the loading takes tens of seconds on a busy machine."""
    thread = threading.Thread(target=warm_up, name="indx-worker-warm-up", daemon=True)
    thread.start()
    return thread
