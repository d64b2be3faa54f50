"""`indx stats` on a generated corpus, checked against the LanceDB table and the page outputs."""

import importlib
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from indx_assets.analytics import corpus_stats
from indx_assets.definitions import build_resources
from indx_assets.runner import materialize_partitions, sync_partitions
from indx_assets.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from make_sample_corpus import write_corpus  # noqa: E402


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    tmp = tmp_path_factory.mktemp("stats")
    corpus = tmp / "corpus"
    write_corpus(corpus)
    (corpus / "empty.md").write_bytes(b"")
    (corpus / "garbage.txt").write_bytes(bytes(range(256)) * 64)
    home = tmp / "indx"
    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                        corpus_roots=(str(corpus),))
    (tmp / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp / "dagster")) as instance:
        sync = sync_partitions(instance, settings)
        assert all(r.success for r in materialize_partitions(instance, settings, sync.current))
    return settings


def test_stats_agree_with_the_lancedb_table_and_the_pages(ingested: Settings) -> None:
    stats = corpus_stats(ingested.storage_uri)
    resources = build_resources(ingested)
    rows = resources["lancedb"].table().to_arrow().select(["source_id", "chunker", "text", "vector"]).to_pylist()  # type: ignore[attr-defined]
    per_source = Counter(r["source_id"] for r in rows)
    documents = sum(1 for p in Path(ingested.corpus_roots[0]).rglob("*") if p.is_file())
    assert stats["documents"] == documents and stats["chunks"] == len(rows)
    counts = sorted([*per_source.values(), *[0] * (documents - len(per_source))])
    assert stats["chunks_per_document"]["min"] == counts[0] == 0  # empty.md and garbage.txt have none
    assert stats["chunks_per_document"]["max"] == counts[-1]
    assert stats["chunks_per_document"]["mean"] == round(statistics.mean(counts), 1)
    sizes = [len(r["text"]) for r in rows]
    assert (stats["chunk_characters"]["min"], stats["chunk_characters"]["max"]) == (min(sizes), max(sizes))
    shares = Counter(r["chunker"] for r in rows)
    assert {k: v["chunks"] for k, v in stats["chunks_by_chunker"].items()} == dict(shares)
    assert sum(v["share"] for v in stats["chunks_by_chunker"].values()) == pytest.approx(1.0, abs=1e-3)
    pages = {s: resources["storage"].read("page_outputs", s).column("status").to_pylist()  # type: ignore[attr-defined]
             for s in ("empty.md", "garbage.txt")}
    assert stats["pages_without_chunks"] == sum(len(p) for p in pages.values())
    assert set(stats["pages_without_chunks_by_status"]) == {s for p in pages.values() for s in p}
    assert stats["unembedded_chunks"] == sum(r["vector"] is None for r in rows)


def test_the_stats_command_prints_json_and_a_table(ingested: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from indx_assets.cli import app

    importlib.import_module("indx_assets.cli.stats")
    monkeypatch.setenv("INDX_HOME", str(ingested.home))
    done = CliRunner().invoke(app, ["stats", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output) == corpus_stats(ingested.storage_uri)
    table = CliRunner().invoke(app, ["stats"])
    assert table.exit_code == 0 and "chunks per document" in table.output and "pages without chunks: 2" in table.output


def test_stats_before_any_ingest_say_so(tmp_path: Path) -> None:
    assert corpus_stats(str(tmp_path / "nothing")) == {"documents": 0, "chunks": 0}
