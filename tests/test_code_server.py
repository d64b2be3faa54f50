"""The code server of a multi-process deployment (`indx_assets.app.code_server`): it stops on
SIGTERM, as `cluster.py down` and `restart` ask it to, even when started with SIGINT ignored, as
every process of a background job of a non-interactive shell is (`cluster.py up DIR &` in a
script); and the fork server its runs' processes come from has imported the definitions by the
time it answers, not at its first run."""

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ignore_sigint() -> None:  # in the child, before exec: what `cmd &` in a script does
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(tmp_path: Path, **popen: object) -> tuple[subprocess.Popen, Path]:
    """A code server on a free port, once it answers; and its log."""
    port = _free_port()
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path), "INDX_HOME": str(tmp_path / "indx"),
           "DAGSTER_HOME": str(tmp_path / "dagster"), "INDX_CORPUS": str(ROOT / "data" / "sample")}
    (tmp_path / "dagster").mkdir()
    log = tmp_path / "code-server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "indx_assets.app.code_server", "-h", "127.0.0.1", "-p", str(port),
                                   "-m", "indx_assets.wiring.definitions"], cwd=ROOT, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, **popen)  # type: ignore[call-overload]
    end = time.monotonic() + 120
    while "Started Dagster code server" not in log.read_text(errors="replace"):
        if server.poll() is not None or time.monotonic() > end:
            server.kill()
            raise AssertionError(log.read_text(errors="replace")[-3000:])
        time.sleep(0.2)
    return server, log


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.kill()
        server.wait()


def test_sigterm_stops_a_code_server_started_with_sigint_ignored(tmp_path: Path) -> None:
    server, log = _start(tmp_path, preexec_fn=_ignore_sigint)
    try:
        server.send_signal(signal.SIGTERM)
        try:
            assert server.wait(timeout=20) == 0, log.read_text(errors="replace")[-3000:]
        except subprocess.TimeoutExpired:
            raise AssertionError("the code server ignored SIGTERM") from None
        assert "Code server was interrupted" in log.read_text(errors="replace")
    finally:
        _stop(server)


def _children(pid: int) -> list[int]:
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_the_fork_server_has_the_definitions_loaded_before_the_first_run(tmp_path: Path) -> None:
    """A chain change restarts the code server, and its first run's process is forked from the
    fork server: started at that run, the fork server's imports (4–5 s) delayed it."""
    server, _log = _start(tmp_path)
    try:
        fork_servers = [pid for pid in _children(server.pid)
                        if b"multiprocessing.forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(fork_servers) == 1, "no fork server runs before the first run is launched"
        # a bare interpreter holds about 10 MiB; with Dagster and the definitions imported, 185
        end = time.monotonic() + 60
        while _rss_mib(fork_servers[0]) < 150:
            assert time.monotonic() < end, f"the fork server holds {_rss_mib(fork_servers[0]):.0f} MiB: no definitions"
            time.sleep(0.5)
    finally:
        _stop(server)
