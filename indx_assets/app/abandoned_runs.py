"""Runs whose process is gone: mark them failed and give their concurrency slots back.

Every run `indx` launches in-process carries its launcher's host and pid (`launcher_tags`). A
run the Dagster daemon launches (sensor, automation, a backfill, the UI) runs in a run worker
that Dagster starts (`dagster api execute_run`), and that worker records its own pid in the
run's event log as it starts (`dagster_internals.run_worker_pid` reads it). On an instance
whose runs are kept in SQLite files (`INDX_HOME`'s) every run worker is on this host, since it
writes this machine's disk, so that pid says whether the run's process lives. A run left
unfinished (starting, started, canceling) whose process is gone was killed: nothing will ever
end it (the default run launcher cannot check a worker's health, so Dagster's run monitoring
does not), and under `deploy/dagster.yaml` it keeps the `embedder` pool's one slot, so every
later run would wait for that slot forever, silently.
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

from indx_assets.wiring.dagster_internals import is_local_sqlite, run_worker_pid

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
    """Whether process `pid` still runs. A process killed but not yet reaped by its parent (a
    zombie: a run worker whose code server was stopped with it) answers a signal, yet is gone;
    a run it held, looked at then, stayed unfinished with its slot, and the ingest waited."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    if not os.path.isdir("/proc/self"):
        return True  # no /proc to ask: the signal's answer stands
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rpartition(b")")[2].split()[:1]  # after the name, which may hold ")"
    except FileNotFoundError:
        return False
    return state not in ([b"Z"], [b"X"])


def _run_process(instance: dg.DagsterInstance, run: dg.DagsterRun, local_runs: bool) -> tuple[str, str] | None:
    """The pid of the process running `run` on this host and what it is, or None when that is
    not known here (another host's run, a worker not started yet)."""
    if HOST_TAG in run.tags:
        if run.tags[HOST_TAG] != socket.gethostname():
            return None
        return run.tags.get(PID_TAG, ""), f"the indx process that ran it (started {run.tags.get(SINCE_TAG, '?')})"
    if not local_runs:  # workers may run anywhere (Postgres, Kubernetes): their launcher checks them
        return None
    pid = run_worker_pid(instance, run.run_id)
    return (str(pid), "the run worker Dagster started for it") if pid is not None else None


def reclaim_abandoned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Fail the unfinished runs whose process on this host is gone (an `indx` launcher, or the
    run worker of a run the daemon launched), and free the concurrency slots of those and of
    every finished run; the ids of the runs failed."""
    reclaimed = []
    local_runs = is_local_sqlite(instance)
    for record in instance.get_run_records(filters=dg.RunsFilter(statuses=UNFINISHED)):
        run = record.dagster_run
        found = _run_process(instance, run, local_runs)
        if found is None or not found[0].isdigit() or _alive(int(found[0])):
            continue
        pid, who = found
        instance.report_run_failed(
            run, message=f"The process that ran this run, {who} (pid {pid}), is gone; marked failed and its "
                         "concurrency slots freed by the next indx command.")
        log.warning("run %s was left unfinished by pid %s, which is gone: marked failed, slots freed", run.run_id, pid)
        reclaimed.append(run.run_id)
    storage = instance.event_log_storage
    if storage.supports_global_concurrency_limits:
        holding = storage.get_concurrency_run_ids()  # runs with claimed or pending slots
        finished = instance.get_run_records(filters=dg.RunsFilter(run_ids=list(holding), statuses=FINISHED)) if holding else []
        for run_id in {*reclaimed, *(r.dagster_run.run_id for r in finished)}:
            storage.free_concurrency_slots_for_run(run_id)
    return reclaimed
