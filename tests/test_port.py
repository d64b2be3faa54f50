"""The port's value types: what a chunker may hand back, and what is refused at construction."""

import math

import pytest

import indx_assets
from indx_assets import ChunkPiece, Line, PageChunks, PageOutput, sentence_holders, validate_bbox
from indx_assets.pipeline.document import DocumentChunk

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16  # bytes are opaque to the port; only non-emptiness counts

INVALID_BOXES = {
    "nan": (0.1, math.nan, 0.5, 0.5),
    "inf": (0.1, 0.1, math.inf, 0.5),
    "-inf": (-math.inf, 0.1, 0.5, 0.5),
    "inverted x": (0.6, 0.1, 0.2, 0.5),
    "inverted y": (0.1, 0.6, 0.5, 0.2),
    "zero width": (0.3, 0.1, 0.3, 0.5),
    "zero height": (0.1, 0.4, 0.5, 0.4),
    "below 0": (-0.01, 0.1, 0.5, 0.5),
    "above 1": (0.1, 0.1, 1.01, 0.5),
    "pixels": (10, 20, 300, 400),
    "three values": (0.1, 0.1, 0.5),
    "five values": (0.1, 0.1, 0.5, 0.5, 0.9),
    "empty": (),
    "string of digits": "0011",
    "words": ("a", "b", "c", "d"),
    "bools": (False, False, True, True),
    "none": (None, 0.1, 0.5, 0.5),
    "a number": 0.5,
    "a mapping": {"x0": 0, "y0": 0, "x1": 1, "y1": 1},
}


def test_a_third_party_imports_the_whole_port_from_the_top_level_package() -> None:
    for name in ("ChunkPiece", "PageChunks", "PageOutput", "Line", "Chunker", "ChunkerProvider", "validate_bbox",
                 "sentence_holders"):
        assert name in indx_assets.__all__
        assert getattr(indx_assets, name) is not None


def test_keyword_construction_as_documented() -> None:
    text = ChunkPiece(text="Hello", bbox_reason="no_geometry")
    image = ChunkPiece(image=PNG, bbox=(0.1, 0.2, 0.9, 0.8))
    assert (text.text, text.image, text.bbox, text.bbox_reason, text.chunk_type) == (
        "Hello", None, None, "no_geometry", "content")
    assert (image.text, image.image, image.bbox, image.bbox_reason, image.chunk_type) == (
        None, PNG, (0.1, 0.2, 0.9, 0.8), None, "image")
    claim = PageChunks(page=2, pieces=[text, image])
    assert claim.pieces == (text, image)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"text": "a", "image": PNG},
        {},
        {"text": ""},
        {"image": b""},
        {"text": "", "image": b""},
    ],
    ids=["both", "neither", "empty text", "empty image", "both empty"],
)
def test_a_piece_carries_exactly_one_of_text_or_image(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="exactly one of non-empty text or non-empty image"):
        ChunkPiece(bbox_reason="no_geometry", **kwargs)


def test_a_piece_carries_exactly_one_of_bbox_or_reason() -> None:
    with pytest.raises(ValueError, match="exactly one of bbox or bbox_reason"):
        ChunkPiece(text="a", bbox=(0, 0, 1, 1), bbox_reason="hidden")
    with pytest.raises(ValueError, match="exactly one of bbox or bbox_reason"):
        ChunkPiece(text="a")
    with pytest.raises(ValueError, match="bbox_reason must be one of"):
        ChunkPiece(text="a", bbox_reason="offscreen")  # type: ignore[arg-type]
    for reason in ("no_geometry", "hidden", "unresolved"):
        assert ChunkPiece(text="a", bbox_reason=reason).bbox_reason == reason  # type: ignore[arg-type]


@pytest.mark.parametrize("box", list(INVALID_BOXES.values()), ids=list(INVALID_BOXES))
def test_every_invalid_box_is_refused_by_the_one_validator_everywhere(box: object) -> None:
    with pytest.raises(ValueError):
        validate_bbox(box)
    with pytest.raises(ValueError):
        ChunkPiece(text="a", bbox=box)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Line(text="a", bbox=box)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        DocumentChunk(source_id="s", locator="page:1/chunk:0", content="a", bbox=box)  # type: ignore[arg-type]


