"""The `pdf` chunker on PDFs the project generates, compared with what the generator drew."""

import io
import json
import re
from pathlib import Path

import pytest
from fixtures import make_pdfs as fx
from PIL import Image

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chunker_port import ChunkPiece, Line, PageOutput
from indx_assets.pipeline.chunkers.pdf import PdfChunker, PdfProvider
from indx_assets.pipeline.read_and_chunk import encode_file, to_document
from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.pipeline.readers.pdf import PASSWORDS_ENV, read_pdf

PDF = "application/pdf"


def _pieces(path: Path, chunker: PdfChunker | None = None, **config: object) -> dict[int, tuple[ChunkPiece, ...]]:
    content = path.read_bytes()
    read = read_pdf(content, ReaderConfig(**config))  # type: ignore[arg-type]
    return {c.page: c.pieces for c in (chunker or PdfChunker()).chunk(content, PDF, read.pages)}


def _contains(outer: tuple[float, ...], inner: tuple[float, ...], slack: float = 0.004) -> bool:
    return outer[0] <= inner[0] + slack and outer[1] <= inner[1] + slack and outer[2] >= inner[2] - slack and outer[3] >= inner[3] - slack


def _flat(text: str) -> str:
    return re.sub(r"\s*\|\s*|\s+", " ", text)


@pytest.mark.parametrize("shuffled", [False, True], ids=["glyph-runs", "glyph-runs-shuffled"])
def test_invoice_glyph_runs_give_whole_lines_in_order_inside_their_boxes(tmp_path: Path, shuffled: bool) -> None:
    drawn = fx.invoice(tmp_path / "invoice.pdf", shuffled=shuffled)
    pieces = _pieces(drawn.path)[1]
    flat = [_flat(p.text or "") for p in pieces]
    where = []
    for line in drawn.lines:
        whole = re.compile(r"(?<!\S)" + re.escape(line.text) + r"(?!\S)")
        holders = [k for k, text in enumerate(flat) if whole.search(text)]
        assert holders, f"line {line.text!r} is not whole in any chunk: {flat}"
        inside = [k for k in holders if _contains(pieces[k].bbox, line.bbox)]  # type: ignore[arg-type]
        assert inside, f"{line.text!r} {line.bbox} outside {[pieces[k].bbox for k in holders]}"
        k = inside[0]
        where.append((k, whole.search(flat[k]).start()))  # type: ignore[union-attr]
    # reading order: the drawn lines come out top to bottom (cells of one row left to right)
    assert where == sorted(where)


def test_invoice_items_become_a_table_chunk(tmp_path: Path) -> None:
    pieces = _pieces(fx.invoice(tmp_path / "invoice.pdf").path)[1]
    tables = [p for p in pieces if p.chunk_type == "table"]
    assert len(tables) == 1
    rows = tables[0].text.splitlines()  # type: ignore[union-attr]
    assert rows == [
        "Description | Quantity | Amount",
        "Consulting services, February | 12 | EUR 1,440.00",
        "Travel expenses, Lyon workshop | 1 | EUR 312.50",
    ]


def test_two_columns_never_mix(tmp_path: Path) -> None:
    drawn = fx.two_column(tmp_path / "article.pdf")
    pieces = _pieces(drawn.path)[1]
    left_words = {w for line in drawn.region("left") for w in line.text.split()}
    right_words = {w for line in drawn.region("right") for w in line.text.split()}
    seen_left = seen_right = 0
    order = []
    for piece in pieces:
        words = set((piece.text or "").split()) - set(drawn.region("title")[0].text.split())
        has_left, has_right = bool(words & left_words), bool(words & right_words)
        assert not (has_left and has_right), f"chunk mixes columns: {piece.text!r}"
        seen_left += has_left
        seen_right += has_right
        order.append("L" if has_left else "R" if has_right else "-")
        column = drawn.region("left" if has_left else "right")
        if has_left or has_right:  # the box stays inside its column
            assert piece.bbox[0] >= min(l.bbox[0] for l in column) - 0.01  # type: ignore[index]
            assert piece.bbox[2] <= max(l.bbox[2] for l in column) + 0.01  # type: ignore[index]
    assert seen_left and seen_right
    assert "".join(order).strip("-").rstrip("R").count("R") == 0, f"left column not read first: {order}"
    every_line = "\n".join(p.text or "" for p in pieces)
    for line in drawn.lines:
        assert line.text in every_line


def test_table_page_reads_row_by_row(tmp_path: Path) -> None:
    drawn = fx.table(tmp_path / "table.pdf")
    pieces = _pieces(drawn.path)[1]
    table = next(p for p in pieces if p.chunk_type == "table")
    assert table.text.splitlines() == [" | ".join(row) for row in fx.TABLE_ROWS]  # type: ignore[union-attr]
    cells = [l for l in drawn.lines if l.region.startswith("row")]
    assert all(_contains(table.bbox, c.bbox) for c in cells)  # type: ignore[arg-type]
    assert pieces[0].text.startswith("Survey results")  # type: ignore[union-attr]
    assert pieces[0].metadata.get("section_title") == "Survey results"


