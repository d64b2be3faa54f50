"""Bounded and contained: links stay inside their root, files and OCR work have a size bound.

Real symlinks, a real sparse file, a real PDF, a real Dagster instance and LanceDB directory.
"""

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import dagster as dg
import pytest
from fixtures import make_pdfs

from indx_assets.app.analytics import ingest_summary
from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.pipeline.bounds import Bounds
from indx_assets.pipeline.readers import ReaderConfig, read_document
from indx_assets.wiring.assets.stages import SOURCE_DOCUMENTS
from indx_assets.wiring.definitions import build_resources
from indx_assets.wiring.settings import Settings

SECRET = "The vault combination is seventeen left, four right."
PDF = "application/pdf"


def _settings(tmp_path: Path, corpus: Path, **bounds: object) -> Settings:
    home = tmp_path / "indx"
    return Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                    corpus_roots=(str(corpus),), bounds=Bounds(**bounds))  # type: ignore[arg-type]


def _ingest(instance: dg.DagsterInstance, settings: Settings, selection: list[str] | None = None) -> dict:
    sync = sync_partitions(instance, settings)
    results = materialize_partitions(instance, settings, sync.current, selection=selection)
    assert all(r.success for r in results), results
    return ingest_summary(settings.storage_uri, sync.current)


def _table_texts(settings: Settings) -> dict[str, str]:
    rows = build_resources(settings)["lancedb"].table().to_arrow().select(["source_id", "text"]).to_pylist()  # type: ignore[attr-defined]
    texts: dict[str, str] = {}
    for row in rows:
        texts[row["source_id"]] = texts.get(row["source_id"], "") + (row["text"] or "")
    return texts


def test_a_link_out_of_the_root_is_skipped_with_its_status_and_a_link_inside_is_followed(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    corpus, elsewhere = tmp_path / "corpus", tmp_path / "elsewhere"
    (corpus / "notes").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text(SECRET + "\n")
    (corpus / "notes" / "tides.md").write_text("# Tides\n\nSpring tides follow the full moon by a day or two.\n")
    (corpus / "escape.txt").symlink_to(elsewhere / "secret.txt")
    (corpus / "alias.md").symlink_to(Path("notes") / "tides.md")  # relative, resolves inside
    (corpus / "round-trip.txt").symlink_to(corpus / ".." / "elsewhere" / "secret.txt")
    settings = _settings(tmp_path, corpus)

    summary = _ingest(instance, settings)

    assert summary["documents_by_status"] == {"ok": 2, "outside_root": 2}
    for name in ("corpus/escape.txt", "corpus/round-trip.txt"):
        assert "outside the corpus root" in summary["problems"][name]
    texts = _table_texts(settings)
    assert set(texts) == {"corpus/alias.md", "corpus/notes/tides.md"}
    assert "Spring tides follow the full moon" in texts["corpus/alias.md"]
    assert not any("vault combination" in t for t in texts.values())
    stored = build_resources(settings)["storage"].read(SOURCE_DOCUMENTS, "corpus/escape.txt").to_pylist()[0]  # type: ignore[attr-defined]
    assert stored["content"] is None and stored["refused"] == "outside_root"


def test_follow_symlinks_never_lists_no_link_and_all_follows_linked_folders_without_looping(tmp_path: Path) -> None:
    corpus, elsewhere = tmp_path / "corpus", tmp_path / "elsewhere"
    (corpus / "docs").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "far.txt").write_text("far away\n")
    (corpus / "docs" / "near.txt").write_text("near\n")
    (corpus / "alias.txt").symlink_to(corpus / "docs" / "near.txt")
    (corpus / "far").symlink_to(elsewhere, target_is_directory=True)
    (corpus / "docs" / "loop").symlink_to(corpus / "docs", target_is_directory=True)

    def listed(policy: str) -> list[str]:
        corpus_resource = build_resources(_settings(tmp_path, corpus, follow_symlinks=policy))["corpus"]
        return [listed.relative for listed in corpus_resource.iter_files()]  # type: ignore[attr-defined]

    assert listed("inside") == ["alias.txt", "docs/near.txt", "far"]  # far: listed to be refused
    assert listed("never") == ["docs/near.txt"]
    assert listed("all") == ["alias.txt", "docs/near.txt", "far/far.txt"]


