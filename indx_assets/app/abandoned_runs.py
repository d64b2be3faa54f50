"""Runs whose process is gone: mark them failed and give their concurrency slots back.

Every run `indx` launches in-process carries its launcher's host and pid (`launcher_tags`). A
run left unfinished (starting, started, canceling) by a launcher on this host that is no longer
alive was killed: nothing will ever end it, and under `deploy/dagster.yaml` it keeps the
`embedder` pool's one slot, so every later run would wait for that slot forever, silently.
`reclaim_abandoned_runs`, run whenever `indx` opens the instance, reports such a run failed
(Dagster's `report_run_failed`) and frees its slots and pending claims, as Dagster's daemon does
for finished runs (`free_concurrency_slots_for_run`); it also frees what any finished run still
holds, which only the daemon would otherwise free.
"""

import logging
import os
import socket
from datetime import UTC, datetime

import dagster as dg

log = logging.getLogger(__name__)

HOST_TAG = "indx/host"
PID_TAG = "indx/pid"
#: When the launching process started (UTC, ISO 8601): for people reading the run's tags.
SINCE_TAG = "indx/process_started"
UNFINISHED = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
FINISHED = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]

_STARTED = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def launcher_tags() -> dict[str, str]:
    """The tags that tie a run to the process launching it."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid()), SINCE_TAG: _STARTED}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def reclaim_abandoned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Fail the unfinished runs whose launching process on this host is gone, and free the
    concurrency slots of those and of every finished run; the ids of the runs failed."""
    reclaimed = []
    records = instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED, tags={HOST_TAG: socket.gethostname()}))
    for record in records:
        run = record.dagster_run
        pid = run.tags.get(PID_TAG, "")
        if not pid.isdigit() or _alive(int(pid)):
            continue
        instance.report_run_failed(
            run, message=f"The indx process that ran this run (pid {pid}, started {run.tags.get(SINCE_TAG, '?')}) "
                         "is gone; marked failed and its concurrency slots freed by the next indx command.")
        log.warning("run %s was left unfinished by pid %s, which is gone: marked failed, slots freed", run.run_id, pid)
        reclaimed.append(run.run_id)
    storage = instance.event_log_storage
    if storage.supports_global_concurrency_limits:
        holding = storage.get_concurrency_run_ids()  # runs with claimed or pending slots
        finished = instance.get_run_records(filters=dg.RunsFilter(run_ids=list(holding), statuses=FINISHED)) if holding else []
        for run_id in {*reclaimed, *(r.dagster_run.run_id for r in finished)}:
            storage.free_concurrency_slots_for_run(run_id)
    return reclaimed
