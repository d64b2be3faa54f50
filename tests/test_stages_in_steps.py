"""A long document through the ingest stages in steps (`stages.EMBED_WINDOW`): its chunk map,
vectors and rows are written a batch at a time, never whole, and what a user sees is what the
whole-at-once path gives: the same chunks, each once in the search table with its own vector,
and the same data versions (so no data dir re-embeds on upgrade).

The stages run for real: a real ledger, the real chain, a real (tiny) sentence-transformers
model, real Parquet files and a real LanceDB directory; a small window makes a 6,000-row sheet
(about 600 chunks over two pages) "long".
"""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from embedder_models import save_tiny_sentence_transformer
from fixtures import make_sheets as fx
from upath import UPath

from indx_assets.pipeline.chain import load_chain
from indx_assets.pipeline.embedders.registry import load_embedder
from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.pipeline.schema import CHUNK_ROWS, CHUNKS, digest
from indx_assets.wiring.assets import stages
from indx_assets.wiring.resources.lancedb import LanceDBResource
from indx_assets.wiring.resources.storage import StorageResource

SOURCE = "corpus/ledger.xlsx"


def _ingest(root: Path, ledger: Path, spec: str, window: int) -> tuple[StorageResource, LanceDBResource, dict[str, str]]:
    storage, lancedb = StorageResource(root=str(root / "assets")), LanceDBResource(uri=str(root / "lancedb"))
    stages.store_source(SOURCE, UPath(ledger), storage)
    read, parsed = stages.read_pages(SOURCE, storage, ReaderConfig())
    cut = stages.cut_chunks(SOURCE, storage, load_chain(), parsed)
    embedded = stages.embed_chunks([SOURCE], storage, load_embedder(spec), {SOURCE: cut.data_version}, "v1",
                                   ReaderConfig(), window=window)
    written = stages.write_rows([SOURCE], storage, lancedb, {SOURCE: [embedded[SOURCE].data_version, "t1"]}, window=window)
    versions = {"pages": read.data_version, "chunks": cut.data_version, "vectors": embedded[SOURCE].data_version,
                "rows": written[SOURCE].data_version, "count": str(written[SOURCE].metadata["rows"])}
    return storage, lancedb, versions


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[StorageResource, LanceDBResource, dict[str, str], str]]:
    tmp = tmp_path_factory.mktemp("steps")
    ledger = tmp / "ledger.xlsx"
    ledger.write_bytes(fx.ledger(6_000))
    spec = f"sentence-transformers:{save_tiny_sentence_transformer(tmp / 'tiny-st')}"
    return {name: (*_ingest(tmp / name, ledger, spec, window), spec)
            for name, window in (("in_steps", 100), ("whole", stages.EMBED_WINDOW))}


