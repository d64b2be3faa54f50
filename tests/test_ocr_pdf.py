"""The ladder on PDFs: scanned pages go to OCR and come out as boxed line chunks.

Real scans from `../shared/corpus` (read in place, skipped when absent) and a PDF this
project draws whose pages are only images (`fixtures/make_scans.py`).
"""

from pathlib import Path

import pytest
from fixtures.make_scans import blank, character_error_rate, clean, image_only_pdf, two_columns

from indx_assets.pipeline.chain import load_chain
from indx_assets.pipeline.read_and_chunk import encode_bytes, encode_file, to_document
from indx_assets.pipeline.readers import READERS, ReaderConfig

SCANNED = ["loremipsum-flat.pdf", "single_table.pdf", "table-multi-row-column-cells.pdf"]
#: How the text of a scan must begin (read from the page images by eye).
OPENINGS = {"loremipsum-flat.pdf": "Lorem ipsum dolor sit amet, consectetur adipiscing elit.", "single_table.pdf": "Processing"}

pytestmark = pytest.mark.skipif("application/pdf" not in READERS, reason="the PDF reader is not registered yet")


@pytest.fixture(scope="module")
def chain():
    return load_chain()


@pytest.mark.parametrize("name", SCANNED)
def test_corpus_scans_become_line_chunks_with_boxes(corpus: Path, chain, name: str) -> None:
    path = corpus / "example-docs" / "pdf" / name
    if not path.is_file():
        pytest.skip(f"{name} is not in the corpus")
    document = to_document(encode_file(path, chain=chain, reader_config=ReaderConfig(ocr_dpi=150)))
    pages = document.metadata["pages"]
    assert pages and all(p["status"] == "ok" and p["reader"] == "ocr:tesseract" for p in pages)
    assert len(document.chunks) >= 3
    assert document.content.startswith(OPENINGS.get(name, ""))
    for chunk in document.chunks:
        assert chunk.chunker == "lines" and chunk.bbox is not None and chunk.content.strip()
        assert document.content[chunk.start_offset : chunk.end_offset] == chunk.content
    # Reading order: top to bottom within the page's (single) column.
    tops = [c.bbox[1] for c in document.chunks if c.bbox[0] < 0.5]
    assert tops == sorted(tops)


def test_image_only_pdf_reads_through_ocr_and_the_unread_page_becomes_one_image_piece(chain) -> None:
    if "pdf" not in chain.names:
        pytest.skip("the pdf chunker is not installed yet")
    scans = [clean(), two_columns(), blank()]
    encoded = encode_bytes(image_only_pdf(scans), source_id="scans.pdf", chain=chain)
    document = to_document(encoded)
    by_page = {p: [c for c in document.chunks if c.page == p] for p in (1, 2, 3)}
    for page, scan in zip((1, 2), scans, strict=False):
        chunks = by_page[page]
        assert chunks and all(c.chunker == "lines" and c.bbox is not None for c in chunks)
        assert character_error_rate("\n".join(c.content for c in chunks), scan.text) < 0.05
    # Page 3 is blank: OCR found nothing, so the PDF chunker renders it as one image piece.
    assert encoded.read.pages[2].status == "unreadable"
    (image,) = by_page[3]
    assert image.chunker == "pdf" and image.image and image.chunk_type == "image"
    assert image.bbox == (0.0, 0.0, 1.0, 1.0)


@pytest.mark.slow
def test_a_huge_pdf_page_is_rendered_for_ocr_under_the_pixel_limit() -> None:
    # 1700 px at 8.5 dpi: a page 200 inches wide, 1.6 gigapixels at 200 dpi if nothing capped it.
    import io

    from indx_assets.pipeline.readers import read_document
    from indx_assets.pipeline.readers.image import MAX_PIXELS

    scan = clean()
    buffer = io.BytesIO()
    scan.image.save(buffer, "PDF", resolution=8.5)
    read = read_document(buffer.getvalue(), "application/pdf", ReaderConfig(ocr_dpi=200))
    (page,) = read.pages
    assert page.status == "ok" and page.reader == "ocr:tesseract"
    dpi = page.metadata["ocr_dpi"]
    assert dpi < 200
    assert (200 * dpi / 72) * (106 * dpi / 72) <= MAX_PIXELS * 1.01  # 200 x 106 inches at the dpi used
    assert character_error_rate(page.text, scan.text) < 0.05
