"""The PDF reader and chunker on every PDF of the shared corpus (read in place; skipped when absent).

The 619-page rulebook is left to `bench/bench_pdf.py`: it is slow and proves nothing more here.
"""

import io
import re
from pathlib import Path

import pytest
from PIL import Image

from indx_assets.pipeline.chunker_port import validate_bbox
from indx_assets.pipeline.chunkers.pdf import PdfChunker
from indx_assets.pipeline.readers import DOCUMENT_STATUSES, ReaderConfig
from indx_assets.pipeline.readers.pdf import PASSWORDS_ENV, read_pdf

PDF = "application/pdf"
BENCH_ONLY = {"DA-619p.pdf"}


def _corpus_pdfs(corpus: Path) -> list[Path]:
    docs = corpus / "example-docs"
    found = sorted((docs / "pdf").glob("*.pdf")) + sorted((docs / "language-docs").glob("*.pdf"))
    return [p for p in found if p.name not in BENCH_ONLY]


def test_every_corpus_pdf_chunks_with_valid_boxes_or_gets_a_status(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORDS_ENV, raising=False)
    monkeypatch.delenv("INDX_CHUNK_DPI", raising=False)
    pdfs = _corpus_pdfs(corpus)
    assert len(pdfs) >= 20
    chunker = PdfChunker()
    statuses = {}
    for path in pdfs:
        content = path.read_bytes()
        read = read_pdf(content, ReaderConfig())
        assert read.status in DOCUMENT_STATUSES
        statuses[path.name] = read.status
        if not read.pages:
            assert read.reason, f"{path.name}: {read.status} without a reason"
            continue
        claims = {c.page: c.pieces for c in chunker.chunk(content, PDF, read.pages)}
        for page in read.pages:
            if page.status == "ok":
                assert claims.get(page.page), f"{path.name} p{page.page}: text page without chunks"
            if page.status in ("failed", "unreadable"):
                assert all(p.image is not None for p in claims.get(page.page, ())), path.name
            for piece in claims.get(page.page, ()):
                if piece.bbox is None:  # text drawn beyond the displayed page
                    assert piece.bbox_reason == "hidden" and piece.metadata.get("off_page") is True, path.name
                else:
                    assert validate_bbox(piece.bbox) == piece.bbox
                if piece.text is not None and piece.start is not None:
                    assert 0 <= piece.start < piece.end <= len(page.text)
    assert statuses["password.pdf"] == "encrypted"
    assert statuses["copy-protected.pdf"] == "ok"  # empty user password: opens
    assert statuses["fr_olap.pdf"] == "ok"


@pytest.mark.parametrize("name", ["loremipsum-flat.pdf", "single_table.pdf", "table-multi-row-column-cells.pdf"])
def test_scanned_pdfs_become_page_images_at_120_dpi(corpus: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.delenv("INDX_CHUNK_DPI", raising=False)
    import pypdfium2 as pdfium

    content = (corpus / "example-docs" / "pdf" / name).read_bytes()
    read = read_pdf(content, ReaderConfig())  # the PDF reader alone: these pages stay unreadable
    assert {p.status for p in read.pages} == {"unreadable"}
    claims = PdfChunker().chunk(content, PDF, read.pages)
    document = pdfium.PdfDocument(content)
    try:
        for claim in claims:
            (piece,) = claim.pieces
            assert piece.bbox == (0.0, 0.0, 1.0, 1.0) and piece.metadata["dpi"] == 120
            width_pt, height_pt = document.get_page_size(claim.page - 1)
            rotation = document[claim.page - 1].get_rotation()
            if rotation in (90, 270):
                width_pt, height_pt = height_pt, width_pt
            image = Image.open(io.BytesIO(piece.image))  # type: ignore[arg-type]
            assert abs(image.width - width_pt * 120 / 72) <= 1 and abs(image.height - height_pt * 120 / 72) <= 1
    finally:
        document.close()
    assert len(claims) == len(read.pages)


def test_password_pdf_opens_when_its_password_is_configured(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    content = (corpus / "example-docs" / "pdf" / "password.pdf").read_bytes()
    monkeypatch.delenv(PASSWORDS_ENV, raising=False)
    assert read_pdf(content, ReaderConfig()).status == "encrypted"
    read = read_pdf(content, ReaderConfig(passwords=("password",)))
    assert read.status == "ok" and any(p.text.strip() for p in read.pages)
    monkeypatch.setenv(PASSWORDS_ENV, '["password"]')
    claims = PdfChunker().chunk(content, PDF, read.pages)
    assert claims and all(p.bbox for c in claims for p in c.pieces)


def test_multi_column_paper_reads_left_column_before_right(corpus: Path) -> None:
    content = (corpus / "example-docs" / "pdf" / "multi-column-2p.pdf").read_bytes()
    read = read_pdf(content, ReaderConfig())
    pieces = PdfChunker().chunk(content, PDF, read.pages)[0].pieces
    text = "\n".join(p.text or "" for p in pieces)
    # the abstract (left column) ends before the right column's first paragraph begins
    assert text.index("benchmarks") < text.index("Retrieval in open-domain QA is usually")
    assert text.index("1 Introduction") < text.index("Retrieval in open-domain QA is usually")
    left_x1 = max(p.bbox[2] for p in pieces if "Introduction" in (p.text or ""))  # type: ignore[index]
    assert left_x1 < 0.5


def test_a_booklets_page_numbers_and_running_footers_stay_out_of_its_chunks(corpus: Path) -> None:
    content = (corpus / "example-docs" / "pdf" / "failure-after-repair.pdf").read_bytes()
    read = read_pdf(content, ReaderConfig())
    claims = PdfChunker().chunk(content, PDF, read.pages)
    footers = [c.pieces[0].metadata.get("page_footer", []) for c in claims]
    numbered = [(c, number) for c, f in zip(claims, footers, strict=True) for number in f if number.isdigit()]
    assert len(numbered) >= 60  # of 76 pages, the covers and the first pages unnumbered
    # without furniture detection: 66 pieces of a bare page number, many more ending with one
    ends_with_its_number = [p.text for c, number in numbered for p in c.pieces
                            if re.search(rf"(?:^|\n)\s*{number}\s*$", p.text or "")]
    assert not ends_with_its_number
    assert "Cancer Council" in {t for f in footers for t in f}  # the running footer of the left-hand pages
