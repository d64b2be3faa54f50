"""Read once, cut once: in a batched ingest, a PDF is opened once and its pages are loaded by
PDFium once for reading, cutting and the UI's chunk picture, because the reader's parsed form
travels with the document to the chunkers and the picture (no cache that a batch of documents
evicts before they are cut).

Loads are counted where they happen, by the reader's own instrumentation (`readers.pdf.LOADS`,
incremented by `open_pdf` and `load_page`, which every PDFium open and page load in the
project goes through), during a real ingest: a real Dagster instance, real files.
"""

from dataclasses import replace
from pathlib import Path

import dagster as dg
import pypdfium2
import pytest
from chunker_dists import install
from fixtures import make_pdfs as fx

from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.pipeline.chunk_picture import render_chunk_picture
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers import pdf as pdf_reader
from indx_assets.pipeline.readers import read_document
from indx_assets.wiring.assets.ingest import CHUNK_MAP
from indx_assets.wiring.assets.stages import PICTURE_DPI
from indx_assets.wiring.settings import Settings

PDF = "application/pdf"


def _pdf_corpus(root: Path) -> int:
    """Four generated PDFs of 1 to 4 text pages under `root`; their page count."""
    root.mkdir()
    made = [fx.invoice(root / "invoice.pdf"), fx.two_column(root / "article.pdf"), fx.table(root / "table.pdf"),
            fx.paged_report(root / "report.pdf", pages=4)]
    pages = 0
    for drawn in made:
        document = pypdfium2.PdfDocument(drawn.path)  # counted by nobody: PDFium directly
        pages += len(document)
        document.close()
    return pages


def _ingest(instance: dg.DagsterInstance, settings: Settings) -> list[dg.AssetMaterialization]:
    sync = sync_partitions(instance, settings)
    results = materialize_partitions(instance, settings, sync.current)
    assert all(r.success for r in results) and len(results) == 1, results  # one batch of four
    records = instance.get_records_for_run(results[0].run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    return [r.event_log_entry.asset_materialization for r in records]


def test_a_batch_of_pdfs_loads_each_page_once_for_reading_and_cutting(instance, settings: Settings, tmp_path: Path) -> None:
    pages = _pdf_corpus(tmp_path / "pdfs")
    settings = replace(settings, corpus_roots=(str(tmp_path / "pdfs"),))
    opened, loaded = pdf_reader.LOADS.documents, pdf_reader.LOADS.pages

    events = _ingest(instance, settings)

    cut = [e for e in events if e.asset_key == CHUNK_MAP]
    assert len(cut) == 4 and all(e.metadata["chunks"].value > 0 for e in cut)
    # the UI's picture of page 1 and its chunks is drawn on the page the reader rendered
    assert all("chunk_picture" in e.metadata for e in cut)
    assert pdf_reader.LOADS.pages - loaded == pages, "each page loaded once to read, cut and picture it"
    assert pdf_reader.LOADS.documents - opened == 4, "each PDF opened once"


def test_the_chunk_picture_on_the_readers_preview_is_the_one_rendered_from_the_bytes(tmp_path: Path) -> None:
    content = fx.two_column(tmp_path / "article.pdf").path.read_bytes()
    read = read_document(content, PDF)
    encoded = encode_bytes(content, source_id="article.pdf", name="article.pdf")
    first = [c for c in to_document(encoded).chunks if c.page == 1]
    assert first and read.parsed.preview is not None
    rendered = render_chunk_picture(content, PDF, 1, first, dpi=PICTURE_DPI)
    assert render_chunk_picture(content, PDF, 1, first, dpi=PICTURE_DPI, page_image=read.parsed.preview) == rendered


def test_a_batch_holds_one_parsed_pdf_at_a_time(instance, settings: Settings, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory: each document is cut right after it is read and its parse let go, so while a
    batch of four is cut no more than the one parse being cut is alive (counted by a real
    third-party chunker asked first in the chain, which declines every page)."""
    _pdf_corpus(tmp_path / "pdfs")
    settings = replace(settings, corpus_roots=(str(tmp_path / "pdfs"),))
    probe = tmp_path / "probe.txt"
    monkeypatch.setenv("INDX_PROBE_FILE", str(probe))
    install(tmp_path / "site", monkeypatch, distribution="parse-probe", chunkers={"probe": "counts_live_pdf_parses"})

    events = _ingest(instance, settings)

    assert sum(1 for e in events if e.asset_key == CHUNK_MAP) == 4
    assert probe.read_text(encoding="utf-8").splitlines() == [f"{PDF} 1"] * 4


#: Paths whose opens `_count_opens` records (an audit hook cannot be removed: it stays, idle).
_WATCHED: dict[str, list[str]] = {}


def _count_opens(event: str, args: tuple) -> None:
    if event == "open" and args and isinstance(args[0], (str, Path)) and str(args[0]) in _WATCHED:
        _WATCHED[str(args[0])].append(str(args[1]))


def test_a_new_source_file_is_read_once_and_an_unchanged_one_not_copied_again(
        instance, settings: Settings, tmp_path: Path) -> None:
    """Its first ingest copies a new file (hashing it as it copies), without hashing it
    beforehand to learn that it is new (twice: the run's judgement, then the op's); a re-run
    with nothing changed reads it once, to hash it, and copies nothing."""
    import sys

    root = tmp_path / "texts"
    root.mkdir()
    path = root / "note.txt"
    path.write_text("The harvest starts when the first leaves unfold.\n" * 20)
    settings = replace(settings, corpus_roots=(str(root),))
    _WATCHED[str(path)] = opened = []
    sys.addaudithook(_count_opens)
    try:
        sync = sync_partitions(instance, settings)
        first = materialize_partitions(instance, settings, sync.current)
        assert [r.success for r in first] == [True] and first[0].materialized == 5
        assert len(opened) == 1, opened
        opened.clear()
        again = materialize_partitions(instance, settings, sync.current)
        assert again == [] and len(opened) == 1, (again, opened)  # hashed to judge it: no run
    finally:
        _WATCHED.clear()