def test_a_valid_box_is_normalised_to_a_tuple_of_floats_everywhere() -> None:
    for box in ([0, 0, 1, 1], (0.25, 0.5, 0.75, 1.0)):
        expected = tuple(float(v) for v in box)
        assert validate_bbox(box) == expected
        assert ChunkPiece(text="a", bbox=box).bbox == expected  # type: ignore[arg-type]
        assert Line(text="a", bbox=box).bbox == expected  # type: ignore[arg-type]
        chunk = DocumentChunk(source_id="s", locator="x", content="a", bbox=box)  # type: ignore[arg-type]
        assert chunk.bbox == expected
        assert all(type(v) is float for v in chunk.bbox)  # type: ignore[union-attr]


def test_offsets_come_together_are_ordered_and_are_ints() -> None:
    assert ChunkPiece(text="abc", bbox_reason="no_geometry", start=2, end=5).start == 2
    with pytest.raises(ValueError):
        ChunkPiece(text="a", bbox_reason="no_geometry", start=1)
    with pytest.raises(ValueError):
        ChunkPiece(text="a", bbox_reason="no_geometry", start=5, end=2)
    with pytest.raises(ValueError):
        ChunkPiece(text="a", bbox_reason="no_geometry", start=-1, end=2)
    with pytest.raises(TypeError):
        ChunkPiece(text="a", bbox_reason="no_geometry", start=0.5, end=2)  # type: ignore[arg-type]


def test_values_are_immutable() -> None:
    piece = ChunkPiece(text="a", bbox_reason="no_geometry", metadata={"k": 1})
    with pytest.raises(AttributeError):
        piece.text = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        piece.metadata["k"] = 2  # type: ignore[index]
    claim = PageChunks(1, [piece])
    assert isinstance(claim.pieces, tuple)


def test_page_output_is_validated() -> None:
    assert PageOutput(page=1, text="x", reader="text").readable
    assert not PageOutput(page=1, status="unreadable").readable
    assert not PageOutput(page=1, status="failed", reason="broken").readable
    for page in (0, -1, True, 1.0, "1"):
        with pytest.raises(ValueError):
            PageOutput(page=page)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            PageChunks(page=page, pieces=())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        PageOutput(page=1, status="fine")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        PageOutput(page=1, lines=["not a line"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        PageChunks(page=1, pieces=("text",))  # type: ignore[arg-type]
    lines = PageOutput(page=1, lines=[Line("a", (0, 0, 0.5, 0.1))]).lines
    assert isinstance(lines, tuple) and lines[0].bbox == (0.0, 0.0, 0.5, 0.1)


def test_a_sentence_belongs_to_the_piece_before_it_that_encloses_it() -> None:
    def piece(start: int, end: int, chunk_type: str = "content") -> ChunkPiece:
        return ChunkPiece(text="x" * (end - start), bbox_reason="no_geometry", chunk_type=chunk_type, start=start, end=end)

    pieces = [
        piece(0, 5, "sentence"),  # nothing before it
        piece(0, 100),
        piece(0, 40, "sentence"),
        piece(41, 100, "sentence"),
        piece(80, 160),  # overlaps the first chunk
        piece(90, 120, "sentence"),  # enclosed by both: it follows the second
        piece(150, 200, "sentence"),  # runs past the chunk before it
        piece(200, 260, "table"),
        ChunkPiece(text="unplaced", bbox_reason="no_geometry", chunk_type="sentence"),  # nothing to check: order decides
        ChunkPiece(text="a chunk", bbox=(0.1, 0.1, 0.9, 0.5)),
        piece(0, 5, "sentence"),
    ]
    assert sentence_holders(pieces) == [None, None, 1, 1, None, 4, None, None, 7, None, 9]
    assert sentence_holders([]) == []