def test_a_linked_folder_inside_the_root_is_entered_once_and_one_leading_out_is_refused(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    """Each file gets one id, its path without links; a folder only links reach (a hidden one)
    is listed under the link's path; links back up never loop; a linked folder that leads out
    of the root is a source of its own with the status `outside_root`, kept by the sweep."""
    from indx_assets.wiring.assets.removal import SourceStores
    from indx_assets.wiring.automation.sensor import Cursor, scan

    corpus, elsewhere = tmp_path / "corpus", tmp_path / "elsewhere"
    store, notes = corpus / ".store" / "manuals", corpus / "notes"
    store.mkdir(parents=True)
    notes.mkdir()
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text(SECRET + "\n")
    (store / "pilot.md").write_text("# Pilotage\n\nDeep-draught ships cross the bar at high water only.\n")
    (notes / "tides.md").write_text("# Tides\n\nSpring tides follow the full moon by a day or two.\n")
    (corpus / "manuals").symlink_to(Path(".store") / "manuals", target_is_directory=True)  # only links reach it
    (corpus / "latest").symlink_to("notes", target_is_directory=True)  # the walk reaches notes/ anyway
    (notes / "up").symlink_to("..", target_is_directory=True)  # the root: no loop
    (store / "back").symlink_to(corpus / ".store", target_is_directory=True)  # above the hidden folder
    (corpus / "far").symlink_to(elsewhere, target_is_directory=True)
    settings = _settings(tmp_path, corpus)

    summary = _ingest(instance, settings)

    assert summary["documents_by_status"] == {"ok": 2, "outside_root": 1}
    assert "outside the corpus root" in summary["problems"]["corpus/far"]
    texts = _table_texts(settings)
    assert set(texts) == {"corpus/manuals/pilot.md", "corpus/notes/tides.md"}
    assert "cross the bar at high water" in texts["corpus/manuals/pilot.md"]
    assert not any("vault combination" in t for t in texts.values())
    # the refused link is no vanished file: the sweep keeps it
    assert scan(instance, SourceStores.of(build_resources(settings)), Cursor()).removed == []


def test_a_sparse_file_over_the_size_bound_is_refused_unread(tmp_path: Path) -> None:
    """Refused from its size alone: peak memory stays far below the file's size (a sparse file
    costs no disk; read, it would cost its full size in memory, several times over)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "small.txt").write_text("A small note about the harbour.\n")
    size = 768 << 20
    with open(corpus / "huge.txt", "wb") as f:
        f.truncate(size)
    home = tmp_path / "indx"
    script = f"""
import json, re
from indx_assets.app.analytics import ingest_summary
from indx_assets.app.runner import materialize_partitions, open_instance, sync_partitions
from indx_assets.wiring.settings import Settings
settings = Settings.from_env()
instance = open_instance(settings)
sync = sync_partitions(instance, settings)
results = materialize_partitions(instance, settings, sync.current, selection=["source_documents", "page_outputs"])
summary = ingest_summary(settings.storage_uri, sync.current)
# VmHWM, not ru_maxrss: a process started by fork and exec inherits its parent's ru_maxrss
summary["peak_rss"] = int(re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
summary["success"] = all(r.success for r in results)
print(json.dumps(summary))
"""
    env = {**os.environ, "INDX_HOME": str(home), "INDX_CORPUS": str(corpus), "INDX_MAX_FILE_MB": "64"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["success"]
    assert summary["documents_by_status"] == {"ok": 1, "too_large": 1}
    assert summary["problems"]["corpus/huge.txt"] == "805,306,368 bytes, over the limit of 64 MB (INDX_MAX_FILE_MB)"
    assert summary["peak_rss"] < size // 2, f"peak RSS {summary['peak_rss'] >> 20} MiB for a {size >> 20} MiB file"


def test_a_drawn_only_pdf_over_the_ocr_page_bound_is_too_large_and_not_ocrd(
    tmp_path: Path, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    make_pdfs.image_only(corpus / "scan.pdf")  # page 2 is a scan; pages 1 (text) and 3 (blank) need no OCR
    make_pdfs.image_only(tmp_path / "twice.pdf")
    # Four drawn pages: two scans.
    import pypdfium2 as pdfium

    doubled = pdfium.PdfDocument(str(tmp_path / "twice.pdf"))
    doubled.import_pages(pdfium.PdfDocument(str(corpus / "scan.pdf")))
    doubled.save(str(corpus / "two-scans.pdf"))
    doubled.close()
    monkeypatch.setenv("INDX_MAX_OCR_PAGES", "1")
    settings = replace(Settings.from_env(), home=tmp_path / "indx", storage_uri=str(tmp_path / "indx" / "assets"),
                       lancedb_uri=str(tmp_path / "indx" / "lancedb"), corpus_roots=(str(corpus),))

    summary = _ingest(instance, settings)

    assert summary["documents_by_status"] == {"ok": 1, "too_large": 1}
    assert summary["problems"]["corpus/two-scans.pdf"] == "2 pages to OCR, over the limit of 1 (INDX_MAX_OCR_PAGES)"
    storage = build_resources(settings)["storage"]
    pages = storage.read("page_outputs", "corpus/two-scans.pdf").to_pylist()  # type: ignore[attr-defined]
    assert [p["status"] for p in pages] == ["ok", "unreadable", "empty", "ok", "unreadable", "empty"]
    assert all(p["reader"] == "pdfium" for p in pages)  # OCR never ran
    assert "not OCR'd" in pages[1]["reason"]
    # nor are the pages past the bound rendered into image chunks: only the text pages have chunks
    chunks = storage.read("chunk_map", "corpus/two-scans.pdf").to_pylist()  # type: ignore[attr-defined]
    assert sorted({c["page"] for c in chunks}) == [1, 4] and {c["chunk_type"] for c in chunks} == {"content"}
    # the document under the bound is OCR'd as before
    assert [p["reader"] for p in storage.read("page_outputs", "corpus/scan.pdf").to_pylist()][1] == "ocr:tesseract"  # type: ignore[attr-defined]


def test_the_ocr_page_bound_applies_to_the_reader_itself(tmp_path: Path) -> None:
    make_pdfs.image_only(tmp_path / "scan.pdf")
    content = (tmp_path / "scan.pdf").read_bytes()
    capped = read_document(content, PDF, ReaderConfig(max_ocr_pages=0))
    assert capped.status == "too_large" and "over the limit of 0" in (capped.reason or "")
    read = read_document(content, PDF, ReaderConfig(max_ocr_pages=1))
    assert read.status == "ok" and read.pages[1].reader == "ocr:tesseract"


def test_the_corpus_sensor_never_reads_a_link_out_of_the_root(tmp_path: Path, instance: dg.DagsterInstance) -> None:
    from indx_assets.app.daemon_tick import AutomationState, tick
    from indx_assets.wiring.assets.removal import SourceStores
    from indx_assets.wiring.automation.sensor import scan

    corpus, elsewhere = tmp_path / "corpus", tmp_path / "elsewhere"
    corpus.mkdir()
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text(SECRET + "\n")
    (corpus / "escape.txt").symlink_to(elsewhere / "secret.txt")
    (corpus / "tides.md").write_text("# Tides\n\nSpring tides follow the full moon by a day or two.\n")
    settings = _settings(tmp_path, corpus)
    state = AutomationState()
    tick(instance, settings, state)
    assert ingest_summary(settings.storage_uri, ["corpus/escape.txt", "corpus/tides.md"])["documents_by_status"] == {
        "ok": 1, "outside_root": 1}

    (elsewhere / "secret.txt").write_text(SECRET + " And the spare key is under the mat.\n")
    found = scan(instance, SourceStores.of(build_resources(settings)), state.sensor)
    # the target's new bytes are nobody's business: no hash of them, no change to re-ingest
    assert found.changed == []


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("INDX_FOLLOW_SYMLINKS", "sometimes", "INDX_FOLLOW_SYMLINKS must be one of inside, never, all, got 'sometimes'"),
    ("INDX_MAX_FILE_MB", "lots", "INDX_MAX_FILE_MB must be a number, got 'lots'"),
])
def test_a_bad_bound_is_named_without_a_traceback(tmp_path: Path, variable: str, value: str, message: str) -> None:
    env = {**os.environ, "INDX_HOME": str(tmp_path / "indx"), variable: value}
    done = subprocess.run([str(Path(sys.executable).parent / "indx"), "status"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.strip() == f"indx status: {message}", done.stderr[-2000:]
