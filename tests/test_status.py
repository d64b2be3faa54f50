"""`indx status`, `indx backfill` and `indx restore` on a real instance, through the CLI."""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._utils.test.data_versions import get_stale_status_resolver

from chunker_dists import install
from indx_assets.definitions import build_definitions, build_resources
from indx_assets.runner import materialize_partitions, sync_partitions
from indx_assets.settings import Settings
from indx_assets.status import CODE_VERSION, UPSTREAM_DATA, code_versions, corpus_status

pytest_plugins = ["ingest_fixtures"]  # the settings and instance fixtures

INDX = str(Path(sys.executable).parent / "indx")


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
    materialize_partitions(instance, settings, ["notes/tea-harvest.txt"], selection=["chunk_map"])

    defs = build_definitions(settings)
    status = corpus_status(instance, code_versions(defs))
    chunk_map = status.assets[dg.AssetKey("chunk_map")]
    assert chunk_map.stale == {CODE_VERSION: sorted(set(sync.current) - {"notes/tea-harvest.txt"}, key=sync.current.index)}
    assert chunk_map.fresh == 1
    assert status.assets[dg.AssetKey("chunk_embeddings")].stale == {UPSTREAM_DATA: ["notes/tea-harvest.txt"]}
    assert status.assets[dg.AssetKey("page_outputs")].fresh == n

    resolver = get_stale_status_resolver(instance, list(defs.assets))  # type: ignore[arg-type]
    for key in (dg.AssetKey("chunk_map"), dg.AssetKey("page_outputs")):
        theirs = {pk for pk in sync.current if resolver.get_status(key, pk).value == "STALE"}
        ours = {pk for keys in status.assets[key].stale.values() for pk in keys}
        assert ours == theirs, key
    paged = corpus_status(instance, code_versions(defs), page_size=2)
    assert paged.to_json() == status.to_json() and paged.order == status.order


def cli(settings: Settings, *args: str, extra_path: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "INDX_HOME": str(settings.home), "HOME": str(settings.home)}
    if extra_path:
        env["PYTHONPATH"] = extra_path
    return subprocess.run([INDX, *args], env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_backfill_runs_exactly_the_stale_partitions_tags_the_table_and_restore_brings_it_back(
    settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli(settings, "ingest", settings.corpus_roots[0], "--json").returncode == 0
    n = sum(1 for p in Path(settings.corpus_roots[0]).rglob("*") if p.is_file())
    site = tmp_path / "site"
    install(site, monkeypatch, distribution="plain-chunkers", chunkers={"plain": "plain_text_only"})

    status = json.loads(cli(settings, "status", "--json", extra_path=str(site)).stdout)
    assert status["assets"]["chunk_map"] == {"missing": 0, "stale": n, "stale_by_cause": {CODE_VERSION: n}, "fresh": 0}

    done = cli(settings, "backfill", "--stale", "--json", extra_path=str(site))
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["to_run"] == n and summary["tag"].startswith("before-rechunk-") and not summary["failed_runs"]
    status = json.loads(cli(settings, "status", "--json", extra_path=str(site)).stdout)
    assert all(a["fresh"] == n for a in status["assets"].values()), status
    again = json.loads(cli(settings, "backfill", "--stale", "--json", extra_path=str(site)).stdout)
    assert again["to_run"] == 0 and again["runs"] == 0 and again["tag"] is None

    def tea_texts() -> list[str]:
        table = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
        return [r["text"] for r in table if r["source_id"] == "notes/tea-harvest.txt"]

    assert all(t.startswith("plain: ") for t in tea_texts())
    restored = json.loads(cli(settings, "restore", summary["tag"], "--json").stdout)
    assert restored["version"] > restored["version_before"]
    assert tea_texts() and not any(t.startswith("plain: ") for t in tea_texts())
    missing = cli(settings, "restore", "no-such-tag")
    assert missing.returncode == 2 and summary["tag"] in missing.stderr


def test_backfill_rejects_unknown_assets(settings) -> None:
    done = cli(settings, "backfill", "--assets", "chunk_map,chunk_mop")
    assert done.returncode == 2 and "chunk_mop" in done.stderr
