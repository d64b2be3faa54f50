"""The preload of indx's Dask workers (`pip install 'indx-assets[dask]'`): every worker process
warmed as it starts.

    dask worker tcp://SCHEDULER:8786 --preload indx_assets.app.dask_worker --nthreads 1

Rules:
- A worker runs the steps of runs whose executor is `dask` (`wiring/dask_steps.py`), one task
  at a time with `--nthreads 1`: the steps of an ingest each embed with all the cores they are
  given (`OMP_NUM_THREADS`).
- The worker process (the nanny's child) warms itself as it starts (`worker_warm_up`): the
  definitions, and the embedding model with its weights. A worker the nanny restarts (after a
  killed step) warms itself again.
"""

import logging

from distributed import Worker

from indx_assets.app.worker_warm_up import warm_in_background


def dask_setup(worker: Worker) -> None:
    """Dask's preload hook, called in the worker's process as it starts."""
    log = logging.getLogger("indx_assets")
    if not log.handlers:  # Dask configures its own loggers only: say in the worker's log that it is warm
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    warm_in_background()