def test_a_long_sheet_in_steps_has_each_chunk_once_in_the_table_with_its_own_vector(runs: dict) -> None:
    storage, lancedb, versions, spec = runs["in_steps"]
    chunk_map = storage.read("chunk_map", SOURCE).to_pylist()
    assert len({c["page"] for c in chunk_map}) >= 2 and len(chunk_map) > 100, "the sheet must be longer than a window"
    rows = lancedb.table().to_arrow().select(["id", "text", "page", "vector"]).to_pylist()
    assert len(rows) == len({r["id"] for r in rows}) == len(chunk_map) == int(versions["count"])
    assert {r["id"]: (r["text"], r["page"]) for r in rows} == {c["id"]: (c["text"], c["page"]) for c in chunk_map}
    picked = [rows[0], rows[len(rows) // 2], rows[-1]]
    again = load_embedder(spec).embedder.embed_texts([r["text"] for r in picked])
    assert np.allclose(np.asarray([r["vector"] for r in picked]), again, atol=1e-5)
    assert storage.read("chunks_table", SOURCE).num_rows == len(chunk_map)


def test_stages_in_steps_give_the_whole_paths_chunks_and_data_versions(runs: dict) -> None:
    steps, whole = runs["in_steps"], runs["whole"]
    assert steps[2] == whole[2]
    assert steps[0].read("chunk_map", SOURCE).equals(whole[0].read("chunk_map", SOURCE))
    # the version hashed batch by batch is the whole table's digest: existing data dirs keep theirs
    assert steps[2]["chunks"] == digest(steps[0].read("chunk_map", SOURCE))


def test_a_write_in_steps_killed_half_way_leaves_the_stored_file_as_it_was(tmp_path: Path) -> None:
    storage = StorageResource(root=str(tmp_path))
    before = pa.table({"id": ["a"], "text": ["old"]})
    storage.write("chunk_map", SOURCE, before)

    def batches():
        yield pa.record_batch({"id": ["b"], "text": ["new"]})
        raise KeyboardInterrupt  # the process stopped mid-stage

    with pytest.raises(KeyboardInterrupt):
        storage.write_batches("chunk_map", SOURCE, before.schema, batches())
    assert storage.read("chunk_map", SOURCE).equals(before)
    assert [p.name for p in storage.path("chunk_map", SOURCE).parent.iterdir()] == ["part-0.parquet"]


def _chunk_rows(source: str, ids: range, tag: str) -> pa.Table:
    rows = [dict.fromkeys(CHUNK_ROWS.names) | {"id": f"{source}-{i}", "source_id": source, "text": f"{tag} {i}"} for i in ids]
    return pa.Table.from_pylist(rows, schema=CHUNK_ROWS)


def _reader(table: pa.Table, fail_after: int | None = None) -> pa.RecordBatchReader:
    def batches():
        for n, batch in enumerate(table.to_batches(max_chunksize=5)):
            if fail_after is not None and n == fail_after:
                raise KeyboardInterrupt  # the process stopped mid-stage
            yield batch
    return pa.RecordBatchReader.from_batches(CHUNK_ROWS, batches())


def test_a_long_documents_reingest_merged_in_steps_holds_each_chunk_once_even_when_killed_half_way(tmp_path: Path) -> None:
    lancedb = LanceDBResource(uri=str(tmp_path / "lancedb"))
    lancedb.upsert_source("other", _chunk_rows("other", range(5), "kept"))
    lancedb.upsert_source("long", _chunk_rows("long", range(30), "old"))
    new = _chunk_rows("long", range(10, 40), "new")  # 10 chunks gone, 20 changed, 10 new

    with pytest.raises(KeyboardInterrupt):
        lancedb.upsert_stream(["long"], CHUNK_ROWS, _reader(new, fail_after=4), merge_step=8)
    ids = lancedb.table().to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)), "a chunk has two rows"

    result = lancedb.upsert_stream(["long"], CHUNK_ROWS, _reader(new), merge_step=8)  # the next run repairs
    rows = lancedb.table().to_arrow().select(["id", "source_id", "text"]).to_pylist()
    assert len(rows) == len({r["id"] for r in rows})
    assert {r["id"]: r["text"] for r in rows if r["source_id"] == "long"} == {f"long-{i}": f"new {i}" for i in range(10, 40)}
    assert {r["id"] for r in rows if r["source_id"] == "other"} == {f"other-{i}" for i in range(5)}
    assert result["deleted"] == 10


def test_a_one_page_document_longer_than_the_window_is_embedded_a_window_at_a_time(tmp_path: Path) -> None:
    storage = StorageResource(root=str(tmp_path))
    # one page: chunks, two with sentences after them (their vector is the sentences' centroid)
    rows = []
    for i in range(40):
        rows.append({"id": f"c{i}", "page": 1, "chunk_type": "content", "text": f"chunk {i}", "metadata": "{}"})
        if i % 20 == 0:
            rows += [{"id": f"c{i}s{j}", "page": 1, "chunk_type": "sentence", "text": f"sentence {j} of {i}",
                      "metadata": f'{{"chunk_id": "c{i}"}}'} for j in range(2)]
    storage.write("chunk_map", SOURCE, pa.Table.from_pylist(rows, schema=CHUNKS))
    runs = list(stages._page_runs(SOURCE, storage, stages._Account(), False, window=10))
    assert len(runs) > 3 and all(len(r) <= 12 for r in runs)
    assert [cid for r in runs for _, cid in r.owners] == [r["id"] for r in rows]
    for run in runs:  # a sentence is embedded in the same pass as its chunk
        ids = {cid for _, cid in run.owners}
        assert all(holder in ids for holder in run.holders if holder)


