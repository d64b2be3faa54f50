"""`indx stats` on a generated corpus, checked against the LanceDB table and the page outputs."""

import importlib
import json
import statistics
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from typer.testing import CliRunner

from indx_assets.app.analytics import corpus_stats, ingest_summary
from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.wiring.definitions import build_resources
from indx_assets.wiring.settings import Settings

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
             for s in ("corpus/empty.md", "corpus/garbage.txt")}
    assert stats["pages_without_chunks"] == sum(len(p) for p in pages.values())
    assert set(stats["pages_without_chunks_by_status"]) == {s for p in pages.values() for s in p}
    assert stats["unembedded_chunks"] == sum(r["vector"] is None for r in rows)


def test_the_stats_command_prints_json_and_a_table(ingested: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from indx_assets.app.cli import app

    importlib.import_module("indx_assets.app.cli.stats")
    monkeypatch.setenv("INDX_HOME", str(ingested.home))
    done = CliRunner().invoke(app, ["stats", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output) == corpus_stats(ingested.storage_uri)
    table = CliRunner().invoke(app, ["stats"])
    assert table.exit_code == 0 and "chunks per document" in table.output and "pages without chunks: 2" in table.output


def test_stats_before_any_ingest_say_so(tmp_path: Path) -> None:
    assert corpus_stats(str(tmp_path / "nothing")) == {"documents": 0, "chunks": 0}


def test_an_ingest_summary_counts_its_own_sources_only(ingested: Settings) -> None:
    resources = build_resources(ingested)
    rows = resources["lancedb"].table().to_arrow().select(["source_id", "chunker", "chunk_type", "vector"]).to_pylist()  # type: ignore[attr-defined]
    chunked = sorted({r["source_id"] for r in rows})
    sources = ["corpus/empty.md", "corpus/garbage.txt", chunked[0], chunked[-1], "corpus/never/ingested.md"]
    summary = ingest_summary(ingested.storage_uri, sources)

    mine = [r for r in rows if r["source_id"] in sources]
    assert summary["chunks"] == len(mine) < len(rows)
    assert summary["chunks_by_chunker"] == dict(Counter(r["chunker"] for r in mine))
    assert summary["chunks_by_type"] == dict(Counter(r["chunk_type"] for r in mine))
    assert summary["vectors"] == sum(r["vector"] is not None for r in mine)
    assert summary["unembedded_chunks"] == sum(r["vector"] is None for r in mine)
    # Each document's record, read file by file: the status and reason the reader recorded.
    records = {s: json.loads(resources["storage"].read("page_outputs", s).schema.metadata[b"indx.document"])  # type: ignore[attr-defined]
               for s in sources[:4]}
    assert summary["documents"] == 5
    assert summary["documents_by_status"] == dict(Counter(r["status"] for r in records.values()), **{"not ingested": 1})
    assert summary["problems"] == {s: r["reason"] for s, r in records.items() if r["status"] != "ok" and r["reason"]}
    assert set(summary["problems"]) == {"corpus/empty.md", "corpus/garbage.txt"}
    pages = Counter(st for s in sources[:4] for st in resources["storage"].read("page_outputs", s).column("status").to_pylist())  # type: ignore[attr-defined]
    assert summary["pages_by_status"] == dict(pages)


_COUNT_PEAK = r"""
import re, sys
from pathlib import Path
from indx_assets.app.analytics import dataset, table_counts
from indx_assets.wiring.assets import stages

def rss(key):
    return int(re.search(key + r":\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) * 1024

data = dataset(sys.argv[1], stages.CHUNKS_TABLE)
before = rss("VmRSS")
counts = table_counts(data)
print(counts["vectors"], sum(counts["unembedded_by_type"].values()), rss("VmHWM") - before)
"""


def _count_peak(tmp: Path, rows: int) -> tuple[int, int, int]:
    """A chunk table of one `rows`-row source (every 100th chunk an image without a vector),
    counted (`table_counts`, as the ingest summary and `indx stats` count) in a process of its
    own: the vectors, the unembedded chunks, and the memory counting took (VmHWM over VmRSS before)."""
    import subprocess

    import numpy as np
    import pyarrow as pa

    from indx_assets.pipeline.schema import chunk_rows
    from indx_assets.wiring.assets.stages import CHUNKS_TABLE
    from indx_assets.wiring.resources.storage import StorageResource

    schema = chunk_rows(384)
    vectors = np.random.default_rng(0).random((4096, 384), dtype=np.float32)

    def batches() -> Iterator[pa.RecordBatch]:
        for at in range(0, rows, 4096):
            n = min(4096, rows - at)
            image = [(at + i) % 100 == 0 for i in range(n)]
            flat = pa.array(vectors[:n].reshape(-1))
            column = pa.FixedSizeListArray.from_arrays(flat, 384, mask=pa.array(image))
            given = {
                "id": [f"c{at + i}" for i in range(n)], "source_id": ["corpus/ledger.xlsx"] * n,
                "chunk_type": ["image" if m else "table" for m in image], "chunker": ["sheets"] * n,
                "text": [f"Entry {at + i} 2020-01-02 Rent {(at + i) * 1.25} paid " * 8 for i in range(n)],
                "vector": column}
            yield pa.RecordBatch.from_arrays([pa.array(given[f.name], f.type) if f.name in given else pa.nulls(n, f.type)
                                              for f in schema], schema=schema)

    root = tmp / "assets"
    # as `stages.write_rows` stores a long document's rows: no dictionary for texts and pictures
    StorageResource(root=str(root)).write_batches(CHUNKS_TABLE, "corpus/ledger.xlsx", schema, batches(),
                                                  [n for n in schema.names if n not in ("text", "image")])
    done = subprocess.run([sys.executable, "-c", _COUNT_PEAK, str(root)], capture_output=True, text=True, check=True)
    vectors_counted, unembedded, peak = map(int, done.stdout.split())
    return vectors_counted, unembedded, peak


def test_counting_a_chunk_table_six_times_as_long_takes_no_more_memory(tmp_path: Path) -> None:
    short, long = _count_peak(tmp_path / "short", 8_000), _count_peak(tmp_path / "long", 48_000)
    assert (short[0], short[1]) == (8_000 - 80, 80) and (long[0], long[1]) == (48_000 - 480, 480)
    # a dataset scan filtered on the vectors' nulls read ahead: 81 MiB, then 209 MiB (read a row group
    # at a time, 56 and 72)
    assert long[2] < short[2] + 32 * 2**20, f"{short[2] / 2**20:.0f} MiB, then {long[2] / 2**20:.0f} MiB for 6x the rows"
