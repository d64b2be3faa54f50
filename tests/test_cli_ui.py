"""`indx ui`: the README's UI command, run as written from a fresh clone, serves the Dagster UI
of the data directory (its GraphQL endpoint answers with the code location and its assets),
and stops cleanly, webserver, daemon and code server with it."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
QUERY = """{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } }
             assetNodes { assetKey { path } } }"""


def readme_ui_command() -> str:
    """The one command of the README's UI section, as written there."""
    section = (ROOT / "README.md").read_text().split("## The lineage UI", 1)[1]
    (block,) = re.findall(r"```bash\n(.*?)```", section.split("\n## ", 1)[0], flags=re.S)
    (command,) = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return command


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_readme_ui_command_serves_the_data_directory_and_stops_cleanly(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and the repository's history to clone")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    command = readme_ui_command()
    assert command.split()[:2] == ["indx", "ui"], command
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("INDX_HOME", "DAGSTER_HOME")}
    env.update(INDX_UI_PORT=str(port), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    log = tmp_path / "ui.log"  # a file, not a pipe: nobody reads Dagster's log while it runs
    with log.open("w") as out:
        ui = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=clone, env=env, start_new_session=True,
                              stdout=out, stderr=subprocess.STDOUT)
    try:
        answer = None
        deadline = time.monotonic() + 300  # the webserver and the code server start on a loaded machine
        while time.monotonic() < deadline and ui.poll() is None:
            try:
                answer = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": QUERY}, timeout=10).json()
                locations = answer["data"]["workspaceOrError"]["locationEntries"]
                if locations and locations[0]["loadStatus"] == "LOADED":
                    break
            except (httpx.HTTPError, ValueError, KeyError, TypeError):
                pass
            time.sleep(2)
        assert answer is not None, log.read_text()[-3000:]
        assert answer["data"]["workspaceOrError"]["locationEntries"] == [
            {"name": "indx_assets.definitions", "loadStatus": "LOADED"}]
        assets = {"/".join(node["assetKey"]["path"]) for node in answer["data"]["assetNodes"]}
        assert {"source_documents", "page_outputs", "chunk_map", "chunk_embeddings", "chunks_table"} <= assets
        # the instance is the data directory's, created in the clone as `indx ingest` would
        assert (clone / ".indx" / "dagster" / "dagster.yaml").is_file()

        ui.send_signal(signal.SIGINT)  # Ctrl-C
        ui.wait(timeout=120)
        deadline = time.monotonic() + 60
        while _group_alive(ui.pid) and time.monotonic() < deadline:
            time.sleep(1)
        assert not _group_alive(ui.pid), "a process of the UI outlived Ctrl-C"
    finally:
        if _group_alive(ui.pid):
            os.killpg(ui.pid, signal.SIGKILL)
        ui.wait(timeout=60)
