"""The multi-machine layout with Dask as the executor (issue 23), run for real on one machine:
`deploy/local-cluster/cluster.py up --executor dask` starts PostgreSQL, a Dask scheduler, two Dask
workers, the code server, the daemon and the webserver. Documents reach the table through the
sensor -> automation -> runs whose steps are tasks on the Dask workers; then a worker's process is
killed in the middle of a step, PostgreSQL restarted in one, two backfills launched at once, a
run terminated in its step. After each, the table must equal the files (rows = distinct ids =
the stored chunk maps' ids) and `indx status` must show nothing missing or stale.

Needs Debian's `postgresql` (`.ci/run` installs it) and the `dask` extra.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from indx_assets.app.table_check import expected_chunk_ids

from test_local_cluster import (
    ASSETS,
    BIN,
    CLUSTER,
    LAUNCH,
    Cluster,
    _graphql,
    _new_documents,
    _webserver_answers,
    backfills_completed,
    local_cluster,
    postgres_restarted_mid_run,
    topology,
    two_backfills_at_once,
)

pytestmark = pytest.mark.skipif(
    not sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb")) or not (BIN / "dask").exists(),
    reason="the local cluster needs Debian's postgresql (.ci/run installs it) and pip install 'indx-assets[dask]'",
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with topology(tmp_path_factory, "dask") as running:
        yield running


def _step_workers(cluster: Cluster, run: dg.DagsterRun) -> list[int]:
    """The pids of the processes that started `run`'s steps, in order."""
    return [r.event_log_entry.dagster_event.pid for r in cluster.instance.get_records_for_run(
        run.run_id, of_type=dg.DagsterEventType.STEP_WORKER_STARTED).records]


def _warmed(cluster: Cluster, at_least: int, timeout: float = 180) -> set[str]:
    """The pids of the worker processes that logged being warm, once there are `at_least` (a
    new worker that has run no step may still be warming up), or as many as there are then."""
    end = time.monotonic() + timeout
    while len(pids := {p for ps in cluster.warmed_processes().values() for p in ps}) < at_least \
            and time.monotonic() < end:
        time.sleep(2)
    return pids


def test_documents_reach_the_table_through_the_sensor_automation_and_dask_workers(cluster: Cluster) -> None:
    runs = cluster.settled_runs()
    warmed = cluster.warmed_once()
    worker_pids = {int(pid) for pids in warmed.values() for pid in pids}
    for run in runs:
        assert _step_workers(cluster, run) and set(_step_workers(cluster, run)) <= worker_pids, \
            f"run {run.run_id[:8]}'s steps ran in the warmed Dask workers' processes {worker_pids}"
        engine = cluster.instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
        assert any("on Dask (tcp://127.0.0.1:" in e.message for e in engine)
    # a step running on each of the two workers, and the next waiting for it
    assert cluster.instance.event_log_storage.get_concurrency_info("embedder").slot_count == \
        2 * local_cluster.STEPS_PER_WORKER
    cluster.check_table()
    shown = subprocess.run([sys.executable, str(CLUSTER), "status", str(cluster.folder)], capture_output=True,
                           text=True, timeout=60).stdout
    assert "dask-scheduler up" in shown and "redis" not in shown, shown


def test_a_dask_worker_killed_in_a_step_gives_the_step_to_the_other_and_nothing_is_lost_or_doubled(
    cluster: Cluster,
) -> None:
    cluster.settle()
    before = {r.run_id for r in cluster.runs()}
    _new_documents(cluster.corpus, 12, "killed")
    run, pid = cluster.step_started(before)
    os.kill(pid, signal.SIGKILL)
    cluster.settle()
    cluster.check_table()
    # Dask hands the task of the dead worker to a live one: the same run finishes its step
    assert cluster.instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.SUCCESS
    started = _step_workers(cluster, run)  # the run's one step (`ingest_documents`), started twice
    assert len(started) == 2 and started[0] == pid != started[1], started
    assert len(_warmed(cluster, 3)) == 3, "the nanny's new worker process warmed itself too"


def test_a_restart_of_the_code_keeps_the_scheduler_and_steps_go_to_the_new_workers(cluster: Cluster) -> None:
    scheduler = cluster.state["processes"]["dask-scheduler"]
    warmed_before = _warmed(cluster, 0)
    done = subprocess.run([sys.executable, str(CLUSTER), "restart", str(cluster.folder), "--code"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    state = local_cluster.read_state(cluster.folder)
    assert state["processes"]["dask-scheduler"] == scheduler and local_cluster.alive(scheduler)
    before = {r.run_id for r in cluster.runs()}
    _new_documents(cluster.corpus, 3, "after-restart")
    run, pid = cluster.step_started(before)
    cluster.settle()
    cluster.check_table()
    assert cluster.instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.SUCCESS
    warmed_after = _warmed(cluster, len(warmed_before) + 2) - warmed_before
    assert len(warmed_after) == 2 and str(pid) in warmed_after, (pid, warmed_after)


def test_postgres_restarted_mid_run_and_a_rerun_completes(cluster: Cluster) -> None:
    postgres_restarted_mid_run(cluster)


def test_two_backfills_at_once_over_overlapping_partitions_leave_one_row_per_chunk(cluster: Cluster) -> None:
    two_backfills_at_once(cluster)


TERMINATE = """mutation($runId: String!) { terminateRun(runId: $runId) {
  __typename ... on TerminateRunFailure { message } ... on PythonError { message } } }"""


def test_a_run_terminated_in_its_step_stops_the_step_and_a_backfill_then_completes(cluster: Cluster) -> None:
    """Terminate, as the UI's button does it, while the run's step runs on a Dask worker: Dask
    does not stop a running task, so the executor restarts the worker running it. The step's
    process is gone by the time the run is cancelled (it would otherwise go on embedding and
    writing for a run that is over), its new process warms itself, and a backfill of what the
    run left undone brings the table level with the files."""
    cluster.settle()
    port = cluster.state["port"]
    _webserver_answers(port)
    before = {r.run_id for r in cluster.runs()}
    _new_documents(cluster.corpus, 40, "terminated", paragraphs=150)  # a step of tens of seconds
    run, pid = cluster.step_started(before)
    warmed = _warmed(cluster, 0)
    done = _graphql(port, TERMINATE, {"runId": run.run_id})["terminateRun"]
    assert done["__typename"] == "TerminateRunSuccess", done
    end = time.monotonic() + 180
    while cluster.instance.get_run_by_id(run.run_id).status != dg.DagsterRunStatus.CANCELED and time.monotonic() < end:
        time.sleep(0.5)
    assert cluster.instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.CANCELED
    assert not local_cluster.alive(pid), "the terminated run's step was stopped, not left running"
    assert not cluster.instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.STEP_SUCCESS).records
    assert len(_warmed(cluster, len(warmed) + 1) - warmed) == 1, "the restarted worker's new process warmed itself"
    # automation does not ask again for what a run it launched left undone; the user backfills it
    left = sorted(k for k in expected_chunk_ids(cluster.settings()) if "/terminated/" in k)
    assert len(left) == 40, left
    params = {"partitionNames": left, "fromFailure": False, "assetSelection": [{"path": [a]} for a in ASSETS]}
    launched = _graphql(port, LAUNCH, {"params": params})["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    backfills_completed(port, [launched["backfillId"]])
    cluster.settle()
    cluster.check_table()
