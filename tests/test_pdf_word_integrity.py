"""Corpus pages whose chunks once corrupted words (issue 15): each chunk word is a word of the
page's own text layer, table cells stay whole, and no text goes missing between chunks.

Read in place from `../shared/corpus` (skipped when absent).
"""

from pathlib import Path
from typing import Any

import pytest

from indx_assets.pipeline.chunker_port import ChunkPiece
from indx_assets.pipeline.chunkers.pdf import PdfChunker
from indx_assets.pipeline.document import DocumentChunk
from indx_assets.pipeline.fidelity import PageFidelity, measure_page
from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.pipeline.readers.pdf import read_pdf

PDF = "application/pdf"


def _pieces(corpus: Path, name: str, page: int, **options: Any) -> tuple[str, list[ChunkPiece]]:
    """Page `page` of corpus PDF `name` (in `example-docs/pdf` unless it names its folder): the
    reader's text and its text pieces (no sentences), cut with the chunker's `options`."""
    content = (corpus / "example-docs" / (name if "/" in name else f"pdf/{name}")).read_bytes()
    read = read_pdf(content, ReaderConfig())
    chunks = {c.page: c.pieces for c in PdfChunker(**options).chunk(content, PDF, read.pages)}
    pieces = [p for p in chunks[page] if p.text and p.chunk_type != "sentence"]
    return read.pages[page - 1].text, pieces


def _measured(page: int, text: str, pieces: list[ChunkPiece]) -> PageFidelity:
    """`indx verify`'s measure of the page against its pieces."""
    chunks = [DocumentChunk(source_id="doc", locator=f"page:{page}/chunk:{k}", content=p.text or "",
                            chunk_type=p.chunk_type or "content", page=page, metadata=p.metadata)
              for k, p in enumerate(pieces)]
    return measure_page(page, text, chunks)


def _words(text: str) -> list[str]:
    return [w for w in (t.strip(".,;:()[]{}'\"") for t in text.split()) if w]


def test_embedded_images_tables_keeps_the_header_the_page_number_and_every_table_cell_whole(corpus: Path) -> None:
    # PDFium leaves control glyphs of this page's table out of its text: offsets used as its
    # character indices read every later box one character off ("Sa" | "ni", "4.0910")
    text, pieces = _pieces(corpus, "embedded-images-tables.pdf", 1)
    chunk_words = [w for p in pieces for w in _words(p.text or "")]
    assert "Sanni" in chunk_words and "454" in chunk_words
    assert not {"Sa", "ni", "54"} & set(chunk_words)
    (table,) = [p for p in pieces if p.chunk_type == "table"]
    cells = [c.strip() for row in (table.text or "").splitlines() for c in row.split("|")]
    numbers = text[text.index("0 0.0335") : text.index("Fig. 4")].split()
    assert len(numbers) == 6 * 7
    assert set(numbers) <= set(cells), set(numbers) - set(cells)  # every cell whole, none run together
    assert "2 | 1.9460 | 0.0596 | 0.8276 | 0.0002 | 121.440 | 1.5054" in (table.text or "")


def test_layout_parser_keeps_initial_letters_and_the_text_between_chunks(corpus: Path) -> None:
    text, pieces = _pieces(corpus, "layout-parser-paper-fast.pdf", 1)
    joined = " ".join(" ".join((p.text or "").split()) for p in pieces)
    for phrase in ("Brown University", "Harvard University", "innovations by a wide audience"):
        assert phrase in " ".join(text.split())
        assert phrase in joined
    assert not {"rown", "niversity", "arvard"} & set(_words(joined))


@pytest.mark.parametrize(("name", "page", "glued", "phrases"), [
    # a poster's slanted lines overlap in height: read as one row, they ran together
    ("failure-after-repair.pdf", 37, {"exerciseshas", "thatmore", "timesRepeat", "earsLift", "slowlybegin"},
     ["Arm exercises will also move any fluid that has collected", "Lift your shoulder slowly up towards your ears"]),
    # stacked lines joined through a taller figure in the next column
    ("reliance.pdf", 2, {"croreEXPORTS", "Ambanicontribute", "chapterand", "growthOne"},
     ["which has no final chapter and one which is continually", "EXPORTS"]),
])
def test_lines_of_a_page_are_not_glued_into_one(corpus: Path, name: str, page: int, glued: set[str], phrases: list[str]) -> None:
    text, pieces = _pieces(corpus, name, page)
    chunk_words = {w for p in pieces for w in _words(p.text or "")}
    assert not glued & chunk_words
    page_words = set(_words(text))
    assert glued.isdisjoint(page_words)
    joined = " ".join(" ".join((p.text or "").split()) for p in pieces)
    for phrase in phrases:
        assert phrase in joined


def test_a_word_broken_across_letter_spaced_runs_stays_one_word(corpus: Path) -> None:
    # the back cover's letter-spaced capitals: PDFium reads "UNDERSTANDING", the glyphs lie apart
    text, pieces = _pieces(corpus, "failure-after-repair.pdf", 76)
    assert "UNDERSTANDING" in text
    chunk_words = {w for p in pieces for w in _words(p.text or "")}
    assert "UNDERSTANDING" in chunk_words and "STAN" not in chunk_words


