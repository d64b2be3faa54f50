"""The reader and the `pdf` chunker share one pass over the pages (the read's parsed form,
`PdfParse`): chunking after reading loads no page again, and the pieces are the same whether
the reader kept a page's runs, the chunker measured the page itself, or the chunker was given
no parsed form at all."""

from pathlib import Path

import pypdfium2
import pytest
from fixtures import make_pdfs as fx

from indx_assets.pipeline.chunker_port import PageChunks
from indx_assets.pipeline.chunkers.pdf import PdfChunker
from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.pipeline.readers import pdf as pdf_reader

PDF = "application/pdf"


def _read_and_chunk(content: bytes) -> tuple[PageChunks, ...]:
    read = pdf_reader.read_pdf(content, ReaderConfig())
    return PdfChunker().chunk(content, PDF, read.pages, parsed=read.parsed)


def _article_and_table(tmp_path: Path) -> bytes:
    """Two generated documents' pages in one PDF, so it has several kinds of text page."""
    merged = pypdfium2.PdfDocument.new()
    for made in (fx.two_column(tmp_path / "a.pdf"), fx.table(tmp_path / "t.pdf"), fx.rotated(tmp_path / "r.pdf")):
        source = pypdfium2.PdfDocument(made.path)
        merged.import_pages(source)
        source.close()
    out = tmp_path / "merged.pdf"
    merged.save(out)
    merged.close()
    return out.read_bytes()


def test_chunking_after_reading_loads_no_page_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    content = _article_and_table(tmp_path)
    loads: list[int] = []
    original = pypdfium2.PdfDocument.get_page

    def counting(self: pypdfium2.PdfDocument, index: int) -> pypdfium2.PdfPage:
        loads.append(index)
        return original(self, index)

    monkeypatch.setattr(pypdfium2.PdfDocument, "get_page", counting)
    chunks = _read_and_chunk(content)
    assert chunks and all(c.pieces for c in chunks)
    assert sorted(loads) == list(range(3)), f"pages loaded {loads}: each page should load once"


def test_pieces_are_the_same_when_the_chunker_measures_pages_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    content = _article_and_table(tmp_path)
    shared = _read_and_chunk(content)
    # without the reader's parsed form (pages rebuilt from storage) the chunker reads them itself
    pages = pdf_reader.read_pdf(content, ReaderConfig()).pages
    assert PdfChunker().chunk(content, PDF, pages) == shared
    # the reader keeps runs for the first page only; the chunker loads the other pages again
    monkeypatch.setattr(pdf_reader, "KEPT_GEOMETRY_PAGES", 1)
    read = pdf_reader.read_pdf(content, ReaderConfig())
    assert [p.geometry is not None for p in read.parsed.pages] == [True, False, False]
    assert PdfChunker().chunk(content, PDF, read.pages, parsed=read.parsed) == shared
    # chunking the same parsed pages twice gives the same pieces (layout never edits the runs)
    assert PdfChunker().chunk(content, PDF, read.pages, parsed=read.parsed) == shared