def test_rotated_page_boxes_are_in_the_displayed_page(tmp_path: Path) -> None:
    drawn = fx.rotated(tmp_path / "rotated.pdf")
    pieces = _pieces(drawn.path)[1]
    text = "\n".join(p.text or "" for p in pieces)
    for line in drawn.lines:
        assert line.text in text
        holder = next(p for p in pieces if line.text in (p.text or ""))
        assert _contains(holder.bbox, line.bbox, slack=0.01), (line.text, line.bbox, holder.bbox)  # type: ignore[arg-type]
    assert text.index(drawn.lines[0].text) < text.index(drawn.lines[-1].text)


def test_pieces_carry_offsets_into_the_readers_text(tmp_path: Path) -> None:
    content = fx.table(tmp_path / "table.pdf").path.read_bytes()
    page = read_pdf(content, ReaderConfig()).pages[0]
    pieces = PdfChunker().chunk(content, PDF, (page,))[0].pieces
    assert all(p.start is not None for p in pieces)
    for p in pieces:
        words = page.text[p.start : p.end].split()  # type: ignore[misc]
        assert _flat(p.text or "").split() == [w for w in words if w != "|"]


def test_size_bound_splits_between_lines_and_repeats_table_headers(tmp_path: Path) -> None:
    drawn = fx.two_column(tmp_path / "article.pdf")
    pieces = _pieces(drawn.path, PdfChunker(max_characters=200, new_after_n_chars=150))[1]
    assert all(len(p.text or "") <= 200 for p in pieces)
    flat = " ".join(p.text or "" for p in pieces)
    assert all(line.text in flat for line in drawn.lines)  # nothing lost, lines whole
    table_pieces = [p for p in _pieces(fx.table(tmp_path / "t.pdf").path, PdfChunker(max_characters=80))[1] if p.chunk_type == "table"]
    header = " | ".join(fx.TABLE_ROWS[0])
    assert len(table_pieces) > 1 and all(p.text.splitlines()[0] == header for p in table_pieces)  # type: ignore[union-attr]


def test_unread_pages_become_one_image_at_the_chunk_dpi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDX_CHUNK_DPI", "100")
    content = fx.image_only(tmp_path / "mixed.pdf").path.read_bytes()
    read = read_pdf(content, ReaderConfig())  # the PDF reader alone: no OCR took page 2
    failed = PageOutput(page=3, status="failed", reader="pdfium", reason="pretend PDFium refused it")
    outputs = (*read.pages[:2], failed)
    by_page = {c.page: c.pieces for c in PdfChunker().chunk(content, PDF, outputs)}
    assert set(by_page) == {1, 2, 3}  # the text page, the scan, and the failed (but drawable) page
    for page in (2, 3):
        (piece,) = by_page[page]
        assert piece.image is not None and piece.bbox == (0.0, 0.0, 1.0, 1.0)
        image = Image.open(io.BytesIO(piece.image))
        assert image.format == "PNG"
        width, height = image.size  # PDFium rounds the pixel size up
        assert abs(width - 595.2756 * 100 / 72) < 1 and abs(height - 841.8898 * 100 / 72) < 1


def test_declines_ocr_pages_other_media_and_bytes_it_cannot_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORDS_ENV, raising=False)
    drawn = fx.invoice(tmp_path / "invoice.pdf")
    content = drawn.path.read_bytes()
    ocr_page = PageOutput(page=1, text="INVOICE", reader="ocr:tesseract", lines=(Line("INVOICE", (0.1, 0.1, 0.3, 0.2)),))
    assert PdfChunker().chunk(content, PDF, (ocr_page,)) == ()
    ours = read_pdf(content, ReaderConfig()).pages
    assert PdfChunker().chunk(content, "text/plain", ours) == ()
    assert PdfChunker().chunk(content[:300], PDF, ours) == ()
    secret = fx.encrypted(tmp_path / "secret.pdf")
    read = read_pdf(secret.path.read_bytes(), ReaderConfig(passwords=(secret.password,)))
    assert PdfChunker().chunk(secret.path.read_bytes(), PDF, read.pages) == ()  # chunker has no password
    monkeypatch.setenv(PASSWORDS_ENV, f'["{secret.password}"]')
    (claim,) = PdfChunker().chunk(secret.path.read_bytes(), PDF, read.pages)
    assert secret.lines[0].text in claim.pieces[0].text  # type: ignore[operator]


def test_provider_is_discovered_and_validates_options() -> None:
    chain = load_chain()
    assert "pdf" in chain.names and chain.names.index("pdf") < chain.names.index("page")
    assert PdfProvider().with_options(max_characters=300).chunkers()[0].max_characters == 300
    with pytest.raises(ValueError, match="max_characters"):
        PdfProvider(max_characters=0)


def test_end_to_end_through_the_chain(tmp_path: Path) -> None:
    document = to_document(encode_file(fx.invoice(tmp_path / "invoice.pdf").path))
    assert document.chunks and {c.chunker for c in document.chunks} == {"pdf"}
    assert all(c.bbox is not None for c in document.chunks)
    table = next(c for c in document.chunks if c.chunk_type == "table")
    assert table.locator.startswith("table:page:1:char:")