@pytest.mark.parametrize(("name", "page", "off_page"), [
    ("reliance.pdf", 2, "Stakeholder Value-creation"),  # the facing page's contents, beyond the crop box
    ("failure-after-repair.pdf", 25, "achieve a good cosmetic outcome after surgery"),  # a table across a spread
])
def test_text_drawn_beyond_the_page_is_kept_in_hidden_pieces(corpus: Path, name: str, page: int, off_page: str) -> None:
    text, pieces = _pieces(corpus, name, page)
    assert off_page in " ".join(text.split())
    hidden = [p for p in pieces if p.bbox is None]
    assert hidden and all(p.bbox_reason == "hidden" and p.metadata["off_page"] for p in hidden)
    assert any(off_page in " ".join((p.text or "").split()) for p in hidden)
    assert all(off_page not in " ".join((p.text or "").split()) for p in pieces if p.bbox is not None)
    page_words = _words(text)
    held = set(w for p in pieces for w in _words(p.text or "")) | {
        w for p in pieces for line in p.metadata.get("page_footer", []) + p.metadata.get("page_header", []) for w in _words(line)}
    assert sum(w in held for w in page_words) >= 0.99 * len(page_words)


def test_a_glyph_pdfium_cannot_map_is_no_hyphen_inside_a_word(corpus: Path) -> None:
    # the "ffi" ligature reads as U+FFFE in PDFium's text ("di\ufffeculties"): a hyphen only
    # where it ends a line, a soft hyphen (in no word) inside one
    text, pieces = _pieces(corpus, "copy-protected.pdf", 2)
    assert "di\ufffeculties" in text
    chunk_words = [w.replace("\u00ad", "") for p in pieces for w in _words(p.text or "")]
    assert "diculties" in chunk_words and "di-culties" not in chunk_words


def test_a_table_in_one_column_takes_no_lines_of_the_other(corpus: Path) -> None:
    # Table 3 sits in the right column; the left column's lines on its rows' baselines were
    # read as cells, so "train-" ended a heading and "ing examples" began the table
    text, pieces = _pieces(corpus, "multi-column.pdf", 6)
    (table,) = [p for p in pieces if p.chunk_type == "table" and "Random" in (p.text or "")]
    assert "examples" not in (table.text or "") and "BM25" in (table.text or "")
    flat = [" ".join((p.text or "").split()) for p in pieces]
    assert any("how many train- ing examples are needed" in f for f in flat)
    assert any("different num- bers of training examples" in f for f in flat)


@pytest.mark.parametrize(("name", "page", "line"), [
    # w with (i) set over 1: the superscripts made a row of their own, read as a table's cells
    # ("of tokens w1 , w2 , ... | (i) | (i) | (i)"), and "w1" is no word of the page
    ("multi-column.pdf", 2, "of tokens w (i) 1 , w (i) 2 , · · · , w (i) |pi| . Given a question q,"),
    # p with + over i: the subscript drawn over the superscript was a line of its own
    ("multi-column.pdf", 3, "(positive) passage p + i , along with n irrelevant (neg-"),
    ("multi-column.pdf", 7, "where Pˆ = [P [CLS] 1 , . . . , P [CLS] k ] ∈ R h×k and"),
    # an accent PDFium draws as a glyph of its own, over its letter ("Šedivý")
    ("multi-column.pdf", 4, "CuratedTREC (TREC) (Baudis and ˇ Sediv ˇ y`,"),
    ("language-docs/fr_olap.pdf", 4, "i. mostfreq(q) = ×ihS 0 i = {m ∈ Si |@m0 ∈ Si , fi(m0 ) > fi(m)}, fi|S0"),
])
def test_a_formulas_scripts_and_accents_are_read_on_their_line_as_the_page_reads_them(
        corpus: Path, name: str, page: int, line: str) -> None:
    text, pieces = _pieces(corpus, name, page)
    assert any(line in row for p in pieces for row in (p.text or "").splitlines())  # on one line, in the page's order
    result = _measured(page, text, pieces)
    assert (result.foreign, result.notation, result.lost) == (0, 0, 0), result.examples


@pytest.mark.parametrize("sentences", [False, True])
@pytest.mark.parametrize(("name", "page", "word", "before", "after"), [
    # the left column ends in "simi-", the right one starts with "larity)"
    ("multi-column.pdf", 3, "simi-\nlarity)", "(i.e., higher", "than the irrelevant ones"),
    # one column, a chunk ended by its size at "ma-"
    ("multi-column.pdf", 3, "ma-\ntrix", "is a (B × B)", "of similarity scores"),
    ("language-docs/fr_olap.pdf", 3, "sec-\ntion", "dans la", "précédente."),
])
def test_a_word_hyphenated_across_a_chunk_break_is_whole_in_one_chunk(
        corpus: Path, name: str, page: int, word: str, before: str, after: str, sentences: bool) -> None:
    text, pieces = _pieces(corpus, name, page, sentences=sentences)
    (holder,) = [p for p in pieces if word in (p.text or "")]
    assert " ".join((holder.text or "").split()).endswith(f"{before} {' '.join(word.split())}")
    assert holder.start is not None and holder.end is not None
    assert text[holder.start : holder.end].endswith(word.split("-")[1].split()[-1])  # its offsets reach over the word
    following = pieces[pieces.index(holder) + 1]
    assert (following.text or "").startswith(after)
    tail = word.split("\n")[1]
    assert all(not (p.text or "").startswith(tail) for p in pieces)
    result = _measured(page, text, pieces)
    assert (result.foreign, result.lost, result.duplicated) == (0, 0, 0), result.examples
