"""The multi-machine layout, run for real on one machine (issue 23): PostgreSQL storage, Redis,
two Celery workers, the Dagster daemon and webserver, started by `deploy/local-cluster/cluster.py
up` as the README says. Documents reach the table through the sensor -> automation -> runs whose
steps execute on the Celery workers; then the faults: a worker's process killed mid-run,
PostgreSQL restarted mid-run, and two backfills launched at once through the webserver's
GraphQL over overlapping partitions. After each, the table must equal the files (rows =
distinct ids = what `indx chunk` gives the files present) and `indx status` must show nothing
missing or stale.

Needs Debian's `postgresql` and `redis-server` (`.ci/run` installs them) and the `scale` extra.
"""

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest

from indx_assets.app.worker_warm_up import WARMED
from indx_assets.app.table_check import expected_chunk_ids, table_discrepancies
from indx_assets.wiring.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "deploy" / "local-cluster" / "cluster.py"
BIN = Path(sys.executable).parent
ASSETS = ("source_documents", "page_outputs", "chunk_map", "chunk_embeddings", "chunks_table")
#: how long the topology may take to bring the table level with the files after a change
SETTLE_S = 420

pytestmark = pytest.mark.skipif(
    not sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb")) or shutil.which("redis-server") is None
    or not (BIN / "dagster-celery").exists(),
    reason="the local cluster needs Debian's postgresql and redis-server (.ci/run installs them) "
           "and pip install 'indx-assets[scale]'",
)


def _load_cluster_module():
    spec = importlib.util.spec_from_file_location("local_cluster", CLUSTER)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


local_cluster = _load_cluster_module()


class Cluster:
    """The running topology, seen with its environment in place (`cluster.env`)."""

    def __init__(self, folder: Path, corpus: Path):
        self.folder, self.corpus = folder, corpus
        self.state = json.loads((folder / "cluster.json").read_text())
        self.instance = dg.DagsterInstance.from_config(os.environ["DAGSTER_HOME"])

    def settings(self) -> Settings:
        return Settings.from_env()

    def runs(self, statuses: list[dg.DagsterRunStatus] | None = None) -> list[dg.DagsterRun]:
        return list(self.instance.get_runs(dg.RunsFilter(statuses=statuses) if statuses else None))

    def settle(self) -> None:
        """Wait until the topology has brought the table level with the files."""
        try:
            local_cluster.settle(self.folder, SETTLE_S)
        except local_cluster.ClusterError as exc:
            pytest.fail(f"{exc}; runs {[(r.run_id[:8], r.status.value) for r in self.runs()]}")

    def step_started(self, after: set[str], timeout: float = SETTLE_S) -> tuple[dg.DagsterRun, int]:
        """The first run not in `after` whose ingest step has started on a worker, and the pid of
        the process executing it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for run in self.runs([dg.DagsterRunStatus.STARTED]):
                if run.run_id in after:
                    continue
                records = self.instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.STEP_START).records
                if records:
                    return run, records[0].event_log_entry.dagster_event.pid
            time.sleep(0.5)
        pytest.fail(f"no new run started its step in {timeout:.0f} s")

    def code_servers(self) -> list[str]:
        """The command lines of the topology's code servers (each process `up` started is the
        leader of its session; a code server the daemon or the webserver started is in theirs)."""
        sessions = set(self.state["processes"].values())
        return [p.cmd for p in local_cluster.processes()
                if p.session in sessions and ("api grpc" in p.cmd or ".code_server " in p.cmd)]

    def run_process_parent(self, run: dg.DagsterRun) -> str:
        """The command line of the parent of `run`'s process (its RUN_START event's pid), while it runs."""
        start = self.instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.RUN_START).records
        pid = start[0].event_log_entry.dagster_event.pid
        parent = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1]
        return Path(f"/proc/{parent}/cmdline").read_bytes().replace(b"\0", b" ").decode()

    def settled_runs(self) -> list[dg.DagsterRun]:
        """Once the topology is level (`settle`), its runs: each launched by the daemon (not by
        `indx`) and succeeded."""
        self.settle()
        runs = self.runs()
        assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        assert all("indx/pid" not in r.tags for r in runs), "launched by the daemon, not by indx"
        return runs

    def warmed_once(self) -> dict[str, set[str]]:
        """`warmed_processes`, each of the two workers' process warmed once."""
        warmed = self.warmed_processes()
        assert len(warmed) == 2 and all(len(pids) == 1 for pids in warmed.values()), \
            f"each worker's process loaded the model once, as it started: {warmed}"
        return warmed

    def warmed_processes(self) -> dict[str, set[str]]:
        """Per worker, the pids of its processes that logged having loaded the definitions and
        the embedding model as they started (`indx_assets.app.worker_warm_up`)."""
        return {log.stem: {line.rsplit("(pid ", 1)[1].rstrip(")") for line in log.read_text().splitlines() if WARMED in line}
                for log in sorted(self.folder.glob("worker-*.log"))}

    def check_table(self) -> None:
        settings = self.settings()
        assert table_discrepancies(settings) == []
        chunk_maps = {}
        for part in Path(settings.storage_uri, "chunk_map").glob("*/part-0.parquet"):
            import pyarrow.parquet as pq

            chunk_maps.update({i: part for i in pq.read_table(part, columns=["id"]).column("id").to_pylist()})
        import lancedb

        ids = lancedb.connect(settings.lancedb_uri).open_table("chunks").to_arrow().column("id").to_pylist()
        assert len(ids) == len(set(ids)) == len(chunk_maps) and set(ids) == set(chunk_maps)


