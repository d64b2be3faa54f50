"""Load test of the automation path: N generated documents in, then a chain change.

    python bench/load_test.py [--documents 2000] [--page-size 500] [--batch-size 100]
    python bench/load_test.py --executor celery|dask [--workers 2] [--documents 2000]

Writes N documents (Markdown and plain text, deterministic), then drives the daemon's loop
in-process (`daemon_tick.tick`: corpus sensor scan → automation evaluation → batched
runs of exactly the requested partitions) until automation asks for nothing. Then changes the
chain's configuration (the markdown chunker's max_characters), which changes `chunk_map`'s
code version, and ticks again until settled. Reports wall time, runs launched, partitions
requested per asset, and checks that the LanceDB table holds exactly one row per chunk id and
exactly the chunk ids of the stored chunk maps.

With `--executor celery` (or `dask`) the same load and chain change also run on the local
cluster (`deploy/local-cluster/cluster.py`: PostgreSQL, Redis and `--workers` Celery workers, or
a Dask scheduler and `--workers` Dask workers, the real daemon and webserver), in the same run as the in-process path, and it prints documents/s of
each, their ratio, and the orchestration overhead per run (wall time in which no step ran,
divided by the runs), and the CPU-seconds each part of the topology used (`cpu_s`: workers, code
server, the runs' processes, daemon, webserver, PostgreSQL, Redis or the Dask scheduler). A cluster phase's wall time runs from its start (the chain change's
includes restarting the code server and the workers with the new chain, `restart_s`) to its last run's end; `settled_s` is
when the bench had seen the topology level twice (`cluster.settle`), and the ratio by it is
printed too.
"""

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import dagster as dg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indx_assets.app.analytics import dataset  # noqa: E402
from indx_assets.app.daemon_tick import AutomationState, tick  # noqa: E402
from indx_assets.app.runner import EVENT_LOG_STORAGE  # noqa: E402
from indx_assets.wiring.definitions import build_resources  # noqa: E402
from indx_assets.wiring.settings import Settings  # noqa: E402

WORDS = ("harbour lantern keeper granite tide beacon storm signal coast ledger rope timber tea leaf valley "
         "tram depot rail bridge river market copper engine chart compass gull reef").split()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 18))).capitalize() + "."


