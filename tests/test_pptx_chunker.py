"""The `pptx` chunker on generated decks: true positions, reading order, tables, pictures, notes.

Every expected box is computed here from the EMU numbers the fixture generator wrote
(`tests/fixtures/make_pptx.py`), with the group arithmetic spelled out in this file.
"""

import io

import pytest
from fixtures import make_pptx as fx
from PIL import Image

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chunker_port import validate_bbox
from indx_assets.pipeline.chunkers.pptx import PptxChunker
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.pipeline.readers.pptx import PPTX, read_pptx

APPROX = dict(abs=1e-9)


def norm(x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
    return (x / fx.SLIDE_W, y / fx.SLIDE_H, (x + w) / fx.SLIDE_W, (y + h) / fx.SLIDE_H)


def into_group(rect, off, ext, ch_off, ch_ext):  # type: ignore[no-untyped-def]
    """A child rectangle in a group's child space, mapped into the group's parent space."""
    sx, sy = ext[0] / ch_ext[0], ext[1] / ch_ext[1]
    x, y, w, h = rect
    return (off[0] + (x - ch_off[0]) * sx, off[1] + (y - ch_off[1]) * sy, w * sx, h * sy)


@pytest.fixture(scope="module")
def deck_bytes() -> bytes:
    return fx.deck()


@pytest.fixture(scope="module")
def pages(deck_bytes: bytes):  # type: ignore[no-untyped-def]
    return read_pptx(deck_bytes, ReaderConfig()).pages


@pytest.fixture(scope="module")
def chunks(deck_bytes: bytes, pages):  # type: ignore[no-untyped-def]
    return {c.page: c.pieces for c in PptxChunker().chunk(deck_bytes, PPTX, pages)}


def by_text(pieces, text: str):  # type: ignore[no-untyped-def]
    [piece] = [p for p in pieces if p.text == text]
    return piece


def test_nested_group_children_land_where_the_groups_scale_them(chunks) -> None:
    outer = (fx.OUTER_OFF, fx.OUTER_EXT, fx.OUTER_CH_OFF, fx.OUTER_CH_EXT)
    inner = (fx.INNER_OFF, fx.INNER_EXT, fx.INNER_CH_OFF, fx.INNER_CH_EXT)
    outer_child = by_text(chunks[1], fx.TEXTS.outer_child)
    assert outer_child.bbox == pytest.approx(norm(*into_group(fx.OUTER_CHILD, *outer)), **APPROX)
    inner_child = by_text(chunks[1], fx.TEXTS.inner_child)
    expected = norm(*into_group(into_group(fx.INNER_CHILD, *inner), *outer))
    assert inner_child.bbox == pytest.approx(expected, **APPROX)
    # the inner group scales x by 2 and y by 3, the outer halves both: the box is 1x1.5 of the child's
    assert (expected[2] - expected[0]) * fx.SLIDE_W == pytest.approx(fx.INNER_CHILD[2])


def test_title_first_then_top_to_bottom_left_to_right(chunks) -> None:
    texts = [p.text for p in chunks[1] if p.chunk_type == "content"]
    assert texts[0] == fx.TEXTS.title_1  # drawn last, read first
    assert chunks[1][0].metadata["title"] is True
    framed = {
        fx.TEXTS.banner: fx.BANNER,
        fx.TEXTS.wholly_off: fx.WHOLLY_OFF,
        fx.TEXTS.outer_child: into_group(fx.OUTER_CHILD, fx.OUTER_OFF, fx.OUTER_EXT, fx.OUTER_CH_OFF, fx.OUTER_CH_EXT),
        fx.TEXTS.rotated: fx.ROTATED,
        fx.TEXTS.hidden: fx.HIDDEN,
        fx.TEXTS.half_off: fx.HALF_OFF,
    }
    rest = [t for t in texts[1:] if t in framed]
    assert rest == sorted(framed, key=lambda t: (framed[t][1], framed[t][0]))


def test_hidden_rotated_clamped_and_off_slide_shapes(chunks) -> None:
    hidden = by_text(chunks[1], fx.TEXTS.hidden)
    assert hidden.bbox is None and hidden.bbox_reason == "hidden"
    rotated = by_text(chunks[1], fx.TEXTS.rotated)
    assert rotated.bbox == pytest.approx(norm(*fx.ROTATED), **APPROX)  # the unrotated frame
    assert rotated.metadata["rotation"] == pytest.approx(fx.ROTATION_DEG)
    half = by_text(chunks[1], fx.TEXTS.half_off)
    x0, y0, _, y1 = norm(*fx.HALF_OFF)
    assert half.bbox == pytest.approx((x0, y0, 1.0, y1), **APPROX)
    assert half.metadata["clamped"] is True
    gone = by_text(chunks[1], fx.TEXTS.wholly_off)
    assert gone.bbox is None and gone.bbox_reason == "unresolved"
    assert gone.metadata["unresolved_because"] == "off_slide"


def test_placeholders_inherit_their_frame_from_layout_then_master(chunks) -> None:
    title = by_text(chunks[2], fx.TEXTS.title_2)
    assert title.bbox == pytest.approx(norm(*fx.MASTER_TITLE), **APPROX)
    assert title.metadata["frame_source"] == "master"
    body = by_text(chunks[2], fx.TEXTS.body_2)
    assert body.bbox == pytest.approx(norm(*fx.LAYOUT_BODY), **APPROX)
    assert body.metadata["frame_source"] == "layout"
    assert [p.text for p in chunks[2]] == [fx.TEXTS.title_2, fx.TEXTS.body_2]


def test_table_is_one_piece_laid_out_row_by_row_and_kept_as_a_table(chunks) -> None:
    [table] = [p for p in chunks[3] if p.chunk_type == "table"]
    assert table.bbox == pytest.approx(norm(*fx.TABLE), **APPROX)
    rows = table.text.split("\n")
    assert rows[0] == " | ".join(fx.TABLE_ROWS[0])
    assert rows[2] == "Mars | 2"  # the merged-over cell is not repeated
    markdown = table.metadata["table_markdown"].splitlines()
    assert markdown[0] == "| Planet | Moons | Rings |" and markdown[1] == "|---|---|---|"
    assert 'colspan="2"' in table.metadata["text_as_html"]
    assert table.metadata["text_as_html"].count("<tr>") == len(fx.TABLE_ROWS)


def test_pictures_become_image_pieces_stored_bytes_or_png(deck_bytes: bytes, chunks) -> None:
    images = [p for p in chunks[3] if p.chunk_type == "image"]
    assert [p.bbox for p in images] == [
        pytest.approx(norm(*fx.PNG_PICTURE), **APPROX),
        pytest.approx(norm(*fx.TIFF_PICTURE), **APPROX),
    ]
    png, tiff = images
    assert png.metadata["image_format"] == "png" and "converted_from" not in png.metadata
    stored = fx.stored_media(deck_bytes)
    assert png.image in stored.values()  # the bytes as the file stores them
    assert tiff.metadata == {**tiff.metadata, "image_format": "png", "converted_from": "tiff"}
    with Image.open(io.BytesIO(tiff.image)) as img:
        assert img.format == "PNG" and img.size == (64, 48)
        assert img.convert("RGB").getpixel((10, 10)) == (30, 30, 200)


def test_text_pieces_point_into_the_page_text(pages, chunks) -> None:
    for page in pages:
        for piece in chunks.get(page.page, ()):
            if piece.text is not None and piece.chunk_type in ("content", "table"):
                assert page.text[piece.start : piece.end] == piece.text


def test_every_box_is_valid(chunks) -> None:
    for pieces in chunks.values():
        for piece in pieces:
            assert (piece.bbox is None) != (piece.bbox_reason is None)
            if piece.bbox is not None:
                validate_bbox(piece.bbox)


def test_hidden_slide_pieces_are_marked(chunks) -> None:
    [piece] = chunks[4]
    assert piece.text == fx.HIDDEN_SLIDE_TEXT and piece.metadata["slide_hidden"] is True


def test_notes_only_when_the_chain_asks_for_them(deck_bytes: bytes) -> None:
    plain = to_document(encode_bytes(deck_bytes, source_id="deck.pptx", media_type=PPTX, chain=load_chain(ChainConfig())))
    assert not [c for c in plain.chunks if c.chunk_type == "notes"]
    chain = load_chain(ChainConfig(options={"pptx": {"include_notes": True}}))
    doc = to_document(encode_bytes(deck_bytes, source_id="deck.pptx", media_type=PPTX, chain=chain))
    [notes] = [c for c in doc.chunks if c.chunk_type == "notes"]
    assert notes.content == fx.NOTES and notes.page == 1 and notes.bbox_reason == "no_geometry"
    assert {c.chunker for c in doc.chunks} == {"pptx"}  # discovered through its entry point, asked before `page`


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="include_notes"):
        load_chain(ChainConfig(options={"pptx": {"include_note": True}}))
    with pytest.raises(ValueError, match="true or false"):
        load_chain(ChainConfig(options={"pptx": {"include_notes": "yes"}}))


