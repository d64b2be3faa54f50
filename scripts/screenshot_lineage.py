"""Screenshot the lineage UI: a real dagster-webserver on loopback, driven by headless Chromium.

`python scripts/screenshot_lineage.py` ingests the sample corpus into a temporary INDX_HOME,
starts `dagster-webserver -w workspace.yaml` on a free port, and saves the asset graph page
as `docs/lineage.png` (the README's picture). `tests/test_webserver_ui.py` uses the same
helpers.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LOCATION = "indx_assets.definitions"
GRAPH_PATH = f"/locations/{LOCATION}/asset-groups/ingestion/lineage"
DAGSTER_YAML = ROOT / "deploy" / "dagster.yaml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def environment(home: Path, corpus: Path) -> dict[str, str]:
    return {**os.environ, "INDX_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"), "INDX_CORPUS": str(corpus)}


@contextmanager
def webserver(home: Path, corpus: Path, timeout: float = 90) -> Iterator[str]:
    """A dagster-webserver on 127.0.0.1 over `workspace.yaml`; yields its base URL."""
    port = free_port()
    exe = str(Path(sys.executable).parent / "dagster-webserver")
    log = open(home / "webserver.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([exe, "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"], cwd=ROOT,
                            env=environment(home, corpus), stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                loaded = graphql(url, "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }")
                statuses = [e["loadStatus"] for e in loaded["workspaceOrError"]["locationEntries"]]
                if statuses and all(s == "LOADED" for s in statuses):
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dagster-webserver did not come up: {(home / 'webserver.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def graphql(url: str, query: str, variables: dict | None = None) -> dict:
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(f"{url}/graphql", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.load(response)
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"GraphQL HTTP {exc.code}: {exc.read()[:2000]!r}") from None
    if answer.get("errors"):
        raise RuntimeError(f"GraphQL errors: {answer['errors']}")
    return answer["data"]


def screenshot(url: str, out: Path, size: tuple[int, int] = (1600, 1000), budget_ms: int = 20000) -> None:
    """Load `url` in headless Chromium and save a PNG (the virtual time budget lets the page's
    scripts fetch and lay out the graph before the picture is taken)."""
    if CHROMIUM is None:
        raise FileNotFoundError("chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
             f"--virtual-time-budget={budget_ms}", f"--screenshot={out}", url],
            check=True, capture_output=True, timeout=120,
        )


def ingest_sample(home: Path, corpus: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_sample_corpus import write_corpus

    write_corpus(corpus)
    (home / "dagster").mkdir(parents=True, exist_ok=True)
    shutil.copy(DAGSTER_YAML, home / "dagster" / "dagster.yaml")  # the shipped instance config, NUX off
    subprocess.run([str(Path(sys.executable).parent / "indx"), "ingest", str(corpus), "--json"],
                   env=environment(home, corpus), check=True, capture_output=True, timeout=600)


def main() -> None:
    out = ROOT / "docs" / "lineage.png"
    out.parent.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        home, corpus = Path(tmp) / "indx", Path(tmp) / "corpus"
        ingest_sample(home, corpus)
        with webserver(home, corpus) as url:
            screenshot(url + GRAPH_PATH, out)
    print(out)


if __name__ == "__main__":
    main()
