"""The `pdf` chunker cuts with the structure-aware chunking library: token limits, sections,
row-wise table splits with the header repeated, chain options, and per-piece line boxes.

The PDFs are drawn here with reportlab (the project's fixture helpers record every line's
text and box), so each test compares the chunker's answer with what was drawn.
"""

import random
import re
from pathlib import Path

import pytest
from fixtures import make_pdfs as fx
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from indx_assets.pipeline.chunker_port import ChunkPiece
from indx_assets.pipeline.chunkers.base import DEFAULT_MAX_TOKENS
from indx_assets.pipeline.chunkers.pdf import PdfChunker, PdfProvider
from indx_assets.pipeline.chunking.measure import TokenMeasure
from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.pipeline.readers.pdf import read_pdf
from indx_assets.pipeline.tokenizer import minilm_tokenizer

PDF = "application/pdf"
WORDS = fx._WORDS


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."


def _article(path: Path) -> tuple[fx.DrawnPdf, list[tuple[int, str]]]:
    """Two pages of sections (bold 15 pt headings) over long 10 pt paragraphs wrapped at 80
    characters; page 2 starts mid-section. Returns the drawing and (page, heading) in order."""
    rng = random.Random(11)
    c = Canvas(str(path), pagesize=A4)
    drawn = fx.DrawnPdf(path)
    headings: list[tuple[int, str]] = []
    plan = [("Tides and Currents", 3), ("Sediment Transport", 4), ("Coastal Erosion", 2)]
    page, y = 1, 800.0
    for title, paragraphs in plan:
        if y < 200:
            c.showPage()
            page, y = page + 1, 800.0
        fx._draw(c, drawn, title, "Helvetica-Bold", 15, 56, y, f"p{page}:heading")
        headings.append((page, title))
        y -= 26
        for _ in range(paragraphs):
            text = " ".join(_sentence(rng) for _ in range(9))
            lines = re.findall(r"(.{1,80})(?:\s|$)", text)
            for line in lines:
                if y < 60:  # the section runs on to the next page, without a heading there
                    c.showPage()
                    page, y = page + 1, 800.0
                fx._draw(c, drawn, line, "Helvetica", 10, 56, y, f"p{page}:body")
                y -= 13
            y -= 10
    c.showPage()
    c.save()
    return drawn, headings


def _chunk(path: Path, chunker: PdfChunker | None = None) -> dict[int, tuple[ChunkPiece, ...]]:
    content = path.read_bytes()
    read = read_pdf(content, ReaderConfig())
    return {c.page: c.pieces for c in (chunker or PdfChunker()).chunk(content, PDF, read.pages)}


def _contains(outer: tuple[float, ...], inner: tuple[float, ...], slack: float = 0.004) -> bool:
    return all(outer[i] <= inner[i] + slack for i in (0, 1)) and all(outer[i] >= inner[i] - slack for i in (2, 3))


def test_article_chunks_fit_the_minilm_limit_and_follow_the_headings(tmp_path: Path) -> None:
    drawn, headings = _article(tmp_path / "article.pdf")
    by_page = _chunk(drawn.path)
    assert set(by_page) == {1, 2}
    tokenizer = minilm_tokenizer()
    pieces = [p for page in sorted(by_page) for p in by_page[page]]
    assert all(tokenizer.count(p.text or "") <= DEFAULT_MAX_TOKENS for p in pieces)
    body_words = sum(len(l.text.split()) for l in drawn.lines)
    assert len(pieces) >= body_words * 1.3 / DEFAULT_MAX_TOKENS  # really cut, not one piece per page
    # every heading starts a piece, and every piece names the heading above it, across the page break
    current = None
    starts = []
    for piece in pieces:
        first_line = (piece.text or "").split("\n", 1)[0]
        if any(first_line == title for _, title in headings):
            current = first_line
            starts.append(first_line)
        assert piece.metadata.get("section_title") == current, (piece.text[:60], current)  # type: ignore[index]
        assert piece.metadata.get("section_path") == [current]
    assert starts == [title for _, title in headings]
    page_two_first = by_page[2][0]
    first_drawn = next(l for l in drawn.lines if l.region.startswith("p2:"))
    assert first_drawn.region == "p2:body"  # page 2 opens mid-section: the section carries over
    assert page_two_first.metadata["section_title"] == [t for p, t in headings if p == 1][-1]
    ids = {p.metadata["section_title"]: p.metadata["section_id"] for p in pieces}
    assert len(set(ids.values())) == len(headings)  # section ids are unique in the document


def test_pieces_of_a_long_paragraph_get_their_own_lines_box_and_offsets(tmp_path: Path) -> None:
    drawn, _ = _article(tmp_path / "article.pdf")
    content = drawn.path.read_bytes()
    page = read_pdf(content, ReaderConfig()).pages[0]
    pieces = PdfChunker(max_tokens=60, new_after_n_tokens=40).chunk(content, PDF, (page,))[0].pieces
    body = [l for l in drawn.lines if l.region == "p1:body"]
    flat = [" ".join((p.text or "").split()) for p in pieces]
    for line in body:
        holders = [k for k, text in enumerate(flat) if line.text in text]
        for k in holders:  # a piece's box encloses every line it holds whole ...
            assert _contains(pieces[k].bbox, line.bbox), (line.text, pieces[k].bbox)  # type: ignore[arg-type]
    for k, piece in enumerate(pieces):  # ... and no line it holds nothing of
        words = set(flat[k].split())
        for line in body:
            y_mid = (line.bbox[1] + line.bbox[3]) / 2
            if not words & set(line.text.split()):
                assert not piece.bbox[1] < y_mid < piece.bbox[3], (flat[k][:50], line.text)  # type: ignore[index]
    heights = [p.bbox[3] - p.bbox[1] for p in pieces]  # type: ignore[index]
    assert len(set(round(h, 3) for h in heights)) > 1
    with_offsets = [p for p in pieces if p.start is not None]
    assert len(with_offsets) >= len(pieces) * 0.8  # a line split between pieces keeps both offsets
    for p in with_offsets:
        assert page.text[p.start : p.end].split() == (p.text or "").split()  # type: ignore[misc]