def test_a_batch_of_documents_reingested_together_stays_one_commit(tmp_path: Path) -> None:
    # only one long document is merged in steps: a batch of small ones, together over the step,
    # keeps the one commit a reader never sees half applied
    lancedb = LanceDBResource(uri=str(tmp_path / "lancedb"))
    lancedb.upsert_stream(["a", "b"], CHUNK_ROWS, _reader(pa.concat_tables([_chunk_rows("a", range(6), "old"),
                                                                            _chunk_rows("b", range(6), "old")])))
    before = lancedb.table().version
    new = pa.concat_tables([_chunk_rows("a", range(2, 8), "new"), _chunk_rows("b", range(2, 8), "new")])
    result = lancedb.upsert_stream(["a", "b"], CHUNK_ROWS, _reader(new), merge_step=8)
    assert result["version"] == before + 1
    rows = lancedb.table().to_arrow().select(["id", "text"]).to_pylist()
    assert {r["id"]: r["text"] for r in rows} == {f"{s}-{i}": f"new {i}" for s in "ab" for i in range(2, 8)}


_KILLED_INGEST = r"""
import os, signal, sys
from indx_assets.app.ingest import ingest
from indx_assets.wiring.resources import lancedb as lance
from indx_assets.wiring.settings import Settings

corpus, step, kill_before = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lance.MERGE_STEP = step  # a long document is one of more rows than this
if kill_before:
    # The kill is real (SIGKILL of this process); only its moment is chosen, by wrapping the
    # table's own append: before the `kill_before`th step, the steps before it committed.
    from lancedb.table import LanceTable
    add, calls = LanceTable.add, []
    def dying_add(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == kill_before:
            os.kill(os.getpid(), signal.SIGKILL)
        return add(self, *args, **kwargs)
    LanceTable.add = dying_add
summary = ingest(Settings.from_env(), [corpus])
print(summary.chunks)
"""


def _ingest_ledger(tmp_path: Path, spec: str, step: int, kill_before: int = 0) -> "subprocess.CompletedProcess[str]":
    import os
    import subprocess
    import sys

    env = {**os.environ, "INDX_HOME": str(tmp_path / "indx"), "INDX_EMBEDDER": spec}
    return subprocess.run([sys.executable, "-c", _KILLED_INGEST, str(tmp_path / "corpus"), str(step), str(kill_before)],
                          env=env, capture_output=True, text=True, timeout=900)


def test_a_long_documents_first_ingest_killed_between_its_appends_ends_equal_to_the_file_after_the_next(tmp_path: Path) -> None:
    # a long document's first ingest is appended in steps, not one commit: killed (kill -9) between
    # two, the table holds some of its chunks; the next ingest must leave exactly the file's chunks
    (tmp_path / "corpus").mkdir()
    ledger = tmp_path / "corpus" / "ledger.xlsx"
    ledger.write_bytes(fx.ledger(3_000))
    spec = f"sentence-transformers:{save_tiny_sentence_transformer(tmp_path / 'tiny-st')}"
    step = 64
    killed = _ingest_ledger(tmp_path, spec, step, kill_before=3)
    assert killed.returncode == -9, killed.stderr[-3000:]
    lancedb = LanceDBResource(uri=str(tmp_path / "indx" / "lancedb"))
    assert lancedb.table().count_rows() == 2 * step, "killed between the second and third append"

    # the file edited meanwhile, shorter: the next ingest deletes the chunks it no longer has
    ledger.write_bytes(fx.ledger(1_000))
    done = _ingest_ledger(tmp_path, spec, step)
    assert done.returncode == 0, done.stderr[-3000:]
    storage = StorageResource(root=str(tmp_path / "indx" / "assets"))
    chunk_map = storage.read("chunk_map", "corpus/ledger.xlsx").select(["id", "text"]).to_pylist()
    assert len(chunk_map) > step and int(done.stdout.split()[-1]) == len(chunk_map)
    rows = lancedb.table().to_arrow().select(["id", "text", "vector"]).to_pylist()
    assert len(rows) == len({r["id"] for r in rows}) == len(chunk_map), "rows = distinct ids = the chunk map's"
    assert {r["id"]: r["text"] for r in rows} == {c["id"]: c["text"] for c in chunk_map}, "nothing missing, extra or stale"
    assert all(r["vector"] is not None for r in rows)