def write_documents(root: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(n):
        folder = root / f"batch-{i // 250:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        paragraphs = [" ".join(sentence(rng) for _ in range(rng.randint(2, 6))) for _ in range(rng.randint(2, 6))]
        if i % 2:
            text = f"# Document {i}\n\n" + "\n\n".join(f"## Part {j}\n\n{p}" for j, p in enumerate(paragraphs))
            (folder / f"doc-{i:05d}.md").write_text(text, encoding="utf-8")
        else:
            (folder / f"doc-{i:05d}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")


def settle(instance: dg.DagsterInstance, settings: Settings, state: AutomationState, page_size: int,
           batch_size: int) -> dict:
    started = time.perf_counter()
    runs, failed, ticks = 0, 0, 0
    run_ids: list[str] = []
    sweeps = state.sensor.sweeps
    requested: Counter[str] = Counter()
    while True:
        result = tick(instance, settings, state, page_size=page_size, batch_size=batch_size)
        ticks += 1
        runs += len(result.runs)
        run_ids += [r.run_id for r in result.runs]
        failed += sum(not r.success for r in result.runs)
        requested.update({asset: len(keys) for asset, keys in result.requested.items()})
        swept = state.sensor.sweeps > sweeps  # every file and partition looked at since settling began
        if swept and not any(result.requested.values()):
            break
    return {"wall_s": round(time.perf_counter() - started, 1), "ticks": ticks, "runs": runs,
            "step_s": round(step_seconds(instance, run_ids), 1), "failed_runs": failed, "requested": dict(requested)}


def check_table(settings: Settings) -> dict:
    ids = Counter(build_resources(settings)["lancedb"].table().to_arrow().column("id").to_pylist())  # type: ignore[attr-defined]
    stored = set(dataset(settings.storage_uri, "chunk_map").to_table(columns=["id"]).column("id").to_pylist())  # type: ignore[union-attr]
    return {"rows": sum(ids.values()), "distinct_ids": len(ids), "duplicate_ids": sum(c > 1 for c in ids.values()),
            "chunk_map_ids": len(stored), "table_matches_chunk_map": set(ids) == stored}


CHAIN_CHANGE = json.dumps({"options": {"markdown": {"max_characters": 300}}})


def step_seconds(instance: dg.DagsterInstance, run_ids: list[str]) -> float:
    """Seconds spent inside steps (step start to its success or failure) over these runs."""
    return sum(end - start for start, end in step_spans(instance, run_ids))


def steps_at_once(spans: list[tuple[float, float]], start: float, end: float) -> dict[int, float]:
    """Seconds between `start` and `end` in which 0, 1, 2, … of these steps ran at once (steps
    run side by side on several workers): where a phase's wall time went."""
    edges = sorted([(max(a, start), 1) for a, _ in spans] + [(min(b, end), -1) for _, b in spans])
    seconds: Counter[int] = Counter()
    running, at = 0, start
    for when, change in edges:
        seconds[running] += max(0.0, when - at)
        running, at = running + change, max(at, when)
    seconds[running] += max(0.0, end - at)
    return {n: round(s, 1) for n, s in sorted(seconds.items())}


def step_spans(instance: dg.DagsterInstance, run_ids: list[str]) -> list[tuple[float, float]]:
    """Each step's start and end (its success or failure) over these runs."""
    spans = []
    for run_id in run_ids:
        started: dict[str, float] = {}
        for record in instance.get_records_for_run(run_id, of_type={
                dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE},
                limit=100_000).records:
            entry = record.event_log_entry
            if entry.dagster_event_type == dg.DagsterEventType.STEP_START:
                started[entry.step_key] = entry.timestamp
            elif entry.step_key in started:
                spans.append((started.pop(entry.step_key), entry.timestamp))
    return spans


#: A run's milestones in order (the Celery worker's "Executing steps" engine event is `picked`);
#: each phase is the time from one to the next.
PHASES = ("queued", "dequeued", "starting", "started", "picked", "step_start", "step_end", "done")


def run_phases(instance: dg.DagsterInstance, run_ids: list[str]) -> dict:
    """Median seconds of each phase of these runs (queued → dequeued by the daemon → launched →
    its process running → a worker picked the step → the step ran → the run ended) and of the
    time between one step's end and the next one's start: where the time outside the steps goes."""
    import statistics

    kinds = {dg.DagsterEventType.RUN_ENQUEUED: "queued", dg.DagsterEventType.RUN_DEQUEUED: "dequeued",
             dg.DagsterEventType.RUN_STARTING: "starting", dg.DagsterEventType.RUN_START: "started",
             dg.DagsterEventType.STEP_START: "step_start", dg.DagsterEventType.STEP_SUCCESS: "step_end",
             dg.DagsterEventType.STEP_FAILURE: "step_end", dg.DagsterEventType.RUN_SUCCESS: "done",
             dg.DagsterEventType.RUN_FAILURE: "done"}
    phases: dict[str, list[float]] = {}
    spans = []
    for run_id in run_ids:
        at: dict[str, float] = {}
        for entry in instance.all_logs(run_id):
            kind = kinds.get(entry.dagster_event_type) if entry.dagster_event_type else None
            if kind is None and (entry.dagster_event_type == dg.DagsterEventType.STEP_WORKER_STARTED or (
                    entry.dagster_event_type == dg.DagsterEventType.ENGINE_EVENT and "in celery worker" in (entry.message or ""))):
                kind = "picked"  # a Dask worker's step says so; a Celery worker's task logs it
            if kind:
                at.setdefault(kind, entry.timestamp)
        present = [k for k in PHASES if k in at]
        for a, b in zip(present, present[1:]):
            phases.setdefault(f"{a}->{b}", []).append(at[b] - at[a])
        if "step_start" in at and "step_end" in at:
            spans.append((at["step_start"], at["step_end"]))
    spans.sort()
    gaps = [b[0] - a[1] for a, b in zip(spans, spans[1:])]
    out = {k: round(statistics.median(v), 2) for k, v in phases.items()}
    if gaps:
        out["idle_between_steps"] = round(statistics.median(gaps), 2)  # one step's end to the next's start
    return out


def run_list(instance: dg.DagsterInstance, records: list) -> list[str]:
    """Each run in the order it was created: its assets, its span of documents and its step's
    seconds (which runs there were, and which of them had little to do)."""
    from indx_assets.wiring.assets.partitions import RANGE_END, RANGE_START

    out = []
    for record in sorted(records, key=lambda r: r.create_timestamp):
        run = record.dagster_run
        assets = ",".join(sorted(k.to_user_string().split("_")[0] + k.to_user_string()[-3:] for k in run.asset_selection or ()))
        span = f"{run.tags.get(RANGE_START, '?').rsplit('/', 1)[-1]}..{run.tags.get(RANGE_END, '?').rsplit('/', 1)[-1]}"
        out.append(f"{assets} {span} step {step_seconds(instance, [run.run_id]):.1f}s")
    return out


#: The parts of the topology that outlive a chain change's restart (of the code server and the
#: workers only: `cluster.restart(code_only=True)`).
SERVICES = ("postgres", "redis", "dask-scheduler", "daemon", "webserver")


def phase_cpu(now: dict[str, float], before_restart: dict[str, float]) -> dict[str, float]:
    """CPU-seconds of each part of the topology in a phase (`cluster.cpu_seconds`): the initial
    load's count from the start (the workers' model load and every process's imports included);
    the chain change's code server and workers are new, and the others' count goes on from before."""
    return {role: round(s - (before_restart.get(role, 0.0) if role in SERVICES else 0.0), 1) for role, s in now.items()}


def progress(label: str, result: dict) -> None:
    """A finished phase, on stderr at once: a cluster run can take long, and one stopped early
    still says what it measured."""
    print(f"{label}: {json.dumps(result)}", file=sys.stderr, flush=True)


def on_cluster(executor: str, documents: int, workers: int, timeout: float) -> dict:
    """The load and the chain change through the real daemon and `executor`'s workers."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cluster", ROOT / "deploy" / "local-cluster" / "cluster.py")
    cluster = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(cluster)  # type: ignore[union-attr]
    with tempfile.TemporaryDirectory() as tmp:
        corpus, folder = Path(tmp) / "corpus", Path(tmp) / "topology"
        write_documents(corpus, documents)
        report: dict = {"executor": executor, "workers": workers}
        try:
            cluster.up(folder, workers, [str(corpus)], 0, executor)
            env = cluster.read_env(folder)
            os.environ.update(env)  # the instance's storage is read from it (DAGSTER_PG_URL)
            instance = dg.DagsterInstance.from_config(env["DAGSTER_HOME"])
            cpu: dict[str, float] = {}
            for phase, change in (("initial_load", None), ("chain_change", CHAIN_CHANGE)):
                # every run of the new instance is the load's: one may have started during `up`
                before = {r.run_id for r in instance.get_runs()} if change else set()
                started = time.time()
                if change:
                    cpu = cluster.cpu_seconds(folder)  # the restart ends the code server and the workers
                    # as a new release of the code is rolled out: the daemon and webserver go on
                    cluster.restart(folder, {"INDX_CHAIN": change}, code_only=True)
                restart = time.time() - started
                settled = cluster.settle(folder, timeout) + restart
                records = [r for r in instance.get_run_records() if r.dagster_run.run_id not in before]
                runs = [r.dagster_run.run_id for r in records]
                # the work ends with the last run; `settle` then needs two level looks (an `indx
                # status` each) to be sure nothing more comes, which the in-process loop does not
                wall = max((r.end_time for r in records if r.end_time), default=started + settled) - started
                spans = step_spans(instance, runs)
                at_once = steps_at_once(spans, started, started + wall)
                stepping = wall - at_once.get(0, 0.0)  # steps run at once on the workers: not their sum
                report[phase] = {"wall_s": round(wall, 1), "settled_s": round(settled, 1), "restart_s": round(restart, 1),
                                 "runs": len(runs), "step_s": round(sum(b - a for a, b in spans), 1),
                                 "stepping_s": round(stepping, 1),
                                 "first_step_after_s": round(min((a for a, _ in spans), default=started) - started, 1),
                                 "seconds_with_n_steps": at_once,
                                 "overhead_per_run_s": round((wall - stepping) / max(len(runs), 1), 2),
                                 "median_phase_s": run_phases(instance, runs),
                                 "run_list": run_list(instance, records),
                                 "cpu_s": phase_cpu(cluster.cpu_seconds(folder), cpu)}
                progress(f"{executor} {phase}", report[phase])
            home = Path(env["INDX_HOME"])
            settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                                corpus_roots=(str(corpus),), chain_config=CHAIN_CHANGE)
            report["after_chain_change"] = check_table(settings)
        finally:
            cluster.down(folder)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--page-size", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--executor", choices=["in_process", "celery", "dask"], default="in_process",
                        help="celery, dask: also run on the local cluster, against the in-process path in this run")
    parser.add_argument("--workers", type=int, default=2, help="Celery or Dask workers of the local cluster")
    parser.add_argument("--timeout", type=float, default=7200, help="seconds the cluster may take to settle a phase")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus, home = Path(tmp) / "corpus", Path(tmp) / "indx"
        write_documents(corpus, args.documents)
        settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                            corpus_roots=(str(corpus),))
        (Path(tmp) / "dagster").mkdir()
        report: dict = {"documents": args.documents, "page_size": args.page_size, "batch_size": args.batch_size}
        with dg.instance_for_test(temp_dir=str(Path(tmp) / "dagster"),
                                  overrides={"event_log_storage": EVENT_LOG_STORAGE}) as instance:
            state = AutomationState()
            report["initial_load"] = settle(instance, settings, state, args.page_size, args.batch_size)
            report["after_initial_load"] = check_table(settings)
            changed = replace(settings, chain_config=CHAIN_CHANGE)
            report["chain_change"] = settle(instance, changed, state, args.page_size, args.batch_size)
            report["after_chain_change"] = check_table(changed)
            report["runs_total"] = report["initial_load"]["runs"] + report["chain_change"]["runs"]
            progress("in_process", report)
    if args.executor != "in_process":
        name = args.executor
        distributed = on_cluster(name, args.documents, args.workers, args.timeout)
        report = {"in_process": report, name: distributed, "documents_per_s": {}}
        for phase in ("initial_load", "chain_change"):
            local, remote = report["in_process"][phase]["wall_s"], distributed[phase]["wall_s"]
            report["documents_per_s"][phase] = {"in_process": round(args.documents / local, 1),
                                                name: round(args.documents / remote, 1),
                                                f"{name}_vs_in_process": round(local / remote, 2),
                                                "settled_vs_in_process": round(local / distributed[phase]["settled_s"], 2)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
