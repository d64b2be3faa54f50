"""One `indx` writer per data directory, and nothing left held by a killed one (issue 16, cases
4 and 5), through real processes: two `indx ingest` started together on a fresh data directory,
and `kill -9` of an ingest holding the `embedder` pool slot of `deploy/dagster.yaml`."""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from indx_assets.app.home_lock import HomeLocked, writer_lock
from indx_assets.app.table_check import expected_chunk_ids, table_discrepancies
from indx_assets.pipeline.roots import parse_root
from indx_assets.wiring.assets.ingest import INGEST_POOL
from indx_assets.wiring.assets.partitions import SOURCES
from indx_assets.wiring.settings import Settings, recorded_roots

ROOT = Path(__file__).resolve().parent.parent
INDX = str(Path(sys.executable).parent / "indx")
TRIALS = 10


def _env(home: Path) -> dict[str, str]:
    return {"INDX_HOME": str(home), "PATH": str(Path(sys.executable).parent), "HOME": str(home)}


def _settings(home: Path) -> Settings:
    """The data directory as the next `indx` command would see it (the roots it recorded)."""
    return Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                    corpus_roots=recorded_roots(home))


HOLD = """
import sys, time
from pathlib import Path
from indx_assets.app.home_lock import writer_lock
with writer_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_killed_holder_leaves_no_lock_and_a_refused_one_names_it(tmp_path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(HomeLocked, match=rf"another indx process \(pid {holder.pid}\) holds INDX_HOME since 20"):
            with writer_lock(tmp_path, wait=0.5):
                pass
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    with writer_lock(tmp_path):  # at once: the kernel dropped the dead holder's lock
        with writer_lock(tmp_path):  # and one process may nest it
            pass


def _two_roots(tmp_path: Path) -> tuple[Path, Path]:
    """Two small corpus roots of different files (the cost of a trial is loading the model)."""
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    for n in range(3):
        (alpha / "notes").mkdir(parents=True, exist_ok=True)
        (alpha / "notes" / f"tea-{n}.txt").write_text(f"Tea note {n}. The second flush is picked in early summer.\n")
        beta.mkdir(exist_ok=True)
        (beta / f"lens-{n}.md").write_text(f"# Lens {n}\n\nA Fresnel lens of order {n} throws the beam far out to sea.\n")
    return alpha, beta


def _sources(home: Path, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The partitions the data directory's Dagster instance knows (opening it must work)."""
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
        return set(instance.get_dynamic_partitions(SOURCES.name))