def test_running_headers_and_page_numbers_are_furniture_not_chunk_text(tmp_path: Path) -> None:
    drawn = fx.paged_report(tmp_path / "report.pdf", pages=4)
    pages = _pieces(drawn.path)
    assert sorted(pages) == [1, 2, 3, 4]
    everything = " ".join(_flat(p.text or "") for pieces in pages.values() for p in pieces)
    for line in drawn.region("header") + drawn.region("footer"):
        assert line.text not in everything
    # what sits beside it in the band is content: the entry's label recurs on every page, but
    # beside a title that does not
    for line in drawn.region("entry") + drawn.region("body"):
        assert re.search(r"(?<!\S)" + re.escape(line.text) + r"(?!\S)", everything), line.text
    footer_top = min(line.bbox[1] for line in drawn.region("footer"))
    for number, pieces in pages.items():
        for piece in pieces:
            assert piece.metadata["page_header"] == [fx.REPORT_HEADER]
            assert piece.metadata["page_footer"] == [f"Page {number} of 4"]
            assert piece.bbox[3] < footer_top  # type: ignore[index]  # no box stretched to the page's foot


def test_a_lone_page_keeps_its_top_line_and_loses_its_page_number(tmp_path: Path) -> None:
    drawn = fx.paged_report(tmp_path / "one.pdf", pages=1)
    pieces = _pieces(drawn.path)[1]
    everything = " ".join(_flat(p.text or "") for p in pieces)
    assert fx.REPORT_HEADER in everything  # once is not running
    assert "Page 1 of 1" not in everything and pieces[0].metadata["page_footer"] == ["Page 1 of 1"]
    assert "page_header" not in pieces[0].metadata


def test_a_page_of_nothing_but_furniture_is_still_the_pdf_chunkers(tmp_path: Path) -> None:
    drawn = fx.paged_report(tmp_path / "report.pdf", pages=4, bare=(3,))
    document = to_document(encode_file(drawn.path))
    bare = [c for c in document.chunks if c.page == 3]
    # its text stays its own (no fallback chunker takes the page) and nothing else is lost
    assert bare and {c.chunker for c in bare} == {"pdf"}
    assert "Page 3 of 4" in " ".join(c.content for c in bare)
    assert all("Page 2 of 4" not in c.content for c in document.chunks if c.page == 2)


def test_pdf_sentences_keep_the_chunks_as_they_were_and_lie_inside_them(tmp_path: Path) -> None:
    # the `sentences` option reaches the pdf chunker through the shared chunking options
    sample = Path(__file__).resolve().parents[1] / "data" / "sample" / "handbooks" / "harbour-pilot.pdf"
    for path in (sample, fx.two_column(tmp_path / "columns.pdf").path):
        plain = to_document(encode_file(path))
        chain = load_chain(ChainConfig.parse(json.dumps({"options": {"pdf": {"sentences": True}}})))
        encoded = encode_file(path, chain=chain)
        document = to_document(encoded)
        chunks = [c for c in document.chunks if c.chunk_type != "sentence"]
        sentences = [c for c in document.chunks if c.chunk_type == "sentence"]
        # the chunks are the same, offsets and boxes included (sentence pieces used to take the offsets away)
        assert [(c.content, c.bbox, c.start_offset) for c in chunks] == [(c.content, c.bbox, c.start_offset) for c in plain.chunks]
        assert sentences
        pages = {p.page: p.text for p in encoded.read.pages}
        by_id = {c.id: c for c in chunks}
        for sentence in sentences:
            chunk = by_id[sentence.metadata["chunk_id"]]
            assert chunk.page == sentence.page and _flat(sentence.content) in _flat(chunk.content)
            assert sentence.bbox is not None and _contains(chunk.bbox, sentence.bbox)
            if chunk.start_offset is not None:  # a chunk the reader's text holds in one stretch
                assert chunk.start_offset <= sentence.start_offset < sentence.end_offset <= chunk.end_offset
                assert _flat(pages[sentence.page][sentence.start_offset : sentence.end_offset]) == _flat(sentence.content)
    # the two columns interleave in the reader's text, so their chunks have no offsets: order links
    assert any(by_id[s.metadata["chunk_id"]].start_offset is None for s in sentences)


def test_body_size_is_the_median_of_line_sizes_weighted_by_length() -> None:
    # the body size decides which lines are headings; it is the median of each line's size
    # repeated once per 20 characters, computed without building the repeated list
    import random
    from statistics import median

    from indx_assets.pipeline.chunkers.pdf_layout import weighted_median

    rng = random.Random(15)
    assert weighted_median([]) == 0.0
    for _ in range(5000):
        pairs = [(rng.choice([8.0, 9.5, 10.0, 12.0, rng.random() * 20]), rng.randint(1, 6)) for _ in range(rng.randint(1, 8))]
        assert weighted_median(pairs) == median([v for v, w in pairs for _ in range(w)]), pairs
