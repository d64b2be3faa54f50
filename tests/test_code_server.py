"""The code server of a multi-process deployment (`indx_assets.app.code_server`) stops on SIGTERM,
as `cluster.py down` and `restart` ask it to, even when started with SIGINT ignored, as every
process of a background job of a non-interactive shell is (`cluster.py up DIR &` in a script)."""

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


def test_sigterm_stops_a_code_server_started_with_sigint_ignored(tmp_path: Path) -> None:
    port = _free_port()
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path), "INDX_HOME": str(tmp_path / "indx"),
           "DAGSTER_HOME": str(tmp_path / "dagster"), "INDX_CORPUS": str(ROOT / "data" / "sample")}
    (tmp_path / "dagster").mkdir()
    log = tmp_path / "code-server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "indx_assets.app.code_server", "-h", "127.0.0.1", "-p", str(port),
                                   "-m", "indx_assets.wiring.definitions"], cwd=ROOT, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, preexec_fn=_ignore_sigint)
    try:
        end = time.monotonic() + 120
        while "Started Dagster code server" not in log.read_text(errors="replace"):
            assert server.poll() is None and time.monotonic() < end, log.read_text(errors="replace")[-3000:]
            time.sleep(0.2)
        server.send_signal(signal.SIGTERM)
        try:
            assert server.wait(timeout=20) == 0, log.read_text(errors="replace")[-3000:]
        except subprocess.TimeoutExpired:
            raise AssertionError("the code server ignored SIGTERM") from None
        assert "Code server was interrupted" in log.read_text(errors="replace")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
