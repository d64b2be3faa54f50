"""Identity (DESIGN §3): ids derive from `source_id` and locators, never from paths or runs."""

import shutil
import uuid
from pathlib import Path

import pytest

from indx_assets.pipeline.chain import Chain, ChainConfig, ChainLink, load_chain
from indx_assets.pipeline.chain_runner import run_chain
from indx_assets.pipeline.chunker_port import ChunkPiece, PageChunks, PageOutput
from indx_assets.pipeline.document import Document, DocumentChunk
from indx_assets.pipeline.identity import (
    NAMESPACE,
    char_locator,
    chunk_id,
    document_id,
    position_locator,
    typed_locator,
)
from indx_assets.pipeline.read_and_chunk import Encoded, encode_bytes, encode_file, to_document
from indx_assets.pipeline.readers import DocumentRead

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
NOTES = SAMPLE / "notes" / "tea-harvest.txt"


def _ids(document: Document) -> list[str]:
    return [document.id, *(c.id for c in document.chunks), *(c.parent_ref for c in document.chunks)]


def test_the_namespace_is_the_documented_one() -> None:
    assert NAMESPACE == uuid.uuid5(uuid.NAMESPACE_URL, "https://indx-assets/ids")
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert str(NAMESPACE) in readme
    assert document_id("a") == str(uuid.uuid5(NAMESPACE, "a"))


def test_the_same_file_chunked_twice_gives_identical_ids() -> None:
    first = to_document(encode_file(NOTES))
    second = to_document(encode_file(NOTES))
    assert len(first.chunks) >= 2
    assert _ids(first) == _ids(second)
    assert [c.locator for c in first.chunks] == [c.locator for c in second.chunks]


def test_a_different_source_id_gives_different_ids() -> None:
    first = to_document(encode_file(NOTES, source_id="notes/tea-harvest.txt"))
    other = to_document(encode_file(NOTES, source_id="archive/tea-harvest.txt"))
    assert [c.locator for c in first.chunks] == [c.locator for c in other.chunks]  # same cuts ...
    assert not set(_ids(first)) & set(_ids(other))  # ... under different identities


def test_the_same_source_id_at_a_different_path_gives_the_same_ids(tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "renamed.txt"
    moved.parent.mkdir()
    shutil.copyfile(NOTES, moved)
    here = to_document(encode_file(NOTES, source_id="notes:tea"))
    there = to_document(encode_file(moved, source_id="notes:tea"))
    assert _ids(here) == _ids(there)


def test_chunk_ids_come_from_source_id_and_locator_and_point_at_their_document() -> None:
    document = to_document(encode_file(NOTES, source_id="notes:tea"))
    for chunk in document.chunks:
        assert chunk.id == chunk_id("notes:tea", chunk.locator)
        assert chunk.parent_ref == document.id == document_id("notes:tea")
    assert len({c.id for c in document.chunks}) == len(document.chunks)
    assert chunk_id("a", "b:c") != chunk_id("a:b", "c")  # the join cannot be forged by the parts


def test_metadata_keys_colliding_with_field_names_are_rejected() -> None:
    for key in ("id", "source_id", "content", "chunks", "metadata"):
        with pytest.raises(ValueError, match="collide"):
            Document(source_id="s", content="", metadata={key: 1})
    for key in ("id", "locator", "page", "bbox", "chunker", "parent_ref", "embedding", "start_offset"):
        with pytest.raises(ValueError, match="collide"):
            DocumentChunk(source_id="s", locator="char:0-1", content="a", metadata={key: 1})
    assert Document(source_id="s", content="", metadata={"author": "x"}).metadata["author"] == "x"


def test_metadata_is_immutable_and_copied() -> None:
    source = {"author": "x"}
    document = Document(source_id="s", content="", metadata=source)
    source["author"] = "y"
    assert document.metadata["author"] == "x"
    with pytest.raises(TypeError):
        document.metadata["author"] = "z"  # type: ignore[index]
    with pytest.raises(AttributeError):
        document.metadata.update({"a": 1})  # type: ignore[attr-defined]
    chunk = DocumentChunk(source_id="s", locator="char:0-1", content="a", metadata={"k": 1})
    with pytest.raises(TypeError):
        chunk.metadata["k"] = 2  # type: ignore[index]
    with pytest.raises(AttributeError):
        chunk.id = "forged"  # type: ignore[misc]


def test_a_chunk_is_refused_without_a_locator_or_with_both_box_and_reason() -> None:
    with pytest.raises(ValueError):
        DocumentChunk(source_id="s", locator="", content="a")
    with pytest.raises(ValueError):
        DocumentChunk(source_id="", locator="char:0-1", content="a")
    with pytest.raises(ValueError):
        DocumentChunk(source_id="s", locator="x", content="a", bbox=(0, 0, 1, 1), bbox_reason="hidden")
    with pytest.raises(ValueError):
        DocumentChunk(source_id="s", locator="x", content="a", bbox_reason="lost")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="another source"):
        Document(source_id="s", content="", chunks=(DocumentChunk(source_id="t", locator="x", content="a"),))


def test_locator_formats() -> None:
    assert char_locator(10, 42) == "char:10-42"
    assert char_locator(0, 7, page=3) == "page:3:char:0-7"
    assert position_locator(2, 0) == "page:2/chunk:0"
    assert typed_locator("content", "char:0-7") == "char:0-7"
    assert typed_locator("image", "page:2/chunk:0") == "image:page:2/chunk:0"
    assert typed_locator("sentence", "char:10-42") == "sentence:char:10-42"