@contextmanager
def topology(tmp_path_factory: pytest.TempPathFactory, executor: str) -> Iterator[Cluster]:
    """`cluster.py up` over a copy of the sample corpus, with `executor`'s workers, its environment
    in place while it runs; `down` after."""
    base = tmp_path_factory.mktemp(f"cluster-{executor}")
    corpus = base / "sample"
    shutil.copytree(ROOT / "data" / "sample", corpus)
    folder = base / "topology"
    # as a user runs it with the virtual environment's Python, not activated: its scripts off the PATH
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != BIN)
    up = subprocess.run([sys.executable, str(CLUSTER), "up", str(folder), "--workers", "2", "--corpus", str(corpus),
                         "--port", "0", "--executor", executor], capture_output=True, text=True, timeout=600,
                        env={**os.environ, "PATH": path})
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        with pytest.MonkeyPatch.context() as mp:
            for k, v in local_cluster.read_env(folder).items():
                mp.setenv(k, v)
            yield Cluster(folder, corpus)
    finally:
        subprocess.run([sys.executable, str(CLUSTER), "down", str(folder)], capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with topology(tmp_path_factory, "celery") as running:
        yield running


def _edit(files: list[Path], word: str) -> None:
    for f in files:
        f.write_text(f.read_text() + f"\n\n{word} was added to this document later.\n")


def _new_documents(corpus: Path, n: int, tag: str, paragraphs: int = 12) -> list[Path]:
    folder = corpus / tag
    folder.mkdir()
    paths = []
    for i in range(n):
        path = folder / f"{tag}-{i:02}.md"
        path.write_text(f"# {tag} {i}\n\n" + "\n\n".join(
            f"Paragraph {p} of {tag} document {i} describes harbour pilots and lighthouse keepers."
            for p in range(paragraphs)))
        paths.append(path)
    return paths


def test_documents_reach_the_table_through_the_sensor_automation_and_celery_workers(cluster: Cluster) -> None:
    runs = cluster.settled_runs()
    engine = [e for r in runs for e in cluster.instance.all_logs(r.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)]
    workers = {str(e.dagster_event.engine_event_data.metadata["Celery worker"].value).split("@")[0] for e in engine
               if "Celery worker" in e.dagster_event.engine_event_data.metadata}
    assert workers and workers <= {"indx-0", "indx-1"}, f"steps ran on the Celery workers, not {workers}"
    warmed = cluster.warmed_once()
    # both workers may run an ingest step at once, each with its share of the cores for torch,
    # and have the next waiting for it
    assert cluster.instance.event_log_storage.get_concurrency_info("embedder").slot_count == \
        2 * local_cluster.STEPS_PER_WORKER
    share = f"OMP_NUM_THREADS={max(1, (os.cpu_count() or 1) // 2)}".encode()
    for pids in warmed.values():
        (pid,) = pids
        assert share in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    cluster.check_table()
    # one code server for the daemon and the webserver (not one each)
    assert len(cluster.code_servers()) == 1, cluster.code_servers()
    # the daemon and the webserver are separate processes on the same Postgres storage
    port = cluster.state["port"]
    body = json.dumps({"query": "{ runsOrError { ... on Runs { results { runId status } } } }"}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", body, {"Content-Type": "application/json"})
    seen = json.loads(urllib.request.urlopen(request, timeout=30).read())["data"]["runsOrError"]["results"]
    assert {r["runId"] for r in seen} == {r.run_id for r in runs}


def test_an_edited_file_goes_to_the_table_in_one_run_with_no_run_that_only_reembeds(cluster: Cluster) -> None:
    """The daemon's automation asks for the re-embedding with the re-cut: a run that only
    re-embedded followed every re-cut run (a chain change's cost doubled in runs)."""
    cluster.settle()
    before = {r.run_id for r in cluster.runs()}
    _edit([cluster.corpus / "notes" / "tea-harvest.txt"], "Oolong")
    cluster.step_started(before)  # the sensor has seen the edit (until then the topology looks level)
    cluster.settle()
    selections = [sorted(k.to_user_string() for k in r.asset_selection or ())
                  for r in cluster.runs() if r.run_id not in before]
    assert selections == [sorted(ASSETS)], selections
    cluster.check_table()


def _during_a_run(cluster: Cluster, change: Callable[[], None], fault: Callable[[int], None]) -> dg.DagsterRun:
    before = {r.run_id for r in cluster.runs()}
    change()
    run, pid = cluster.step_started(before)
    # the run's process was forked from one that had loaded the definitions, not a new interpreter
    parent = cluster.run_process_parent(run)
    assert "multiprocessing.forkserver" in parent and "indx_assets.wiring.definitions" in parent, parent
    fault(pid)
    cluster.settle()
    cluster.check_table()
    return run


def test_a_worker_killed_mid_run_is_retried_and_nothing_is_lost_or_doubled(cluster: Cluster) -> None:
    run = _during_a_run(cluster, lambda: _new_documents(cluster.corpus, 12, "killed"),
                        lambda pid: os.kill(pid, signal.SIGKILL))
    assert cluster.instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
    retried = [r for r in cluster.runs() if r.tags.get("dagster/root_run_id") == run.run_id]
    assert [r.status for r in retried] == [dg.DagsterRunStatus.SUCCESS], "the run's automatic retry finished the work"
    assert sum(len(pids) for pids in cluster.warmed_processes().values()) >= 3, \
        "the worker process that replaced the killed one warmed itself too"


def _step_events(cluster: Cluster, run: dg.DagsterRun) -> dict[str, float]:
    """When `run`'s step was handed to Celery, started and ended (absent: not yet)."""
    at: dict[str, float] = {}
    for entry in cluster.instance.all_logs(run.run_id):
        if entry.dagster_event_type == dg.DagsterEventType.ENGINE_EVENT and "Submitting celery task" in entry.message:
            at.setdefault("submitted", entry.timestamp)
        elif entry.dagster_event_type == dg.DagsterEventType.STEP_START:
            at.setdefault("started", entry.timestamp)
        elif entry.dagster_event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
            at.setdefault("ended", entry.timestamp)
    return at


def test_a_step_goes_to_a_free_worker_not_behind_a_busy_one(cluster: Cluster) -> None:
    """A worker that is running a step does not also hold the next one: the step waits in the
    broker for whichever worker is free. Celery acknowledges a task as it starts and then
    prefetches another, which waits in the busy worker while the other stays idle; after a
    restart of the workers, a chain change's steps ran one at a time so (0.56x the in-process
    throughput). Here the second worker stops consuming (Celery's own `cancel_consumer`) while
    the first starts a step, and starts again once the next run has handed its step to Celery:
    it must take that step while the first runs. The test holds the table's writer lock
    meanwhile, so the first step cannot end however fast the machine (a step of tens of
    seconds was outlasted by the next run's launch on a loaded CI machine)."""
    from celery import Celery

    from indx_assets.wiring.resources.lancedb import LanceDBResource

    cluster.settle()
    control = Celery(broker=os.environ["CELERY_BROKER_URL"]).control
    idle = [f"indx-1@{socket.gethostname()}"]
    try:
        with LanceDBResource(uri=cluster.settings().lancedb_uri).writing():
            assert control.cancel_consumer("dagster", destination=idle, reply=True, timeout=10), "the worker answered"
            try:
                before = {r.run_id for r in cluster.runs()}
                _new_documents(cluster.corpus, 12, "long")
                first, _ = cluster.step_started(before)
                _new_documents(cluster.corpus, 2, "next")
                second = _next_run_submitted(cluster, before | {first.run_id})
                time.sleep(3)  # long enough for the busy worker to prefetch it, were it allowed to
            finally:
                assert control.add_consumer("dagster", destination=idle, reply=True, timeout=10)
            # the first step waits for the lock at its write; the second must start beside it
            end = time.monotonic() + 120
            while "started" not in _step_events(cluster, second) and time.monotonic() < end:
                time.sleep(0.5)
        cluster.settle()
        one, two = _step_events(cluster, first), _step_events(cluster, second)
        assert two["started"] < one["ended"], f"the next step waited for the busy worker: {one}, {two}"
        worker = [e.dagster_event.engine_event_data.metadata["Celery worker"].value
                  for e in cluster.instance.all_logs(second.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
                  if "Celery worker" in e.dagster_event.engine_event_data.metadata]
        assert worker == idle, worker
    finally:
        for tag in ("long", "next"):  # the later tests count on fewer than 100 documents (one run)
            shutil.rmtree(cluster.corpus / tag, ignore_errors=True)
    cluster.settle()
    cluster.check_table()


def _next_run_submitted(cluster: Cluster, before: set[str]) -> dg.DagsterRun:
    """The one run not in `before`, once it has handed its step to Celery."""
    end = time.monotonic() + SETTLE_S
    while time.monotonic() < end:
        runs = [r for r in cluster.runs() if r.run_id not in before]
        if runs and "submitted" in _step_events(cluster, runs[0]):
            break
        time.sleep(0.5)
    assert len(runs) == 1, f"one more run handed its step to Celery in {SETTLE_S} s: {runs}"
    return runs[0]


def postgres_restarted_mid_run(cluster: Cluster) -> None:
    """PostgreSQL restarted while a run's step runs: the run fails or retries cleanly, and the
    topology then brings the table level with the files (`_during_a_run`)."""
    _during_a_run(cluster, lambda: _edit(sorted(cluster.corpus.rglob("*.md")), "Restarted"),
                  lambda pid: local_cluster.restart_postgres(cluster.state))


def test_postgres_restarted_mid_run_and_a_rerun_completes(cluster: Cluster) -> None:
    postgres_restarted_mid_run(cluster)


def _graphql(port: int, query: str, variables: dict) -> dict:
    body = json.dumps({"query": query, "variables": variables}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", body, {"Content-Type": "application/json"})
    try:
        return json.loads(urllib.request.urlopen(request, timeout=120).read())["data"]
    except urllib.error.HTTPError as exc:
        raise AssertionError(f"GraphQL answered {exc.code}: {exc.read()[:3000]!r}") from exc


LAUNCH = """mutation($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }"""
BACKFILL = """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
  ... on PartitionBackfill { status } } }"""


def _webserver_answers(port: int, tries: int = 5) -> None:
    """After a PostgreSQL restart the webserver's pooled connections are stale: dagster-postgres
    does not test them before use, so the first request on each fails once (README, "Several
    machines, tried on one"). Read until a request goes through whole."""
    for _ in range(tries):
        try:
            _graphql(port, "{ runsOrError { __typename } partitionBackfillsOrError { __typename } }", {})
            return
        except AssertionError:
            time.sleep(1)
    pytest.fail(f"the webserver did not answer in {tries} tries")


def test_two_backfills_at_once_over_overlapping_partitions_leave_one_row_per_chunk(cluster: Cluster) -> None:
    two_backfills_at_once(cluster)


def two_backfills_at_once(cluster: Cluster) -> None:
    """Two backfills over overlapping thirds of the partitions, launched at once through the
    webserver's GraphQL: both complete, and the table holds one row per chunk id."""
    cluster.settle()
    _webserver_answers(cluster.state["port"])
    before = {r.run_id for r in cluster.runs()}
    partitions = sorted(expected_chunk_ids(cluster.settings()))
    third = len(partitions) // 3
    selections = [partitions[: 2 * third], partitions[third:]]  # the middle third is in both
    port, launched = cluster.state["port"], []

    def launch(names: list[str]) -> None:  # in a thread: failures are returned, not raised
        params = {"partitionNames": names, "fromFailure": False,
                  "assetSelection": [{"path": [a]} for a in ASSETS], "tags": [{"key": "test", "value": "overlap"}]}
        try:
            launched.append(_graphql(port, LAUNCH, {"params": params})["launchPartitionBackfill"])
        except AssertionError as exc:
            launched.append({"__typename": str(exc)})

    threads = [threading.Thread(target=launch, args=(s,)) for s in selections]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r["__typename"] for r in launched] == ["LaunchBackfillSuccess"] * 2, launched
    backfills_completed(port, [r["backfillId"] for r in launched])
    assert len({r.run_id for r in cluster.runs()} - before) >= 2, "both backfills launched runs"
    cluster.settle()
    cluster.check_table()


def backfills_completed(port: int, ids: list[str]) -> None:
    """Wait for these backfills to end (the webserver's GraphQL), and check each completed."""
    end = time.monotonic() + SETTLE_S
    while time.monotonic() < end:
        states = [_graphql(port, BACKFILL, {"id": i})["partitionBackfillOrError"]["status"] for i in ids]
        if all(s in ("COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED") for s in states):
            break
        time.sleep(5)
    assert all(s in ("COMPLETED", "COMPLETED_SUCCESS") for s in states), states


CODE_VERSION = """query($path: [String!]!) { assetNodes(assetKeys: [{path: $path}]) { opVersion } }"""


def test_a_chain_change_reaches_the_table_in_one_run_with_none_that_finds_everything_fresh(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain change, as a user rolls it out (the code server and the workers restarted with
    INDX_CHAIN; the daemon and the webserver go on and load the new code location), is
    carried to the table in as many runs as in-process: one here (under 100 documents), which
    re-cuts and re-embeds. The daemon ticks while it runs: once its chunk maps were written, a
    tick asked again for the re-embedding it was about to do (Dagster's `in_progress()` did not
    see a run announced by range), and another run followed that found everything fresh. Eighty
    long Markdown documents, which the new chain cuts differently, make its re-embedding outlast
    a few ticks (forty short ones did not: no tick fell between its two stages)."""
    from indx_assets.pipeline.chain import CHAIN_ENV

    _new_documents(cluster.corpus, 80, "chained", paragraphs=40)
    cluster.settle()
    before = {r.run_id for r in cluster.runs()}
    port, kept = cluster.state["port"], {n: cluster.state["processes"][n] for n in ("daemon", "webserver")}
    shown = _graphql(port, CODE_VERSION, {"path": ["chunk_map"]})["assetNodes"][0]["opVersion"]
    chain = json.dumps({"options": {"markdown": {"max_characters": 300}}})
    restart = subprocess.run([sys.executable, str(CLUSTER), "restart", str(cluster.folder), "--set",
                              f"{CHAIN_ENV}={chain}", "--code"], capture_output=True, text=True, timeout=600)
    assert restart.returncode == 0, restart.stderr[-3000:]
    monkeypatch.setenv(CHAIN_ENV, chain)  # what `. DIR/cluster.env` now exports
    cluster.state = json.loads((cluster.folder / local_cluster.STATE).read_text())
    cluster.settle()
    runs = [r for r in cluster.runs() if r.run_id not in before]
    selections = [sorted(k.to_user_string() for k in r.asset_selection or ()) for r in runs]
    assert selections == [["chunk_embeddings", "chunk_map", "chunks_table"]], selections
    assert [r.status for r in runs] == [dg.DagsterRunStatus.SUCCESS]
    cluster.check_table()
    # the same daemon and webserver, and the UI shows the new chain's code version
    assert {n: cluster.state["processes"][n] for n in kept} == kept
    assert all(local_cluster.alive(pid) for pid in kept.values())
    now = _graphql(port, CODE_VERSION, {"path": ["chunk_map"]})["assetNodes"][0]["opVersion"]
    assert now != shown and shown, (shown, now)


@pytest.mark.parametrize("args, says", [
    (["--code"], "no cluster in"),
    (["--set", "INDX_CHAIN"], "is not NAME=VALUE"),
])
def test_a_restart_asked_wrongly_says_what_to_do_in_one_line(tmp_path: Path, args: list[str], says: str) -> None:
    done = subprocess.run([sys.executable, str(CLUSTER), "restart", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
