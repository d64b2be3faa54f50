"""The corpus lifecycle through real `indx` processes on a real data directory: files that go
and come back, roots that go missing, two roots with the same paths, and entries nobody can
read. Every command here is a subprocess with its own INDX_HOME, as a user would run it."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

INDX = str(Path(sys.executable).parent / "indx")


#: setpriv's way to run as root for whom file permissions hold (see `_as_a_user`)
WITHOUT_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def indx(home: Path, *args: str, stdin: str | None = None, user: str | None = None) -> subprocess.CompletedProcess:
    """Run `indx ARGS` with INDX_HOME=home (`user="root-without-dac"`: through `setpriv`)."""
    env = {"INDX_HOME": str(home), "PATH": os.environ["PATH"], "HOME": str(home.parent),
           **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}}  # the test's own import path
    command = [INDX, *args]
    if user == "root-without-dac":
        command = [*WITHOUT_DAC, *command]
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
    assert set(table_sources(home)) == set(first) - {"c/a.txt"}
    (tmp_path / "away.txt").rename(corpus / "a.txt")
    summary = ingest(home)
    assert summary["documents_by_status"] == {"ok": 2}
    assert table_sources(home) == first, "the restored file's rows are back, as many as before"
    assert all(a["missing"] == a["stale"] == 0 and a["fresh"] == 2 for a in status(home)["assets"].values())
    backfill = indx(home, "backfill", "--json")
    assert backfill.returncode == 0 and json.loads(backfill.stdout)["to_run"] == 0, "backfill agrees: nothing to do"


def test_a_missing_root_removes_nothing_until_it_is_forgotten(tmp_path: Path) -> None:
    home = tmp_path / "indx"
    notes, disk = write(tmp_path / "notes", NOTES), write(tmp_path / "disk", {"far/c.txt": "Harbour pilots board at the bar buoy.\n"})
    ingest(home, str(notes), str(disk))
    before = table_sources(home)
    assert set(before) == {"notes/a.txt", "notes/b.md", "disk/far/c.txt"}
    disk.rename(tmp_path / "unmounted")

    summary = ingest(home, expect=1)
    assert summary["missing_roots"] == [f"disk={disk}"] and summary["kept"] == 1 and summary["removed"] == 0
    assert "corpus root missing" in summary["problems"]["disk"]
    assert table_sources(home) == before, "a missing root's documents stay in the table"
    assert status(home)["partitions"] == 3

    refused = indx(home, "forget", "disk", stdin="n\n")
    assert refused.returncode == 1 and "Remove 1 document(s) of root disk" in refused.stderr
    assert table_sources(home) == before
    unknown = indx(home, "forget", "nowhere", "--yes")
    assert unknown.returncode == 2 and "nowhere is not a corpus root" in unknown.stderr

    done = indx(home, "forget", "disk", "--yes", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["removed"] == 1
    assert set(table_sources(home)) == {"notes/a.txt", "notes/b.md"}
    assert not list((home / "assets").glob("*/source=disk*")), "its stored outputs are gone from every asset"
    after = status(home)
    assert after["partitions"] == 2 and all(a["fresh"] == 2 for a in after["assets"].values())
    assert ingest(home)["missing_roots"] == [], "a forgotten root is no longer ingested"


def test_the_same_path_under_two_roots_is_two_sources_and_two_roots_with_one_label_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "indx"
    first = write(tmp_path / "x" / "docs", {"notes.md": "# Bells\n\nFog bells were rung by a clockwork striker.\n"})
    second = write(tmp_path / "y" / "docs", {"notes.md": "# Lamps\n\nParaffin lamps replaced whale oil in 1870.\n"})

    refused = indx(home, "ingest", str(first), str(second))
    assert refused.returncode == 2 and "two corpus roots are labelled 'docs'" in refused.stderr
    written = {p.name for p in home.glob("*")} if home.exists() else set()
    assert written <= {"indx.lock"}, f"nothing but the writer's lock is written before the roots are checked: {written}"

    summary = ingest(home, str(first), f"lamps={second}")
    assert summary["documents"] == 2 and summary["documents_by_status"] == {"ok": 2}
    assert set(table_sources(home)) == {"docs/notes.md", "lamps/notes.md"}
    hits = json.loads(indx(home, "search", "paraffin lamps replaced whale oil", "--json", "-k", "1").stdout)
    assert hits[0]["source_id"] == "lamps/notes.md" and "Paraffin" in hits[0]["content"]

    # a third root whose name is taken is refused, and the index is left as it was
    third = write(tmp_path / "z" / "lamps", {"more.md": "More lamps.\n"})
    recorded = (home / "corpus.json").read_text()
    again = indx(home, "ingest", str(third))
    assert again.returncode == 2 and "labelled 'lamps'" in again.stderr
    assert (home / "corpus.json").read_text() == recorded


def test_overlapping_roots_are_refused_so_no_file_has_two_ids(tmp_path: Path) -> None:
    home = tmp_path / "indx"
    docs = write(tmp_path / "docs", {"top.md": "Tide tables.\n", "sub/x.md": "# Buoys\n\nCan buoys mark the port side.\n"})
    sub = docs / "sub"

    refused = indx(home, "ingest", str(docs), str(sub))
    assert refused.returncode == 2, refused.stdout + refused.stderr[-3000:]
    message = refused.stderr.strip()
    assert len(message.splitlines()) == 1 and f"docs={docs}" in message and f"sub={sub}" in message and "overlap" in message
    written = {p.name for p in home.glob("*")} if home.exists() else set()
    assert written <= {"indx.lock"}, f"nothing but the writer's lock is written: {written}"

    ingest(home, str(docs))
    assert set(table_sources(home)) == {"docs/top.md", "docs/sub/x.md"}
    recorded = (home / "corpus.json").read_text()
    linked = tmp_path / "link"
    linked.symlink_to(sub)  # a link to a folder inside a root is inside it too
    for inner in (str(sub), f"buoys={sub}", str(linked)):  # inside the recorded root, labelled or not
        again = indx(home, "ingest", inner)
        assert again.returncode == 2 and "overlap" in again.stderr, (inner, again.stderr[-3000:])
    assert (home / "corpus.json").read_text() == recorded
    assert set(table_sources(home)) == {"docs/top.md", "docs/sub/x.md"}, "each file still has one id"


def _legacy_data_directory(home: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A data directory as the release before labelled ids wrote it: each source keyed by its
    bare relative path, and `corpus.json` listing plain paths. Built in this process with the
    real assets, a real instance and LanceDB; only the id rule is the old one (a corpus
    resource that locates a bare relative path under its root, as the old one did)."""
    import dagster as dg

    from indx_assets.app.runner import open_instance
    from indx_assets.wiring.definitions import build_definitions, build_resources
    from indx_assets.wiring.resources.corpus import CorpusResource
    from indx_assets.wiring.settings import Settings

    class BarePathCorpus(CorpusResource):
        def locate(self, source_id: str):  # the old rule: id = path relative to the one root
            from upath import UPath

            return UPath(corpus) / source_id

    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                        corpus_roots=(str(corpus),))
    instance = open_instance(settings)
    keys = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file())
    instance.add_dynamic_partitions("sources", keys)
    ingest_assets = next(a for a in build_definitions(settings).assets if a.node_def.name == "ingest_documents")
    resources = {**build_resources(settings), "corpus": BarePathCorpus(roots=[str(corpus)])}
    for key in keys:
        assert dg.materialize([ingest_assets], instance=instance, resources=resources, partition_key=key).success
    instance.dispose()
    (home / "corpus.json").write_text(json.dumps({"roots": [str(corpus)]}))


