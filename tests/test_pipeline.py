"""The asset graph end to end: a real Dagster instance, a real LanceDB directory, real files.

Each test gets its own copy of the sample corpus (written by the project's generator) and its
own data directory; the embedding model loads once per process.
"""

import json
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import dagster as dg
import numpy as np
import pytest
from chunker_dists import install
from dagster._utils.test.data_versions import get_stale_status_resolver

from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.app.search import Hit, search_chunks
from indx_assets.pipeline.embedder import MiniLMEmbedder
from indx_assets.wiring.assets.ingest import (
    ASSET_KEYS,
    CHUNK_EMBEDDINGS,
    CHUNK_MAP,
    CHUNKS_TABLE,
    PAGE_OUTPUTS,
    SOURCE_DOCUMENTS,
)
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def corpus_files(settings: Settings) -> set[str]:
    root = Path(settings.corpus_roots[0])
    return {f"{root.name}/{p.relative_to(root).as_posix()}" for p in root.rglob("*") if p.is_file()}


def ingest(instance: dg.DagsterInstance, settings: Settings, **kwargs) -> list[dg.AssetMaterialization]:
    """Sync partitions with the corpus and materialize them; the materializations of the run(s)."""
    sync = sync_partitions(instance, settings)
    results = materialize_partitions(instance, settings, sync.current, **kwargs)
    assert all(r.success for r in results), results
    events = []
    for r in results:
        records = instance.get_records_for_run(r.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
        events.extend(rec.event_log_entry.asset_materialization for rec in records)
    return events


def table_rows(settings: Settings) -> list[dict]:
    table = build_resources(settings)["lancedb"].table()  # type: ignore[attr-defined]
    return table.to_arrow().select(["id", "source_id", "text", "locator", "vector"]).to_pylist()


def table_rows_with_metadata(settings: Settings) -> list[dict]:
    table = build_resources(settings)["lancedb"].table()  # type: ignore[attr-defined]
    return table.to_arrow().select(["id", "source_id", "start_offset", "metadata"]).to_pylist()


def touched(events: list[dg.AssetMaterialization], key: dg.AssetKey) -> set[str]:
    return {e.partition for e in events if e.asset_key == key}


def stale_status(instance: dg.DagsterInstance, settings: Settings) -> dict[tuple[str, str], str]:
    assets = build_definitions(settings).assets
    resolver = get_stale_status_resolver(instance, list(assets))  # type: ignore[arg-type]
    return {
        (key.to_user_string(), pk): resolver.get_status(key, pk).value
        for key in ASSET_KEYS
        for pk in instance.get_dynamic_partitions("sources")
    }


def test_a_full_ingest_indexes_every_document_once_and_a_reingest_writes_nothing(instance, settings) -> None:
    events = ingest(instance, settings)
    sources = sorted(instance.get_dynamic_partitions("sources"))
    assert set(sources) == corpus_files(settings)
    for key in ASSET_KEYS:
        assert touched(events, key) == set(sources), key
    rows = table_rows(settings)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate chunk ids in LanceDB"
    assert {r["source_id"] for r in rows} == set(sources)
    assert all(r["vector"] is not None and len(r["vector"]) == 384 for r in rows)
    # the stored Parquet copy of the table agrees with LanceDB
    storage = build_resources(settings)["storage"]
    parquet_ids = {i for s in sources for i in storage.read("chunks_table", s).column("id").to_pylist()}  # type: ignore[attr-defined]
    assert parquet_ids == set(ids)

    version = build_resources(settings)["lancedb"].table().version  # type: ignore[attr-defined]
    again = ingest(instance, settings)
    assert again == [], "re-ingesting unchanged files materialized something"
    assert build_resources(settings)["lancedb"].table().version == version  # type: ignore[attr-defined]
    assert sorted(r["id"] for r in table_rows(settings)) == sorted(ids)
    assert all(v == "FRESH" for v in stale_status(instance, settings).values())


def test_editing_one_file_rechunks_and_reembeds_that_file_only(instance, settings) -> None:
    ingest(instance, settings)
    before = {r["id"]: r for r in table_rows(settings)}
    edited = Path(settings.corpus_roots[0]) / "notes" / "tea-harvest.txt"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nWhite tea is withered but never rolled.\n", encoding="utf-8")

    events = ingest(instance, settings)
    for key in ASSET_KEYS:
        assert touched(events, key) == {"corpus/notes/tea-harvest.txt"}, key
    after = table_rows(settings)
    assert any("White tea is withered" in r["text"] for r in after)
    unchanged = [r for r in after if r["source_id"] != "corpus/notes/tea-harvest.txt"]
    assert all(before[r["id"]]["text"] == r["text"] for r in unchanged)
    assert len({r["id"] for r in after}) == len(after)


def test_removing_a_file_removes_its_partition_rows_and_outputs(instance, settings) -> None:
    ingest(instance, settings)
    gone = "corpus/guides/chunking-primer.md"
    (Path(settings.corpus_roots[0]).parent / gone).unlink()  # ids are label/path; the label is the folder
    sync = sync_partitions(instance, settings)
    assert sync.removed == [gone]
    assert gone not in instance.get_dynamic_partitions("sources")
    assert gone not in {r["source_id"] for r in table_rows(settings)}
    storage = build_resources(settings)["storage"]
    assert not storage.path("chunk_map", gone).exists()  # type: ignore[attr-defined]


def test_a_chain_change_stales_every_chunk_map_and_reembeds_only_changed_documents(
    instance, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest(instance, settings)
    install(tmp_path / "site", monkeypatch, distribution="plain-chunkers", chunkers={"plain": "plain_text_only"})

    status = stale_status(instance, settings)
    sources = instance.get_dynamic_partitions("sources")
    assert {status[("chunk_map", s)] for s in sources} == {"STALE"}
    assert {status[(k, s)] for k in ("source_documents", "page_outputs") for s in sources} == {"FRESH"}

    events = ingest(instance, settings, selection=["chunk_map"])
    assert touched(events, CHUNK_MAP) == set(sources)
    status = stale_status(instance, settings)
    assert status[("chunk_embeddings", "corpus/notes/tea-harvest.txt")] == "STALE"
    assert {status[("chunk_embeddings", s)] for s in sources if s != "corpus/notes/tea-harvest.txt"} == {"FRESH"}

    # the rest of the graph catches up, re-embedding the one changed document
    events = ingest(instance, settings)
    assert touched(events, CHUNK_EMBEDDINGS) == touched(events, CHUNKS_TABLE) == {"corpus/notes/tea-harvest.txt"}
    tea = [r for r in table_rows(settings) if r["source_id"] == "corpus/notes/tea-harvest.txt"]
    assert tea and all(r["text"].startswith("plain: ") for r in tea)


def test_a_chunk_map_run_fails_fast_when_the_installed_chain_is_not_the_declared_one(
    instance, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest(instance, settings)
    job = build_definitions(settings).resolve_implicit_global_asset_job_def()  # declares today's chain
    install(tmp_path / "site", monkeypatch, distribution="late-chunkers", chunkers={"late": "claims_all"})
    first = instance.get_dynamic_partitions("sources")[0]
    result = job.get_subset(asset_selection={CHUNK_MAP}).execute_in_process(
        instance=instance, partition_key=first, raise_on_error=False,
        run_config={"ops": {"ingest_documents": {"config": {"force": True}}}},
    )
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error
    assert "differs from the one these definitions declared" in failure.message


def test_a_bad_document_gets_a_status_and_does_not_fail_its_batch(instance, settings) -> None:
    corpus = Path(settings.corpus_roots[0])
    (corpus / "garbage.txt").write_bytes(bytes(range(256)) * 64)
    (corpus / "empty.md").write_bytes(b"")
    events = ingest(instance, settings)
    assert {"corpus/garbage.txt", "corpus/empty.md"} <= touched(events, CHUNKS_TABLE)
    pages = {e.partition: e.metadata for e in events if e.asset_key == PAGE_OUTPUTS}
    assert pages["corpus/garbage.txt"]["status"].value == "failed"
    assert pages["corpus/empty.md"]["status"].value == "empty"
    assert {r["source_id"] for r in table_rows(settings)} == set(instance.get_dynamic_partitions("sources")) - {
        "corpus/garbage.txt", "corpus/empty.md"}


def test_a_source_that_vanishes_mid_batch_fails_alone(instance, settings) -> None:
    sync = sync_partitions(instance, settings)
    (Path(settings.corpus_roots[0]) / "notes" / "tea-harvest.txt").unlink()
    [result] = materialize_partitions(instance, settings, sync.current)
    assert not result.success
    done = instance.get_records_for_run(result.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    landed = {r.event_log_entry.asset_materialization.partition for r in done
              if r.event_log_entry.asset_materialization.asset_key == CHUNKS_TABLE}
    assert landed == set(sync.current) - {"corpus/notes/tea-harvest.txt"}


def test_search_returns_the_document_a_phrase_comes_from_first(instance, settings) -> None:
    ingest(instance, settings)
    for mode in ("hybrid", "vector", "fts"):
        hits = search_chunks(settings, "the muscatel flavour comes from leafhoppers that bite the leaves", k=3, mode=mode)
        assert hits[0].source_id == "corpus/notes/tea-harvest.txt", mode
        assert "leafhoppers" in hits[0].content
    hits = search_chunks(settings, "moved 2,900 feet inland on hydraulic jacks", k=3, mode="fts")
    assert hits[0].source_id == "corpus/articles/lighthouses.html"
    hits = search_chunks(settings, "erste Pferdebahn vom Hauptbahnhof zum Tiefenbrunnen", k=3)
    assert hits[0].source_id == "corpus/articles/zurich-trams.md"
    identity = {"id", "document_id", "source_id", "locator", "chunk_type", "parent_ref", "page", "content", "score"}
    assert identity <= set(hits[0].to_json())

    # Expanded, a hit carries its section: every chunk of its document with its section id, in order.
    rows = table_rows_with_metadata(settings)

    def section_of(hit: Hit) -> list[str]:
        section_id = hit.metadata.get("section_id")
        if section_id is None:
            return [hit.id]
        mine = sorted((r for r in rows if r["source_id"] == hit.source_id), key=lambda r: r["start_offset"])
        return [r["id"] for r in mine if json.loads(r["metadata"]).get("section_id") == section_id]

    (hit,) = search_chunks(settings, "keep at least one week of old versions before cleanup", k=1, expand=True)
    assert hit.source_id == "corpus/guides/lancedb-maintenance.md" and hit.metadata["section_title"] == "Retention"
    assert hit.section is not None and [c.id for c in hit.section] == section_of(hit) and len(hit.section) == 3
    assert [c.chunk_type for c in hit.section] == ["content", "table", "content"]  # its table comes along
    for other in search_chunks(settings, "the muscatel flavour comes from leafhoppers", k=3, expand=True):
        assert other.section is not None
        assert [c.id for c in other.section] == section_of(other) and other.id in section_of(other)


def test_with_sentences_a_hit_is_the_chunk_holding_the_sentence_that_matched(instance, settings) -> None:
    options = {"sentences": True}
    settings = replace(settings, chain_config=json.dumps({"options": {n: options for n in ("markdown", "html", "text")}}))
    ingest(instance, settings)
    table = build_resources(settings)["lancedb"].table()  # type: ignore[attr-defined]
    rows = table.to_arrow().select(["id", "source_id", "chunk_type", "locator", "text", "start_offset", "end_offset", "vector",
                                    "metadata"]).to_pylist()
    sentences = [r for r in rows if r["chunk_type"] == "sentence"]
    assert sentences and all(r["locator"].startswith("sentence:char:") and r["vector"] is not None for r in sentences)
    # each sentence names its chunk, which holds it; that chunk's vector is its sentences' centroid
    by_id = {r["id"]: r for r in rows}
    members: dict[str, list[dict]] = {}
    for sentence in sentences:
        chunk = by_id[json.loads(sentence["metadata"])["chunk_id"]]
        assert chunk["chunk_type"] == "content" and chunk["source_id"] == sentence["source_id"]
        assert chunk["start_offset"] <= sentence["start_offset"] and sentence["end_offset"] <= chunk["end_offset"]
        members.setdefault(chunk["id"], []).append(sentence)
    for chunk_id, own in members.items():
        centroid = np.sum([s["vector"] for s in own], axis=0)
        assert np.allclose(by_id[chunk_id]["vector"], centroid / np.linalg.norm(centroid), atol=1e-5)

    # one sentence of a many-sentence chunk: the hit is that chunk, found by the sentence
    query = "every write creates a new data fragment"
    for mode in ("hybrid", "vector", "fts"):
        hits = search_chunks(settings, query, k=4, mode=mode)
        assert len({h.id for h in hits}) == len(hits) == 4, mode  # chunks, each once
        assert all(h.chunk_type != "sentence" for h in hits), mode
        top = hits[0]
        assert top.source_id == "corpus/guides/lancedb-maintenance.md", mode
        assert top.sentence is not None and top.sentence.content == "Every write creates a new data fragment.", mode
        matched = next(r for r in sentences if r["id"] == top.sentence.id)
        assert top.start_offset <= matched["start_offset"] and matched["end_offset"] <= top.end_offset
        assert len(top.content) > 3 * len(matched["text"])
        # the sentence that matched is what the hit shows of its chunk
        assert "Every write creates a new data fragment." in top.excerpt, mode
    # a chunk of one sentence has no sentence pieces: it is found as itself
    (hit,) = search_chunks(settings, "keep at least one week of old versions before cleanup", k=1, expand=True)
    assert hit.sentence is None and hit.content.startswith("Old versions are what make time travel possible")
    # expanded, a section lists its chunks, not their sentences
    assert hit.metadata["section_title"] == "Retention"
    assert hit.section is not None and [c.chunk_type for c in hit.section] == ["content", "table", "content"]

    # switched off again, the sentences leave the table and the chunks stay as they were
    ingest(instance, replace(settings, chain_config=""))
    after = build_resources(settings)["lancedb"].table().to_arrow().select(["id", "text", "vector"]).to_pylist()  # type: ignore[attr-defined]
    assert sorted(r["id"] for r in after) == sorted(r["id"] for r in rows if r["chunk_type"] != "sentence")
    # ... and those that were centroids are embedded as themselves again
    own_vectors = MiniLMEmbedder().embed_texts([r["text"] for r in after if r["id"] in members])
    assert np.allclose([r["vector"] for r in after if r["id"] in members], own_vectors, atol=1e-4)


CONCURRENT_UPSERT = """
import contextlib, os, sys, time, pyarrow as pa
from pathlib import Path
from indx_assets.wiring.resources.lancedb import LanceDBResource
from indx_assets.pipeline.schema import CHUNK_ROWS
uri, tag, sources = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
lancedb = LanceDBResource(uri=uri)
opened = LanceDBResource.table_for
# without the writer lock, as on an object store (no lock file there): the merges race
LanceDBResource.writing = lambda self: contextlib.nullcontext()

def table_for_then_wait(self, schema):
    # The race made certain, not hoped for: each process opens the table (its version then: no
    # rows of these sources) and waits for the other to have done so before it writes.
    table = opened(self, schema)
    if not getattr(table_for_then_wait, "met", False):
        Path(uri, "opened-" + tag).touch()
        deadline = time.monotonic() + 60
        while not all(Path(uri, "opened-" + t).exists() for t in "AB") and time.monotonic() < deadline:
            time.sleep(0.01)
        table_for_then_wait.met = True
    return table

LanceDBResource.table_for = table_for_then_wait
for round_ in range(3):
    lancedb.upsert_sources({sid: pa.Table.from_pylist(
        [dict.fromkeys(CHUNK_ROWS.names) | {"id": f"{sid}-{i}", "source_id": sid, "text": f"{tag} {round_}"}
         for i in range(20)], schema=CHUNK_ROWS) for sid in sources})
"""


@pytest.mark.parametrize("sources", [["doc.md"], ["a.md", "b.md"]], ids=["one source", "a batch"])
def test_two_processes_upserting_one_source_leave_no_duplicate_ids(tmp_path: Path, sources: list[str]) -> None:
    """Two processes write the same new sources at once, without the writer lock (each opened
    the table before either wrote): the table ends with each chunk id once, all of them from one
    writer's last write."""
    from indx_assets.wiring.resources.lancedb import LanceDBResource

    uri = str(tmp_path / "lancedb")
    LanceDBResource(uri=uri).table()
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT_UPSERT, uri, tag, ",".join(sources)]) for tag in "AB"]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    rows = LanceDBResource(uri=uri).table().to_arrow().select(["id", "text"]).to_pylist()
    assert Counter(r["id"] for r in rows) == {f"{sid}-{i}": 1 for sid in sources for i in range(20)}
    assert len({r["text"] for r in rows}) == 1 and rows[0]["text"].endswith(" 2")


def test_the_definitions_load_and_validate(tmp_path: Path) -> None:
    env = {"INDX_HOME": str(tmp_path / "indx"), "DAGSTER_HOME": str(tmp_path / "dagster"), "PATH": str(Path(sys.executable).parent)}
    (tmp_path / "dagster").mkdir()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    defs = build_definitions(replace(Settings.from_env(), home=tmp_path))
    graph = defs.resolve_asset_graph()
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} >= {
        "source_documents", "page_outputs", "chunk_map", "chunk_embeddings", "chunks_table"}
    assert graph.get(CHUNK_MAP).code_version.startswith("chain-")
    assert graph.get(SOURCE_DOCUMENTS).kinds


