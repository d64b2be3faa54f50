"""The Celery app of indx's workers: dagster-celery's app and tasks, with every worker process
warmed as it starts (`pip install 'indx-assets[scale]'`).

    dagster-celery worker start -A indx_assets.app.celery_worker -y celery.yaml -- --concurrency=1

Rules:
- The tasks are dagster-celery's own (`dagster_celery.app`), under their names and queue, so a
  run's Celery executor sends its steps here as it would to `-A dagster_celery.app`.
- Each process that executes tasks (a prefork child: `worker_process_init`) warms itself as it
  starts (`worker_warm_up`): the definitions, and the embedding model with its weights.
- Nothing is loaded in the worker's main process: it forks the children, and torch's thread
  pools do not survive a fork. A child that dies (a killed step) is replaced by a fresh one,
  which warms itself the same way.
"""

from celery.signals import worker_process_init
from dagster_celery.app import app, execute_job, execute_plan, resume_job

from indx_assets.app.worker_warm_up import warm_in_background

__all__ = ["app", "execute_job", "execute_plan", "resume_job", "warm"]


@worker_process_init.connect
def warm(**_: object) -> None:
    """Warm the child that is starting (in a thread: `warm_in_background`)."""
    warm_in_background()
