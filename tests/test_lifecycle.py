"""The corpus lifecycle through real `indx` processes on a real data directory: files that go
and come back, roots that go missing, two roots with the same paths, and entries nobody can
read. Every command here is a subprocess with its own INDX_HOME, as a user would run it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

INDX = str(Path(sys.executable).parent / "indx")


def indx(home: Path, *args: str, stdin: str | None = None, user: str | None = None) -> subprocess.CompletedProcess:
    """Run `indx ARGS` with INDX_HOME=home (as `user`, through `setpriv`, when given)."""
    env = {"INDX_HOME": str(home), "PATH": os.environ["PATH"], "HOME": str(home.parent)}
    command = [INDX, *args]
    if user is not None:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    return subprocess.run(command, env=env, input=stdin, capture_output=True, text=True, timeout=600)


def ingest(home: Path, *args: str, expect: int = 0, **kwargs) -> dict:
    done = indx(home, "ingest", *args, "--json", **kwargs)
    assert done.returncode == expect, done.stdout + done.stderr[-3000:]
    return json.loads(done.stdout)


def status(home: Path) -> dict:
    done = indx(home, "status", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def table_sources(home: Path) -> dict[str, int]:
    """Rows per source_id in the LanceDB table (read in this process: nothing is written)."""
    import lancedb

    table = lancedb.connect(str(home / "lancedb")).open_table("chunks")
    ids = table.to_arrow().column("source_id").to_pylist()
    return {s: ids.count(s) for s in set(ids)}


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


NOTES = {
    "a.txt": "Lighthouse keepers trimmed the wick every four hours through the night.\n",
    "b.md": "# Tea\n\nFirst flush Darjeeling is picked in March, before the monsoon.\n",
}


def test_a_removed_then_restored_file_is_indexed_again_and_status_agrees(tmp_path: Path) -> None:
    home, corpus = tmp_path / "indx", write(tmp_path / "c", NOTES)
    ingest(home, str(corpus))
    first = table_sources(home)
    (corpus / "a.txt").rename(tmp_path / "away.txt")
    assert ingest(home)["removed"] == 1
    assert set(table_sources(home)) == set(first) - {"a.txt"}
    (tmp_path / "away.txt").rename(corpus / "a.txt")
    summary = ingest(home)
    assert summary["documents_by_status"] == {"ok": 2}
    assert table_sources(home) == first, "the restored file's rows are back, as many as before"
    assert all(a["missing"] == a["stale"] == 0 and a["fresh"] == 2 for a in status(home)["assets"].values())
