"""The multi-machine layout of indx-assets, on one machine: try it before a cluster.

    python deploy/local-cluster/cluster.py up DIR [--workers 2] [--corpus PATH ...] [--port 3000] [--executor celery|dask]
    . DIR/cluster.env            # then indx, dagster and psql talk to that topology
    python deploy/local-cluster/cluster.py status DIR
    python deploy/local-cluster/cluster.py restart DIR [--set INDX_CHAIN=...] [--code]
    python deploy/local-cluster/cluster.py down DIR

`up` starts, each as its own process, with its files and logs under DIR:

- PostgreSQL (Debian's `postgresql` package) holding Dagster's run, event-log and schedule
  storage (`dagster-postgres`), on a loopback port;
- with `--executor celery` (the default): Redis (Debian's `redis-server`) as the Celery broker
  and result backend, and `--workers` Celery workers (`dagster-celery worker start -A
  indx_assets.app.celery_worker`);
- with `--executor dask` (`pip install 'indx-assets[dask]'`): a Dask scheduler, and `--workers`
  Dask workers (`dask worker --preload indx_assets.app.dask_worker`);
- either way, each worker runs one step at a time, and its process loads the definitions and the
  embedding model as it starts, once, and keeps them;
- one code server (`indx_assets.app.code_server`: Dagster's gRPC server, whose runs' processes
  are forked from a process that imported the definitions once), named by DIR/workspace.yaml;
- the Dagster daemon (sensors and automation every `SENSOR_INTERVAL_S`, the run queue, run
  monitoring and retries);
- the Dagster webserver on `--port`.

The instance (`DIR/indx/dagster/dagster.yaml`) queues runs, gives the `embedder` pool two slots per
worker (a step running on each, and the next waiting for it: `STEPS_PER_WORKER`; their LanceDB
commits go one at a time: `LanceDBResource.writing`), retries failed runs, and
`INDX_EXECUTOR` (`celery` or `dask`) sends every launched run's steps to the workers. On a real cluster the same settings hold, with the
services on their own hosts (deploy/k8s). Everything it starts, `down` stops.
"""

import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
STATE = "cluster.json"

INSTANCE_YAML = Path(__file__).with_name("dagster.yaml")  # copied to $DAGSTER_HOME
WORKER_APP = "indx_assets.app.celery_worker"
DASK_PRELOAD = "indx_assets.app.dask_worker"
EXECUTORS = ("celery", "dask")
#: Processes of the topology that serve the others, as PostgreSQL and Redis do: a restart leaves
#: them running.
SERVICE_PROCESSES = ("dask-scheduler",)
CODE_SERVER = "indx_assets.app.code_server"
DEFINITIONS = "indx_assets.wiring.definitions"
#: The code location's name in every workspace (workspace.yaml's): sensor cursors, run history
#: and UI links are keyed by it.
LOCATION = "indx_assets.definitions"
#: Ingest steps in flight per worker (the `embedder` pool's slots, `set_ingest_slots`): the one it
#: runs, and the next, waiting in the broker's queue (Celery) or the scheduler's (Dask), which the
#: worker takes the moment it is free. With one per worker, the next run's step waited for a slot
#: instead, looked for it every half second and then went to the broker: a worker stood idle
#: about a second between two steps, and longer where no run was launched ahead (25.9 s of a
#: 78.1 s chain change of 2,000 documents ran one step, against 45 s of work for two workers).
STEPS_PER_WORKER = 2
#: Seconds between sensor ticks (`INDX_SENSOR_INTERVAL_S`; Dagster's default is 30). The corpus
#: sensor registers 500 files a tick and automation requests runs on ticks of its own: at 30 s a
#: 2,000-file corpus needs four ticks (90 s) to register, and each automation round waited 15 s on
#: average. A tick costs about 0.4 CPU-seconds at 400 documents: every 5 s, a sixth of a core.
SENSOR_INTERVAL_S = 5


class ClusterError(RuntimeError):
    """A service could not be started; the message says which and where its log is."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_bin() -> Path:
    """The directory of Debian's PostgreSQL server binaries (initdb, pg_ctl, postgres)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        raise ClusterError("PostgreSQL is not installed: apt-get install postgresql")
    return found[-1].parent