def _long_table(path: Path, rows: int = 40) -> fx.DrawnPdf:
    c = Canvas(str(path), pagesize=A4)
    drawn = fx.DrawnPdf(path)
    fx._draw(c, drawn, "Station log", "Helvetica-Bold", 16, 56, 800, "heading")
    fx._draw(c, drawn, "Readings from the spring survey, one station a row.", "Helvetica", 10, 56, 784, "text")
    cols = (56, 200, 300, 400)
    header = ("Station", "Depth (m)", "Salinity", "Temperature")
    rng = random.Random(5)
    for r in range(rows + 1):
        y = 760 - r * 17
        cells = header if r == 0 else (f"{rng.choice(WORDS).title()} {r}", str(rng.randint(1, 400)), f"{rng.uniform(20, 36):.1f}", f"{rng.uniform(2, 20):.1f}")
        for x, cell in zip(cols, cells, strict=True):
            fx._draw(c, drawn, cell, "Helvetica-Bold" if r == 0 else "Helvetica", 9, x, y, f"row{r}")
    c.showPage()
    c.save()
    return drawn


def test_a_long_table_is_split_by_rows_with_its_header_repeated(tmp_path: Path) -> None:
    drawn = _long_table(tmp_path / "table.pdf")
    pieces = [p for p in _chunk(drawn.path)[1] if p.chunk_type == "table"]
    tokenizer = minilm_tokenizer()
    header = "Station Depth (m) Salinity Temperature"
    assert len(pieces) > 1
    assert all(tokenizer.count(p.text or "") <= DEFAULT_MAX_TOKENS for p in pieces)
    seen = []
    for k, piece in enumerate(pieces):
        rows = [row.replace(" | ", " ") for row in (piece.text or "").splitlines()]  # ` | ` where it fits
        assert rows[0] == header  # the first piece starts with it, continuations repeat it
        assert piece.metadata["table_part"] == k and piece.metadata["section_title"] == "Station log"
        body = rows[1:]
        seen.extend(body)
        # the box is the rows this piece holds, not the whole table
        drawn_rows = [r for r in range(1, 41) if " ".join(l.text for l in drawn.region(f"row{r}")) in body]
        assert len(drawn_rows) == len(body)
        for r in range(1, 41):
            for cell in drawn.region(f"row{r}"):
                inside = _contains(piece.bbox, cell.bbox)  # type: ignore[arg-type]
                assert inside == (r in drawn_rows), (k, r)
    assert seen == [" ".join(l.text for l in drawn.region(f"row{r}")) for r in range(1, 41)]  # every row once, in order


def test_chain_options_change_the_cut(tmp_path: Path) -> None:
    drawn, _ = _article(tmp_path / "article.pdf")
    default = [p for ps in _chunk(drawn.path).values() for p in ps]
    small = [p for ps in _chunk(drawn.path, PdfProvider().with_options(max_tokens=80).chunkers()[0]).values() for p in ps]
    chars = [p for ps in _chunk(drawn.path, PdfProvider().with_options(max_characters=300).chunkers()[0]).values() for p in ps]
    tokenizer = minilm_tokenizer()
    assert len(small) > len(default) and all(tokenizer.count(p.text or "") <= 80 for p in small)
    assert len(chars) > len(default) and all(len(p.text or "") <= 300 for p in chars)
    words = " ".join(l.text for l in drawn.lines).split()
    for cut in (default, small, chars):  # nothing lost, nothing doubled, whatever the limits
        assert " ".join(p.text or "" for p in cut).split() == words
    with pytest.raises(ValueError, match="max_tokens"):
        PdfProvider().with_options(max_tokens=0)
    with pytest.raises(ValueError, match="unknown chunker options"):
        PdfProvider(max_chars=10)


class _CountingTokenizer:
    """The MiniLM tokenizer, counting the words it is asked about (to see the cache work)."""

    whitespace_additive = True

    def __init__(self) -> None:
        self.asked: list[str] = []

    def count(self, text: str) -> int:
        self.asked.append(text)
        return minilm_tokenizer().count(text)


def test_token_measures_of_one_tokenizer_share_word_counts() -> None:
    tokenizer = _CountingTokenizer()
    first = TokenMeasure(tokenizer).sizes(["harbour lantern granite", "granite orchard"])
    asked = len(tokenizer.asked)
    assert asked == 4  # each distinct word once
    second = TokenMeasure(tokenizer).sizes(["granite orchard harbour"])  # a later page: known words
    assert len(tokenizer.asked) == asked
    assert second == [minilm_tokenizer().count("granite orchard harbour")] and first[1] == minilm_tokenizer().count("granite orchard")