def test_declines_other_media_and_refused_packages(deck_bytes: bytes, pages) -> None:
    assert PptxChunker().chunk(deck_bytes, "application/pdf", pages) == ()
    assert PptxChunker().chunk(fx.entity_bomb(deck_bytes), PPTX, pages) == ()


def test_undecodable_picture_is_skipped_not_fatal(deck_bytes: bytes, caplog: pytest.LogCaptureFixture) -> None:
    broken = fx.replace_media(deck_bytes, b"\x01\x00\x09\x00" + bytes(200))  # a WMF-like header, no image
    read = read_pptx(broken, ReaderConfig())
    [slide3] = [c for c in PptxChunker().chunk(broken, PPTX, read.pages) if c.page == 3]
    assert [p.chunk_type for p in slide3.pieces] == ["table"]
    assert "cannot be decoded" in caplog.text


def test_long_shape_text_is_split_by_the_chunking_library(deck_bytes: bytes, pages, chunks) -> None:
    assert len(fx.LONG_TEXT) > 1500
    default = chunks[5]
    assert len(default) > 1 and all(len(p.text) <= 1500 for p in default)
    chain = load_chain(ChainConfig(options={"pptx": {"max_characters": 300}}))
    doc = to_document(encode_bytes(deck_bytes, source_id="deck.pptx", media_type=PPTX, chain=chain))
    parts = [c for c in doc.chunks if c.page == 5]
    assert len(parts) >= len(fx.LONG_TEXT) // 300
    assert all(len(c.content) <= 300 for c in parts)
    assert [c.metadata["part"] for c in parts] == list(range(1, len(parts) + 1))
    for c in parts:  # every part keeps the shape's box and points into the page text
        assert c.bbox == pytest.approx(norm(*fx.LONG_BOX), **APPROX)
        assert pages[4].text[c.start_offset : c.end_offset] == c.content
    # nothing lost: every sentence of the shape is in some part
    for sentence in fx.LONG_TEXT.replace("\n", " ").split(". "):
        assert any(sentence.strip(". ") in c.content for c in parts), sentence


def test_without_a_slide_size_nothing_can_be_normalised(deck_bytes: bytes) -> None:
    sizeless = fx.without_slide_size(deck_bytes)
    read = read_pptx(sizeless, ReaderConfig())
    assert read.status == "ok" and read.metadata["slide_width"] is None
    pieces = [p for c in PptxChunker().chunk(sizeless, PPTX, read.pages) for p in c.pieces]
    assert pieces and all(p.bbox is None for p in pieces)
    assert {p.metadata.get("unresolved_because") for p in pieces if p.bbox_reason == "unresolved"} == {"no_slide_size"}


def test_each_picture_is_captioned_by_the_text_placed_under_it_not_by_the_slide_title() -> None:
    document = to_document(encode_bytes(fx.captioned_pictures(), source_id="captioned.pptx"))
    pictures = sorted((c for c in document.chunks if c.chunk_type == "image"), key=lambda c: (c.page, c.bbox[0]))
    # two side by side, each with its own "Figure n"; a short line just under; nothing near: none
    assert [p.metadata.get("caption") for p in pictures] == [*fx.CAPTIONS, fx.SHORT_CAPTION, None]