def as_postgres(cmd: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its commands as the `postgres` user then."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def run(cmd: list[str], **kw: object) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    if done.returncode:
        raise ClusterError(f"{' '.join(cmd[:4])} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-600:]}")


def start_postgres(state: dict) -> None:
    pg = postgres_bin()
    # under root the data must belong to `postgres`, in a folder it can reach (not a 0700 tmp)
    base = Path(tempfile.mkdtemp(prefix="indx-pg-"))
    base.chmod(0o755)
    data = base / "data"
    data.mkdir(mode=0o700)
    if os.geteuid() == 0:
        uid = pwd.getpwnam("postgres").pw_uid
        for p in (base, data):
            os.chown(p, uid, -1)
    port = free_port()
    state["postgres"] = {"base": str(base), "port": port}
    run(as_postgres([str(pg / "initdb"), "-D", str(data), "-U", "indx", "--auth=trust", "-E", "UTF8", "--no-instructions"]))
    run(as_postgres([str(pg / "pg_ctl"), "-D", str(data), "-l", str(base / "postgres.log"), "-w", "-t", "60", "-o",
                     f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c max_connections=200", "start"]))
    run([str(pg / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "indx", "dagster"])


def restart_postgres(state: dict) -> None:
    """Restart PostgreSQL at once (clients are disconnected), as an operator or a failover would."""
    pg = state["postgres"]
    run(as_postgres([str(postgres_bin() / "pg_ctl"), "-D", str(Path(pg["base"], "data")), "-l",
                     str(Path(pg["base"], "postgres.log")), "-m", "fast", "-w", "-t", "60", "restart"]))


def stop_postgres(state: dict, mode: str = "fast") -> None:
    pg = state.get("postgres")
    if pg and Path(pg["base"], "data").exists():
        subprocess.run(as_postgres([str(postgres_bin() / "pg_ctl"), "-D", str(Path(pg["base"], "data")), "-m", mode,
                                    "-w", "stop"]), capture_output=True)


def start_redis(state: dict, folder: Path) -> None:
    exe = shutil.which("redis-server")
    if exe is None:
        raise ClusterError("Redis is not installed: apt-get install redis-server")
    port = free_port()
    state["redis"] = {"port": port, "pidfile": str(folder / "redis.pid")}
    run([exe, "--port", str(port), "--bind", "127.0.0.1", "--daemonize", "yes", "--dir", str(folder),
         "--pidfile", str(folder / "redis.pid"), "--logfile", str(folder / "redis.log"), "--save", "", "--appendonly", "no"])
    wait_for_port(port, "redis", folder / "redis.log")


def stop_redis(state: dict) -> None:
    pidfile = Path(state.get("redis", {}).get("pidfile", "/nonexistent"))
    if pidfile.exists():
        kill(int(pidfile.read_text()), signal.SIGTERM)


def wait_for_port(port: int, what: str, log: Path, timeout: float = 60, pid: int | None = None) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pid is not None and not alive(pid):
            raise ClusterError(f"{what} exited; see {log}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise ClusterError(f"{what} did not listen on port {port} in {timeout:.0f} s; see {log}")


def environment(folder: Path, state: dict) -> dict[str, str]:
    """What every process of the topology (and a user's shell, through cluster.env) shares."""
    from indx_assets.app.runner import daemon_environment
    from indx_assets.wiring.settings import SENSOR_INTERVAL_ENV

    home = folder / "indx"
    env = {
        # a stage's materializations go to PostgreSQL in one statement, not one by one
        **daemon_environment({}),
        "INDX_HOME": str(home),
        "DAGSTER_HOME": str(home / "dagster"),
        "DAGSTER_PG_URL": f"postgresql+psycopg2://indx@127.0.0.1:{state['postgres']['port']}/dagster",
        "INDX_EXECUTOR": state.get("executor", "celery"),  # a cluster `up` before Dask: Celery's
        SENSOR_INTERVAL_ENV: str(SENSOR_INTERVAL_S),
    }
    if env["INDX_EXECUTOR"] == "celery":
        redis = f"redis://127.0.0.1:{state['redis']['port']}"
        env.update(CELERY_BROKER_URL=f"{redis}/0", CELERY_BACKEND_URL=f"{redis}/1")
    else:
        env["DASK_SCHEDULER_ADDRESS"] = f"tcp://127.0.0.1:{state['dask_port']}"

    if state.get("corpus"):
        env["INDX_CORPUS"] = os.pathsep.join(state["corpus"])
    return env


def process_environment(env: dict[str, str]) -> dict[str, str]:
    """The environment a process of the topology starts with: this one's, with `env`, as a
    daemon's (a launched run's partitions announced one by one, so the automation sees them in
    flight, whatever this process had set: `runner.daemon_environment`), and this Python's
    scripts first on the PATH (`dagster-celery worker start` runs `celery` from the PATH: with
    the virtual environment not activated, every worker exited and `up` said nothing)."""
    from indx_assets.app.runner import daemon_environment

    path = os.pathsep.join([str(BIN), os.environ.get("PATH", os.defpath)])
    return daemon_environment({**os.environ, **env, "PATH": path})


def spawn(name: str, cmd: list[str], folder: Path, env: dict[str, str], state: dict) -> None:
    if not Path(cmd[0]).exists():
        extra = "dask" if Path(cmd[0]).name == "dask" else "scale"
        raise ClusterError(f"{Path(cmd[0]).name} is not installed beside this Python: pip install 'indx-assets[{extra}]'")
    log = open(folder / f"{name}.log", "ab")
    proc = subprocess.Popen(cmd, cwd=REPO, env=process_environment(env), stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    state["processes"][name] = proc.pid


def kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie of ours counts as gone)."""
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def stop_groups(pids: list[int], timeout: float = 30) -> None:
    """Stop processes and everything they started (each was started in its own session): all
    are asked at once, then waited for together (one by one, a chain change's restart waited
    for each process's shutdown in turn)."""
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(alive(pid) for pid in pids):
        time.sleep(0.2)
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)  # what outlived the request (a code server, a worker child)
        except ProcessLookupError:
            pass


def start_dask_scheduler(folder: Path, state: dict) -> None:
    """The Dask scheduler the runs hand their steps to, on a loopback port."""
    state["dask_port"] = free_port()
    spawn("dask-scheduler", [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(state["dask_port"]),
                             "--no-dashboard"], folder, {}, state)
    wait_for_port(state["dask_port"], "the Dask scheduler", folder / "dask-scheduler.log",
                  pid=state["processes"]["dask-scheduler"])


def up(folder: Path, workers: int, corpus: list[str], port: int, executor: str = "celery") -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    if (folder / STATE).exists():
        raise ClusterError(f"{folder} already holds a cluster: run `down` first")
    port = port or free_port()
    state: dict = {"processes": {}, "corpus": [c if "=" in c else str(Path(c).resolve()) for c in corpus],
                   "port": port, "workers": workers, "executor": executor}
    try:
        start_postgres(state)
        if executor == "celery":
            start_redis(state, folder)
        else:
            start_dask_scheduler(folder, state)
        env = environment(folder, state)
        dagster_home = Path(env["DAGSTER_HOME"])
        dagster_home.mkdir(parents=True, exist_ok=True)
        shutil.copy(INSTANCE_YAML, dagster_home / "dagster.yaml")
        if executor == "celery":
            (folder / "celery.yaml").write_text(json.dumps({"execution": {"config": {
                "broker": env["CELERY_BROKER_URL"], "backend": env["CELERY_BACKEND_URL"]}}}))
        write_env(folder, env)
        set_ingest_slots(env, STEPS_PER_WORKER * workers)
        start_dagster(folder, state, env)
    finally:
        (folder / STATE).write_text(json.dumps(state, indent=1))
    return state


def worker_threads(workers: int) -> dict[str, str]:
    """Each worker's share of this machine's cores for its embedder's matrix products
    (`OMP_NUM_THREADS`, which torch reads as it starts). Every worker embeds at once (a step
    each: `set_ingest_slots`), and torch otherwise starts a thread per core in each: two
    workers on two cores ran four threads, and the load took 246 s where it took 202 with one
    each. A setting of the user's (this environment's, or `restart --set`) wins."""
    share = max(1, (os.cpu_count() or 1) // max(1, workers))
    return {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(share))}


def set_ingest_slots(env: dict[str, str], slots: int) -> None:
    """Give the ingest op's pool (`embedder`) `slots` slots in the instance: `STEPS_PER_WORKER`
    per worker, so every worker runs an ingest step at once, each reading, chunking and embedding
    its own run's documents, and has the next waiting for it. Their LanceDB commits still go
    one at a time (`LanceDBResource.writing`: the database is a folder of this machine, as of a
    cluster's shared volume)."""
    import dagster as dg

    from indx_assets.wiring.assets.ingest import INGEST_POOL

    os.environ.update(env)  # the instance's storage is read from it
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        instance.event_log_storage.set_concurrency_slots(INGEST_POOL, slots)


def write_env(folder: Path, env: dict[str, str]) -> None:
    (folder / "cluster.env").write_text("".join(f"export {k}={v!r}\n" for k, v in env.items()))


def read_env(folder: Path) -> dict[str, str]:
    """What `. DIR/cluster.env` exports."""
    pairs = (line.removeprefix("export ").split("=", 1) for line in (folder / "cluster.env").read_text().splitlines())
    return {k: v.strip("'") for k, v in pairs}


def start_dagster(folder: Path, state: dict, env: dict[str, str]) -> None:
    """The code (`start_code`), then the daemon and the webserver, pointed at its code server
    by DIR/workspace.yaml (they load the definitions from it, so settings such as INDX_CHAIN
    take effect when the code starts)."""
    start_code(folder, state, env)
    workspace = folder / "workspace.yaml"
    workspace.write_text(json.dumps({"load_from": [{"grpc_server": {
        "host": "127.0.0.1", "port": state["code_port"], "location_name": LOCATION}}]}))
    spawn("daemon", [str(BIN / "dagster-daemon"), "run", "-w", str(workspace)], folder, env, state)
    spawn("webserver", [str(BIN / "dagster-webserver"), "-w", str(workspace), "-h", "127.0.0.1",
                        "-p", str(state["port"])], folder, env, state)
    wait_for_port(state["port"], "dagster-webserver", folder / "webserver.log", timeout=300,
                  pid=state["processes"]["webserver"])


def _is_code(name: str) -> bool:
    """Whether the process so named holds the code (the definitions, the chunker chain, the
    embedder): what a new release of the code replaces (`restart --code`)."""
    return name == "code-server" or name.startswith("worker-")


def start_code(folder: Path, state: dict, env: dict[str, str]) -> None:
    """The workers and the code server, on the code server's port of before if it had one."""
    worker_env = {**worker_threads(state["workers"]), **env}
    if state.get("executor") == "dask":
        # Dask samples every worker thread's stack each 10 ms for its dashboard's profile, which a
        # step's deep stacks (Dagster's, torch's) pay for; a setting of the user's wins
        profile = "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"
        worker_env = {profile: os.environ.get(profile, "False"), **worker_env}
    for i in range(state["workers"]):
        spawn(f"worker-{i}", worker_command(folder, state, i), folder, worker_env, state)
    # One code server for the daemon and the webserver (each would start its own from a
    # `python_module` workspace); it is up before they look for it.
    state.setdefault("code_port", free_port())
    spawn("code-server", [sys.executable, "-m", CODE_SERVER, "-h", "127.0.0.1", "-p", str(state["code_port"]),
                          "-m", DEFINITIONS, "--location-name", LOCATION, "-d", str(REPO)], folder, env, state)
    wait_for_port(state["code_port"], "the code server", folder / "code-server.log", timeout=300,
                  pid=state["processes"]["code-server"])


def worker_command(folder: Path, state: dict, i: int) -> list[str]:
    """The `i`th worker: one step at a time, in one process that keeps the embedding model
    loaded and is warmed as it starts."""
    if state.get("executor", "celery") == "celery":  # indx's app: dagster-celery's tasks
        return [str(BIN / "dagster-celery"), "worker", "start", "-A", WORKER_APP, "-y", str(folder / "celery.yaml"),
                "-n", f"indx-{i}", "--", "--concurrency=1"]
    # no memory limit: Dask would pause a worker at 80% of its share of this machine's memory,
    # which the embedding model alone may take on a small one
    return [str(BIN / "dask"), "worker", f"tcp://127.0.0.1:{state['dask_port']}", "--name", f"indx-{i}",
            "--nworkers", "1", "--nthreads", "1", "--memory-limit", "0", "--no-dashboard", "--preload", DASK_PRELOAD]


def restart(folder: Path, settings: dict[str, str], code_only: bool = False) -> None:
    """Restart the Dagster processes with `settings` added to the environment (cluster.env).

    `code_only`: restart only the code server and the workers, as a new release of the code
    is rolled out on a cluster. The daemon and the webserver go on; each watches the code
    server and loads the code location again when a new server answers on its port (Dagster's
    own watch of a `grpc_server` location). Their environment stays as it was: a setting they
    read themselves takes a full restart."""
    state = read_state(folder)
    stopped = [name for name in state["processes"]
               if name not in SERVICE_PROCESSES and (_is_code(name) or not code_only)]
    stop_groups([state["processes"].pop(name) for name in stopped])
    env = {**read_env(folder), **settings}
    write_env(folder, env)
    try:
        (start_code if code_only else start_dagster)(folder, state, env)
    finally:
        (folder / STATE).write_text(json.dumps(state, indent=1))


def level(folder: Path) -> bool:
    """Whether the topology has nothing left to do: no run queued or in flight, and every asset
    of every partition of the files under the roots fresh (`indx status`). Puts the
    environment of `. DIR/cluster.env` in place (the instance's storage is read from it)."""
    import dagster as dg

    os.environ.update(read_env(folder))
    instance = dg.DagsterInstance.from_config(read_env(folder)["DAGSTER_HOME"])
    busy = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
            dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]
    if instance.get_runs(dg.RunsFilter(statuses=busy), limit=1):
        return False
    done = subprocess.run([str(BIN / "indx"), "status", "--json"], env={**os.environ, **read_env(folder)},
                          capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise ClusterError(f"indx status failed: {done.stderr.strip()[-600:]}")
    status = json.loads(done.stdout)
    from indx_assets.wiring.definitions import build_resources
    from indx_assets.wiring.settings import Settings

    home = Path(read_env(folder)["INDX_HOME"])
    roots = tuple(json.loads((folder / STATE).read_text())["corpus"])
    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"), corpus_roots=roots)
    files = sum(1 for _ in build_resources(settings)["corpus"].iter_files())  # type: ignore[attr-defined]
    return status["partitions"] == files and all(
        a["missing"] == 0 and a["stale"] == 0 for a in status["assets"].values())


def settle(folder: Path, timeout: float) -> float:
    """Wait until `level` twice in a row (a sensor tick may be about to launch a run); the
    seconds it took."""
    started, streak = time.monotonic(), 0
    while time.monotonic() - started < timeout:
        streak = streak + 1 if level(folder) else 0
        if streak == 2:
            return time.monotonic() - started
        time.sleep(5)
    raise ClusterError(f"not level after {timeout:.0f} s; logs in {folder}")


#: What a process of the topology is, by its command line (first match), for `cpu_seconds`.
ROLES = (("multiprocessing.forkserver", "fork server"), ("multiprocessing.spawn", "runs"),
         ("resource_tracker", "code servers"), ("api grpc", "code servers"), (CODE_SERVER, "code servers"),
         ("dagster-daemon", "daemon"), ("dagster-webserver", "webserver"))


class Process(NamedTuple):
    """A process of this machine as /proc tells it: CPU-seconds (user + system) its own, and
    its ended children's that it collected."""

    pid: int
    ppid: int
    session: int
    cpu_s: float
    children_cpu_s: float
    cmd: str


def processes() -> Iterator[Process]:
    """Every process of this machine (one that ends meanwhile is left out)."""
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):  # ended meanwhile
            continue
        # after the name: state, ppid, pgrp, session, ..., utime (11), stime, cutime, cstime
        utime, stime, cutime, cstime = map(int, fields[11:15])
        yield Process(int(entry.name), int(fields[1]), int(fields[3]), (utime + stime) / ticks,
                      (cutime + cstime) / ticks, cmd)


def cpu_seconds(folder: Path) -> dict[str, float]:
    """CPU-seconds used so far by each part of the topology (`processes`): its processes' own,
    and that of their ended children (a run's process, a PostgreSQL session), which count for
    the parent's part, or for "runs" when the parent is a code or fork server. Processes that
    have ended without a parent here to collect them are not counted."""
    state = json.loads((folder / STATE).read_text())
    sessions = {pid: name for name, pid in state["processes"].items()}
    pg_port = f"-p {state['postgres']['port']}"
    redis_pid = Path(state.get("redis", {}).get("pidfile", "/nonexistent"))
    redis = int(redis_pid.read_text()) if redis_pid.exists() else -1
    found = list(processes())
    postmaster = next((p.pid for p in found if "postgres" in p.cmd and pg_port in p.cmd), -1)
    used: dict[str, float] = {}
    for p in found:
        if p.session in sessions:
            started = sessions[p.session]  # what `up` started: "worker-0", "daemon", ...
            # a Dask worker's process is the child its nanny spawned (`multiprocessing.spawn`)
            role = "workers" if started.startswith("worker") else next(
                (r for marker, r in ROLES if marker in p.cmd), started)
        elif p.pid == postmaster or p.ppid == postmaster:
            role = "postgres"
        elif p.pid == redis:
            role = "redis"
        else:
            continue
        used[role] = used.get(role, 0.0) + p.cpu_s
        children = "runs" if role in ("fork server", "code servers") else role
        used[children] = used.get(children, 0.0) + p.children_cpu_s
    return {role: round(s, 1) for role, s in sorted(used.items()) if s}


def down(folder: Path) -> None:
    path = folder / STATE
    if not path.exists():
        return
    state = json.loads(path.read_text())
    stop_groups(list(state["processes"].values()))
    stop_redis(state)
    stop_postgres(state)
    if state.get("postgres"):
        shutil.rmtree(state["postgres"]["base"], ignore_errors=True)
    path.unlink(missing_ok=True)  # a second `down` racing this one may have removed it


def read_state(folder: Path) -> dict:
    """What `up` recorded of the cluster in `folder`."""
    if not (folder / STATE).exists():
        raise ClusterError(f"no cluster in {folder}: start one with `up`")
    return json.loads((folder / STATE).read_text())


def status(folder: Path) -> dict[str, bool]:
    state = read_state(folder)
    up_ = {name: alive(pid) for name, pid in state["processes"].items()}
    if "redis" in state:
        redis_pid = Path(state["redis"]["pidfile"])
        up_["redis"] = redis_pid.exists() and alive(int(redis_pid.read_text()))
    with socket.socket() as s:
        up_["postgres"] = s.connect_ex(("127.0.0.1", state["postgres"]["port"])) == 0
    return up_


def _setting(text: str) -> tuple[str, str]:
    """A `--set NAME=VALUE` argument."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE (e.g. INDX_CHAIN='{{...}}')")
    return name, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_up = sub.add_parser("up", help="start PostgreSQL, Redis and Celery workers (or Dask's), the daemon and the webserver")
    p_up.add_argument("dir", type=Path)
    p_up.add_argument("--workers", type=int, default=2)
    p_up.add_argument("--corpus", action="append", default=[], help="a corpus root ([LABEL=]PATH), repeatable")
    p_up.add_argument("--port", type=int, default=3000, help="the webserver's port (0: any free one)")
    p_up.add_argument("--executor", choices=EXECUTORS, default="celery", help="what runs the runs' steps")
    for name in ("down", "status"):
        sub.add_parser(name).add_argument("dir", type=Path)
    p_restart = sub.add_parser("restart", help="restart the code server, workers, daemon and webserver, with settings changed")
    p_restart.add_argument("dir", type=Path)
    p_restart.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", type=_setting,
                           help="an environment setting for them (e.g. INDX_CHAIN=...), repeatable")
    p_restart.add_argument("--code", action="store_true",
                           help="only the code server and the workers, as a new release of the code is rolled out; "
                                "the daemon and the webserver load the new code location themselves")
    args = parser.parse_args()
    try:
        if args.command == "up":
            try:
                up(args.dir, args.workers, args.corpus, args.port, args.executor)
            except BaseException:
                down(args.dir)  # nothing half-started is left behind
                raise
            print(f"up: webserver http://127.0.0.1:{args.port}, {args.workers} {args.executor.capitalize()} workers; "
                  f"run `. {args.dir}/cluster.env` to use it from a shell")
        elif args.command == "restart":
            restart(args.dir, dict(args.set), code_only=args.code)
            print("restarted the code server and the workers" if args.code else "restarted")
        elif args.command == "down":
            down(args.dir)
            print("down")
        else:
            for name, ok in status(args.dir).items():
                print(f"{name:12} {'up' if ok else 'DOWN'}")
    except ClusterError as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
