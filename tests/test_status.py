"""`indx status`, `indx backfill` and `indx restore` on a real instance, through the command line app."""

import importlib
import json
from pathlib import Path

import dagster as dg
import pytest
from chunker_dists import install
from dagster._utils.test.data_versions import get_stale_status_resolver
from typer.testing import CliRunner

from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.wiring.assets.status import CODE_VERSION, UPSTREAM_DATA, code_versions, corpus_status
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.settings import Settings


def test_status_agrees_with_dagsters_resolver_and_pages_give_the_same_answer(
    instance, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sync = sync_partitions(instance, settings)
    before = corpus_status(instance, code_versions(build_definitions(settings)))
    n = len(sync.current)
    assert {k.to_user_string(): len(s.missing) for k, s in before.assets.items()} == dict.fromkeys(
        ["source_documents", "page_outputs", "chunk_map", "chunk_embeddings", "chunks_table"], n)
    assert all(r.success for r in materialize_partitions(instance, settings, sync.current))
    install(tmp_path / "site", monkeypatch, distribution="plain-chunkers", chunkers={"plain": "plain_text_only"})
    materialize_partitions(instance, settings, ["corpus/notes/tea-harvest.txt"], selection=["chunk_map"])

    defs = build_definitions(settings)
    status = corpus_status(instance, code_versions(defs))
    chunk_map = status.assets[dg.AssetKey("chunk_map")]
    assert chunk_map.stale == {CODE_VERSION: sorted(set(sync.current) - {"corpus/notes/tea-harvest.txt"}, key=sync.current.index)}
    assert chunk_map.fresh == 1
    assert status.assets[dg.AssetKey("chunk_embeddings")].stale == {UPSTREAM_DATA: ["corpus/notes/tea-harvest.txt"]}
    assert status.assets[dg.AssetKey("page_outputs")].fresh == n

    resolver = get_stale_status_resolver(instance, list(defs.assets))  # type: ignore[arg-type]
    for key in (dg.AssetKey("chunk_map"), dg.AssetKey("page_outputs")):
        theirs = {pk for pk in sync.current if resolver.get_status(key, pk).value == "STALE"}
        ours = {pk for keys in status.assets[key].stale.values() for pk in keys}
        assert ours == theirs, key
    paged = corpus_status(instance, code_versions(defs), page_size=2)
    assert paged.to_json() == status.to_json() and paged.order == status.order


@pytest.fixture
def cli(settings: Settings, monkeypatch: pytest.MonkeyPatch):
    """Run `indx ...` in this process (the commands are the installed Typer app; `open_instance`
    points DAGSTER_HOME at the data directory, restored after the test)."""
    from indx_assets.app.cli import COMMAND_MODULES, app

    for name in COMMAND_MODULES:
        importlib.import_module(f"indx_assets.app.cli.{name}")
    monkeypatch.setenv("INDX_HOME", str(settings.home))
    monkeypatch.setenv("DAGSTER_HOME", str(settings.home / "dagster"))

    def run(*args: str):
        return CliRunner().invoke(app, list(args), catch_exceptions=False)

    return run


def test_backfill_runs_exactly_the_stale_partitions_tags_the_table_and_restore_brings_it_back(
    settings, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("ingest", settings.corpus_roots[0], "--json").exit_code == 0
    n = sum(1 for p in Path(settings.corpus_roots[0]).rglob("*") if p.is_file())
    install(tmp_path / "site", monkeypatch, distribution="plain-chunkers", chunkers={"plain": "plain_text_only"})

    status = json.loads(cli("status", "--json").stdout)
    assert status["assets"]["chunk_map"] == {"missing": 0, "stale": n, "stale_by_cause": {CODE_VERSION: n}, "fresh": 0}

    done = cli("backfill", "--stale", "--json")
    assert done.exit_code == 0, done.output[-2000:]
    summary = json.loads(done.stdout)
    assert summary["to_run"] == n and summary["tag"].startswith("before-rechunk-") and not summary["failed_runs"]
    status = json.loads(cli("status", "--json").stdout)
    assert all(a["fresh"] == n for a in status["assets"].values()), status
    again = json.loads(cli("backfill", "--stale", "--json").stdout)
    assert again["to_run"] == 0 and again["runs"] == 0 and again["tag"] is None

    def tea_texts() -> list[str]:
        table = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
        return [r["text"] for r in table if r["source_id"] == "corpus/notes/tea-harvest.txt"]

    assert all(t.startswith("plain: ") for t in tea_texts())
    restored = json.loads(cli("restore", summary["tag"], "--json").stdout)
    assert restored["version"] > restored["version_before"]
    assert tea_texts() and not any(t.startswith("plain: ") for t in tea_texts())
    missing = cli("restore", "no-such-tag")
    assert missing.exit_code == 2 and summary["tag"] in missing.stderr


def test_backfill_rejects_unknown_assets(cli) -> None:
    done = cli("backfill", "--assets", "chunk_map,chunk_mop")
    assert done.exit_code == 2 and "chunk_mop" in done.stderr