@pytest.mark.slow
def test_two_first_ingests_at_once_leave_one_usable_index_equal_to_the_files(tmp_path, monkeypatch) -> None:
    # Before the lock: the two stamped a new instance's schema twice ("more than one head
    # present" from every later command), removed each other's sources, or one exited 1.
    alpha, beta = _two_roots(tmp_path)
    for trial in range(TRIALS):
        home = tmp_path / f"indx-{trial}"
        waiting = trial % 5 == 4  # two of ten: the waiting pair ingests twice
        wait = ["--wait", "600"] if waiting else []
        procs = [subprocess.Popen([INDX, "ingest", str(root), "--json", *wait], env=_env(home), text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for root in (alpha, beta)]
        outputs = [p.communicate(timeout=900) for p in procs]
        codes = [p.returncode for p in procs]
        if waiting:  # the second waits for the first, then ingests both roots
            assert codes == [0, 0], f"trial {trial}: {codes}\n" + "\n".join(o[1][-1500:] for o in outputs)
            roots = {str(alpha), str(beta)}
        else:  # the second is refused at once, naming the first
            assert sorted(codes) == [0, 75], f"trial {trial}: {codes}\n" + "\n".join(o[1][-1500:] for o in outputs)
            winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
            assert f"another indx process (pid {procs[winner].pid}) holds INDX_HOME since " in outputs[loser][1]
            assert "--wait" in outputs[loser][1]
            roots = {str((alpha, beta)[winner])}
        settings = _settings(home)
        assert {parse_root(spec).path for spec in settings.corpus_roots} == roots
        assert _sources(home, monkeypatch) == set(expected_chunk_ids(settings)), f"trial {trial}"
        assert table_discrepancies(settings) == [], f"trial {trial}"


def _wait_for_claimed_slot(home: Path, proc: subprocess.Popen, monkeypatch: pytest.MonkeyPatch) -> str:
    """The run id holding the `embedder` slot, once the ingest has claimed it."""
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
                claimed = instance.event_log_storage.get_concurrency_info(INGEST_POOL).claimed_slots
        except Exception:  # the instance is still being created by the ingest
            claimed = []
        if claimed:
            return claimed[0].run_id
        time.sleep(0.2)
    raise AssertionError(f"the ingest never held the {INGEST_POOL} slot (exit {proc.poll()})")


def _next_ingest_reclaims(root: Path, home: Path, killed_run: str, timeout: int) -> None:
    """The next `indx ingest` finishes: the killed run is failed, no slot is held, the table is right."""
    done = subprocess.run([INDX, "ingest", str(root), "--json"], env=_env(home), capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
        run = instance.get_run_by_id(killed_run)
        assert run is not None and run.status == dg.DagsterRunStatus.FAILURE
        assert instance.event_log_storage.get_concurrency_info(INGEST_POOL).claimed_slots == []
    assert table_discrepancies(_settings(home)) == []


def _deployed_home(tmp_path: Path) -> tuple[Path, Path]:
    """A corpus root and a data directory whose instance is `deploy/dagster.yaml`, as the README says."""
    alpha, _ = _two_roots(tmp_path)
    home = tmp_path / "indx"
    (home / "dagster").mkdir(parents=True)
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster" / "dagster.yaml")
    return alpha, home


@pytest.mark.slow
def test_an_ingest_killed_holding_the_embedder_slot_blocks_no_later_ingest(tmp_path, monkeypatch) -> None:
    # Before: the killed run stayed STARTED with the pool's one slot, and the next ingest
    # waited for that slot forever, printing nothing.
    alpha, home = _deployed_home(tmp_path)
    first = subprocess.Popen([INDX, "ingest", str(alpha)], env=_env(home), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        killed_run = _wait_for_claimed_slot(home, first, monkeypatch)
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    # Without --wait: a killed process leaves no lock behind either.
    _next_ingest_reclaims(alpha, home, killed_run, timeout=300)


RECORD = """
import sys
from pathlib import Path
from indx_assets.wiring.settings import record_roots
# written once before the kills begin: what is checked is that a rewrite killed at any moment
# leaves the recorded roots readable, not how fast a loaded machine writes the first time
record_roots(Path(sys.argv[1]), ["/data/" + "x" * 5000, "/more"])
print("writing", flush=True)
while True:
    record_roots(Path(sys.argv[1]), ["/data/" + "x" * 5000, "/more"])
"""


def test_roots_recorded_by_a_process_killed_mid_write_stay_readable(tmp_path) -> None:
    # The soak's kill -9 once hit `indx ingest` between truncating corpus.json and writing it.
    written = tuple(parse_root(root).spec for root in ("/data/" + "x" * 5000, "/more"))
    for trial in range(20):
        proc = subprocess.Popen([sys.executable, "-c", RECORD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "writing"
        time.sleep(0.05 + trial * 0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert recorded_roots(tmp_path) == written, f"trial {trial}"


WORKSPACE = """
load_from:
  - python_module:
      module_name: indx_assets.wiring.definitions
      location_name: indx_assets.definitions
      working_directory: {root}
"""


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (a run worker's step processes)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
def test_a_daemon_launched_run_whose_worker_is_killed_holds_no_slot_past_the_next_ingest(tmp_path, monkeypatch) -> None:
    # Before: such a run carried no indx tags, so nothing failed it; it stayed STARTED with the
    # `embedder` slot and the next `indx ingest` waited for that slot forever, printing nothing.
    from indx_assets.wiring.dagster_internals import run_worker_pid

    alpha, home = _deployed_home(tmp_path)
    first = subprocess.run([INDX, "ingest", str(alpha), "--json"], env=_env(home), capture_output=True, text=True,
                           timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    # A file big enough that embedding it holds the slot for seconds, registered as the sensor
    # would register it (a partition), for the daemon-launched run to ingest.
    words = [f"lighthouse{n} keeper{n % 97} trimmed wick{n % 13} tide{n % 31}" for n in range(15_000)]
    (alpha / "big.txt").write_text(". ".join(words) + ".\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
        instance.add_dynamic_partitions(SOURCES.name, ["alpha/big.txt"])
    workspace = tmp_path / "workspace.yaml"
    workspace.write_text(WORKSPACE.format(root=ROOT))
    env = {**_env(home), "DAGSTER_HOME": str(home / "dagster")}
    # The daemon's way: the run is queued, and the real daemon dequeues it and launches it with
    # the instance's run launcher (a run worker started through a code server).
    daemon = subprocess.Popen([str(Path(sys.executable).parent / "dagster-daemon"), "run", "-w", str(workspace)],
                              env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        launched = subprocess.run(
            [str(Path(sys.executable).parent / "dagster"), "job", "launch", "-w", str(workspace), "-j", "__ASSET_JOB",
             "-o", "ingest_documents", "--tags", '{"dagster/partition": "alpha/big.txt"}'],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert launched.returncode == 0, launched.stdout[-2000:] + launched.stderr[-2000:]
        deadline, worker, run_id = time.monotonic() + 600, None, None
        with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
            while worker is None and time.monotonic() < deadline:
                claimed = instance.event_log_storage.get_concurrency_info(INGEST_POOL).claimed_slots
                if claimed:
                    run_id = claimed[0].run_id
                    worker = run_worker_pid(instance, run_id)
                else:
                    time.sleep(0.05)
            assert worker is not None and run_id is not None, f"no daemon-launched run held the {INGEST_POOL} slot"
            run = instance.get_run_by_id(run_id)
            assert run is not None and "indx/pid" not in run.tags, "launched by the daemon, not by indx"
        for pid in [*_children(worker), worker]:  # the worker and its step process, as a crash would
            os.kill(pid, signal.SIGKILL)
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)  # the daemon and its code servers (it would retry the run)
        daemon.wait(timeout=120)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(daemon.pid, signal.SIGKILL)  # a code server that outlives the daemon
    _next_ingest_reclaims(alpha, home, run_id, timeout=900)
