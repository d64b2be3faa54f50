"""The `lines` chunker: boxed line pieces from the lines a reader found, without the bytes."""

import pytest
from fixtures.make_scans import clean, two_columns

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chunker_port import Line, PageOutput
from indx_assets.pipeline.chunkers.lines import LinesChunker, LinesProvider
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers.ocr import page_text


def _line(text: str, y: float, *, block: int | None = 0, x: float = 0.1, confidence: float = 0.9) -> Line:
    metadata = {"confidence": confidence} | ({"block": block} if block is not None else {})
    return Line(text, (x, y, x + 0.3, y + 0.02), metadata=metadata)


def _page(lines: list[Line], page: int = 1, status: str = "ok") -> PageOutput:
    return PageOutput(page=page, text=page_text(tuple(lines)), status=status, reader="ocr:tesseract", lines=tuple(lines))


TWO_BLOCKS = [
    _line("First line of the left column", 0.10, block=0),
    _line("second line, left column", 0.13, block=0),
    _line("third line closes it.", 0.16, block=0),
    _line("The right column starts", 0.10, block=1, x=0.6),
    _line("and ends here.", 0.13, block=1, x=0.6),
]


def test_one_piece_per_line_in_reading_order_with_its_box_and_offsets() -> None:
    page = _page(TWO_BLOCKS)
    (claim,) = LinesChunker().chunk(b"", "image/png", (page,))
    assert [p.text for p in claim.pieces] == [line.text for line in TWO_BLOCKS]
    assert [p.bbox for p in claim.pieces] == [line.bbox for line in TWO_BLOCKS]
    for piece in claim.pieces:
        assert page.text[piece.start : piece.end] == piece.text
        assert piece.metadata["confidence"] == 0.9


def test_the_bytes_are_never_reopened() -> None:
    # Content that no decoder would take: the chunker works from the lines alone.
    (claim,) = LinesChunker().chunk(b"\x00not an image", "application/octet-stream", (_page(TWO_BLOCKS),))
    assert len(claim.pieces) == len(TWO_BLOCKS)


def test_pages_without_lines_or_unreadable_are_declined() -> None:
    pages = (
        PageOutput(page=1, text="plain text, no lines", reader="text"),
        PageOutput(page=2, text="", status="ok", reader="ocr:tesseract", lines=()),
        PageOutput(page=3, status="unreadable", reader="ocr:tesseract", reason="OCR found no text"),
        _page(TWO_BLOCKS, page=4),
    )
    claims = LinesChunker().chunk(b"", "application/pdf", pages)
    assert [c.page for c in claims] == [4]


def test_size_policy_merges_neighbouring_lines_of_one_block_with_union_box() -> None:
    limit = len("First line of the left column\nsecond line, left column")
    page = _page(TWO_BLOCKS)
    (claim,) = LinesProvider().with_options(max_characters=limit).chunkers()[0].chunk(b"", "image/png", (page,))
    texts = [p.text for p in claim.pieces]
    assert texts == [
        "First line of the left column\nsecond line, left column",
        "third line closes it.",
        "The right column starts\nand ends here.",
    ]
    first = claim.pieces[0]
    assert first.bbox == (0.1, 0.10, 0.4, 0.15)
    assert page.text[first.start : first.end] == first.text
    assert all(len(t) <= limit for t in texts)
    assert [p.metadata["lines"] for p in claim.pieces] == [2, 1, 2]


def test_size_policy_never_merges_across_blocks_or_cuts_a_line() -> None:
    (claim,) = LinesChunker(max_characters=10_000).chunk(b"", "image/png", (_page(TWO_BLOCKS),))
    assert len(claim.pieces) == 2  # one per block, however large the limit
    assert claim.pieces[0].bbox[2] < claim.pieces[1].bbox[0]  # the gutter stays between them
    (tiny,) = LinesChunker(max_characters=5).chunk(b"", "image/png", (_page(TWO_BLOCKS),))
    assert [p.text for p in tiny.pieces] == [line.text for line in TWO_BLOCKS]


def test_lines_without_block_are_not_merged_and_missing_text_keeps_no_offsets() -> None:
    lines = [_line("alpha", 0.1, block=None), _line("beta", 0.2, block=None)]
    page = PageOutput(page=1, text="text that holds neither line", reader="other", lines=tuple(lines))
    (claim,) = LinesChunker(max_characters=100).chunk(b"", "image/png", (page,))
    assert [p.text for p in claim.pieces] == ["alpha", "beta"]
    assert all(p.start is None for p in claim.pieces)


@pytest.mark.parametrize("options", [{"max_characters": 0}, {"max_characters": "80"}, {"max_tokens": 80}])
def test_bad_options_are_refused(options: dict) -> None:
    with pytest.raises(ValueError):
        LinesProvider().with_options(**options)


def test_lines_is_a_discovered_builtin_asked_before_the_fallback() -> None:
    chain = load_chain(ChainConfig())
    assert "lines" in chain.names
    assert chain.names.index("lines") < chain.names.index("page")
    link = chain.links[chain.names.index("lines")]
    assert getattr(link.chunker, "builtin", False) and not getattr(link.chunker, "fallback", False)


def test_scanned_image_end_to_end_becomes_line_chunks_with_boxes() -> None:
    scan = two_columns()
    document = to_document(encode_bytes(scan.encode(), source_id="scans/two-columns.png"))
    assert document.metadata["pages"][0]["reader"] == "ocr:tesseract"
    chunks = document.chunks
    assert chunks and all(c.chunker == "lines" and c.bbox is not None for c in chunks)
    assert len(chunks) == len(scan.boxes)
    # Locators point into the OCR text, so every chunk maps straight back to it.
    for chunk in chunks:
        assert document.content[chunk.start_offset : chunk.end_offset] == chunk.content


def test_chain_option_merges_lines_end_to_end() -> None:
    scan = clean()
    chain = load_chain(ChainConfig(options={"lines": {"max_characters": 400}}))
    document = to_document(encode_bytes(scan.encode(), source_id="clean.png", chain=chain))
    assert 1 < len(document.chunks) < len(scan.boxes)
    assert all(len(c.content) <= 400 for c in document.chunks)