def test_the_cli_ingests_and_searches_with_json_output(settings) -> None:
    env = {"INDX_HOME": str(settings.home), "PATH": str(Path(sys.executable).parent), "HOME": str(settings.home)}
    indx = str(Path(sys.executable).parent / "indx")
    # text that looks like console markup is printed as it is
    (Path(settings.corpus_roots[0]) / "notes" / "[draft] markup.txt").write_text("Closing tags like [/] and [bold] in a note.\n")
    done = subprocess.run([indx, "ingest", settings.corpus_roots[0], "--json"], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["documents"] == len(corpus_files(settings))
    assert summary["documents_by_status"] == {"ok": summary["documents"]}
    assert summary["vectors"] == summary["chunks"] > 0
    done = subprocess.run([indx, "search", "muscatel flavour leafhoppers", "--json", "-k", "2"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    hits = json.loads(done.stdout)
    assert hits[0]["source_id"] == "corpus/notes/tea-harvest.txt"
    assert hits[0]["page"] == 1 and hits[0]["locator"].startswith("char:")
    done = subprocess.run([indx, "search", "old versions and time travel", "--expand", "-k", "1"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "in 'Retention', 3 chunks:" in done.stdout, done.stdout + done.stderr[-2000:]
    done = subprocess.run([indx, "search", "closing tags like [/] and [bold]", "-k", "1"], env=env,
                          capture_output=True, text=True, timeout=300)
    # (not a terminal: the query's terms are marked **so**)
    assert done.returncode == 0 and "[draft] markup.txt" in done.stdout, done.stderr[-2000:]
    assert "**Closing** **tags** **like** [/] and [**bold**] in a note." in done.stdout, done.stdout


def _blank_scan_pdf() -> bytes:
    """A one-page PDF whose page is a picture with no text in it: OCR finds nothing there."""
    import io

    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    out = io.BytesIO()
    canvas = Canvas(out, pagesize=A4, invariant=True)
    canvas.drawImage(ImageReader(Image.new("L", (600, 850), 200)), 0, 0, *A4)
    canvas.showPage()
    canvas.save()
    return out.getvalue()


def test_a_page_nobody_could_read_is_stored_as_an_unembedded_image_chunk(instance, settings) -> None:
    (Path(settings.corpus_roots[0]) / "scans").mkdir()
    (Path(settings.corpus_roots[0]) / "scans" / "blank.pdf").write_bytes(_blank_scan_pdf())
    events = ingest(instance, settings)
    embedded = {e.partition: e.metadata for e in events if e.asset_key == CHUNK_EMBEDDINGS}
    assert embedded["corpus/scans/blank.pdf"]["unembedded_image_chunks"].value == 1
    assert embedded["corpus/scans/blank.pdf"]["vectors"].value == 0
    table = build_resources(settings)["lancedb"].table()  # type: ignore[attr-defined]
    [row] = table.search().where("source_id = 'corpus/scans/blank.pdf'").to_list()
    assert row["chunk_type"] == "image" and row["vector"] is None
    assert row["image"].startswith(b"\x89PNG") and row["bbox"] == [0.0, 0.0, 1.0, 1.0]
    # documents with boxes get a picture of their first page's cut in the UI
    chunk_maps = {e.partition: e.metadata for e in events if e.asset_key == CHUNK_MAP}
    picture = chunk_maps["corpus/handbooks/harbour-pilot.pdf"]["chunk_picture"].value
    assert picture.startswith("![chunks of page 1](data:image/png;base64,")
    assert "chunk_picture" not in chunk_maps["corpus/notes/tea-harvest.txt"]