class _Mixed:
    """Cuts each page into a slice of its text, a text it wrote itself, and an image."""

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
        return tuple(
            PageChunks(o.page, (
                ChunkPiece(text=o.text[:4], bbox_reason="no_geometry", start=0, end=4),
                ChunkPiece(text="a summary", bbox_reason="no_geometry", chunk_type="summary"),
                ChunkPiece(image=b"png", bbox=(0.1, 0.1, 0.2, 0.2)),
            ))
            for o in outputs
        )


MIXED = Chain((ChainLink("mixed", _Mixed(), "inline", "", ""),))


def test_text_media_locate_by_offsets_into_the_whole_document_text() -> None:
    document = to_document(encode_bytes(b"abcdefgh\fijklmnop", source_id="t.txt", chain=MIXED))
    assert [c.locator for c in document.chunks] == [
        "char:0-4", "summary:page:1/chunk:1", "image:page:1/chunk:2",
        "char:9-13", "summary:page:2/chunk:1", "image:page:2/chunk:2",
    ]
    assert [document.content[c.start_offset:c.end_offset] for c in document.chunks if c.start_offset is not None] == [
        "abcd", "ijkl"]
    assert [c.chunk_type for c in document.chunks[:3]] == ["content", "summary", "image"]


def test_paged_media_locate_by_page_and_offsets_into_the_page_text() -> None:
    # A paged reader's output, built directly: to_document is what is under test.
    pages = (PageOutput(page=1, text="first page", reader="r"), PageOutput(page=2, text="second page", reader="r"))
    read = DocumentRead.from_pages("application/x-paged", pages)
    encoded = Encoded("deck", read, run_chain(MIXED, b"", read.media_type, pages), MIXED)
    document = to_document(encoded)
    assert [c.locator for c in document.chunks] == [
        "page:1:char:0-4", "summary:page:1/chunk:1", "image:page:1/chunk:2",
        "page:2:char:0-4", "summary:page:2/chunk:1", "image:page:2/chunk:2",
    ]
    assert (document.chunks[3].start_offset, document.chunks[3].end_offset) == (0, 4)
    assert document.chunks[3].page == 2


def test_two_pieces_cutting_the_same_span_still_get_distinct_ids() -> None:
    class Twice:
        def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
            piece = ChunkPiece(text="abcd", bbox_reason="no_geometry", start=0, end=4)
            return (PageChunks(1, (piece, piece)),)

    chain = Chain((ChainLink("twice", Twice(), "inline", "", ""),))
    document = to_document(encode_bytes(b"abcdefgh", source_id="t.txt", chain=chain))
    assert [c.locator for c in document.chunks] == ["char:0-4", "page:1/chunk:1"]
    assert len({c.id for c in document.chunks}) == 2


class _Repeats:
    """Cuts each page's spans out of order, some twice, and one as a sentence too."""

    SPANS = ((0, 4, None), (2, 6, None), (0, 4, None), (1, 3, None), (0, 4, "sentence"), (2, 6, None), (1, 3, None))

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
        return tuple(PageChunks(o.page, tuple(
            ChunkPiece(text=o.text[s:e], bbox_reason="no_geometry", start=s, end=e, chunk_type=t) for s, e, t in self.SPANS))
            for o in outputs)


REPEATS = Chain((ChainLink("repeats", _Repeats(), "inline", "", ""),))


def test_a_span_cut_again_on_its_page_is_placed_by_position_on_that_page_alone() -> None:
    """Spans are told apart within a page (`read_and_chunk.PageSpans`), in whatever order they
    come: the same span on another page is that page's own."""
    text = to_document(encode_bytes(b"abcdefgh\fijklmnop", source_id="t.txt", chain=REPEATS))
    assert [c.locator for c in text.chunks] == [
        "char:0-4", "char:2-6", "page:1/chunk:2", "char:1-3", "sentence:char:0-4", "page:1/chunk:5", "page:1/chunk:6",
        "char:9-13", "char:11-15", "page:2/chunk:2", "char:10-12", "sentence:char:9-13", "page:2/chunk:5",
        "page:2/chunk:6"]
    pages = (PageOutput(page=1, text="first page", reader="r"), PageOutput(page=2, text="second page", reader="r"))
    read = DocumentRead.from_pages("application/x-paged", pages)
    paged = to_document(Encoded("deck", read, run_chain(REPEATS, b"", read.media_type, pages), REPEATS))
    assert [c.locator for c in paged.chunks if c.page == 2] == [
        "page:2:char:0-4", "page:2:char:2-6", "page:2/chunk:2", "page:2:char:1-3", "sentence:page:2:char:0-4",
        "page:2/chunk:5", "page:2/chunk:6"]
    for document in (text, paged):
        assert len({c.id for c in document.chunks}) == len(document.chunks) == 14


def test_reader_metadata_never_overwrites_the_encoders_account() -> None:
    pages = (PageOutput(page=1, text="x", reader="r"),)
    read = DocumentRead.from_pages("application/x-paged", pages, status="forged", content="forged", author="ann")
    chain = load_chain(ChainConfig(), eps=())
    document = to_document(Encoded("s", read, run_chain(chain, b"", read.media_type, pages), chain))
    assert document.metadata["status"] == "ok"
    assert document.metadata["author"] == "ann"
    assert "content" not in document.metadata