def test_a_data_directory_from_before_labels_is_rekeyed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "indx"
    # "c/a.txt" was the old id of c/c/a.txt and is the new id of c/a.txt: the old records must not count
    corpus = write(tmp_path / "c", {"a.txt": NOTES["a.txt"], "c/a.txt": NOTES["a.txt"], "b.md": NOTES["b.md"]})
    _legacy_data_directory(home, corpus, monkeypatch)
    assert set(table_sources(home)) == {"a.txt", "c/a.txt", "b.md"}

    summary = ingest(home)
    assert summary["documents_by_status"] == {"ok": 3}
    rows = table_sources(home)
    assert set(rows) == {"c/a.txt", "c/c/a.txt", "c/b.md"}, "every id is label/path now, none is left over"
    assert rows["c/a.txt"] == rows["c/c/a.txt"] >= 1
    assert json.loads((home / "corpus.json").read_text())["roots"] == [{"label": "c", "path": str(corpus)}]
    assert all(a["fresh"] == 3 and a["missing"] == a["stale"] == 0 for a in status(home)["assets"].values())
    again = ingest(home)
    assert again["removed"] == again["added"] == again["materializations"] == 0, "re-keyed once"


def _as_a_user(root: bool) -> dict:
    """Tests run as root, and root reads a chmod 000 file: the commands then run as root
    without the capabilities that let it (`setpriv` drops CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH), so the file permissions hold for them as for anyone."""
    return {"user": "root-without-dac"} if root else {}


@pytest.mark.skipif(os.geteuid() == 0 and not shutil.which("setpriv"), reason="root needs setpriv to drop its file capabilities")
def test_unreadable_folders_and_files_and_undecodable_names_are_per_file_problems(tmp_path: Path) -> None:
    home = tmp_path / "indx"
    corpus = write(tmp_path / "c", {**NOTES, "locked/d.txt": "Behind a locked door.\n", "sealed.txt": "Sealed.\n"})
    undecodable = os.fsencode(corpus) + b"/caf\xe9.txt"  # Latin-1 bytes: no UTF-8 name
    with open(undecodable, "wb") as f:
        f.write(b"Cafe au lait is coffee with hot milk.\n")
    as_user = _as_a_user(os.geteuid() == 0)
    first = ingest(home, str(corpus), **as_user)
    assert first["documents_by_status"] == {"ok": 5} and first["problems"] == {}, "an odd name is a name"
    (corpus / "locked").chmod(0o000)
    (corpus / "sealed.txt").write_text("Sealed, and changed.\n")
    (corpus / "sealed.txt").chmod(0o000)
    try:
        done = indx(home, "ingest", "--json", **as_user)
        assert done.returncode == 1, done.stderr[-3000:]
        assert "Traceback" not in done.stderr and "PermissionError" not in done.stderr.split("{")[0]
        summary = json.loads(done.stdout)
        assert summary["problems"]["c/locked/"].startswith("cannot list this folder: Permission denied")
        assert "PermissionError" in summary["problems"]["c/sealed.txt"]
        assert summary["documents_by_status"] == {"ok": 3, "failed": 1} and summary["kept"] == 1
        assert set(table_sources(home)) == {"c/a.txt", "c/b.md", "c/locked/d.txt", "c/sealed.txt",
                                            next(s for s in table_sources(home) if s.startswith("c/caf"))}
    finally:
        (corpus / "locked").chmod(0o755)
        (corpus / "sealed.txt").chmod(0o644)
    assert ingest(home, **as_user)["documents_by_status"] == {"ok": 5}
