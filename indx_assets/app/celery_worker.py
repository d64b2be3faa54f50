"""The Celery app of indx's workers: dagster-celery's app and tasks, with every worker process
warmed as it starts (`pip install 'indx-assets[scale]'`).

    dagster-celery worker start -A indx_assets.app.celery_worker -y celery.yaml -- --concurrency=1

Rules:
- The tasks are dagster-celery's own (`dagster_celery.app`), under their names and queue, so a
  run's Celery executor sends its steps here as it would to `-A dagster_celery.app`.
- Each process that executes tasks (a prefork child: `worker_process_init`) warms itself as it
  starts (`worker_warm_up`): the definitions, and the embedding model with its weights.
- A worker holds no step it is not running (`task_acks_late`): Celery acknowledges a task as it
  starts and would then prefetch the next, which waited in the busy worker while another
  stood idle (a chain change's steps ran one at a time after the workers restarted). With
  late acknowledgement and dagster-celery's prefetch of one, the next step stays in the broker
  for whichever worker is free. A child killed in a step is not redelivered all the same
  (`task_reject_on_worker_lost` stays off): the run fails and Dagster's run retry redoes it.
- Nothing is loaded in the worker's main process: it forks the children, and torch's thread
  pools do not survive a fork. A child that dies (a killed step) is replaced by a fresh one,
  which warms itself the same way.
"""

from celery.signals import worker_process_init
from dagster_celery.app import app, execute_job, execute_plan, resume_job

from indx_assets.app.worker_warm_up import warm_in_background

__all__ = ["app", "execute_job", "execute_plan", "resume_job", "warm"]

# The tasks take it as the worker finalizes the app (after `-y`'s configuration is read).
app.conf.task_acks_late = True


@worker_process_init.connect
def warm(**_: object) -> None:
    """Warm the child that is starting (in a thread: `warm_in_background`)."""
    warm_in_background()
