"""Every PowerPoint file in the shared corpus, read in place and cut by the installed chain."""

from pathlib import Path

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chunker_port import validate_bbox
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.pipeline.readers.pptx import PPTX

LETTERS = list("ABCDEFGHIJ")


def corpus_pptx(corpus: Path) -> list[Path]:
    docs = corpus / "example-docs"
    return sorted(docs.glob("*.pptx")) + sorted((docs / "language-docs").glob("*.pptx"))


def test_every_corpus_deck_chunks_with_valid_boxes_or_reasons(corpus: Path) -> None:
    files = corpus_pptx(corpus)
    assert len(files) >= 10
    chain = load_chain(ChainConfig())
    for path in files:
        # The media type is given: detection by bytes is media.py's concern (some decks sniff as zip).
        doc = to_document(encode_bytes(path.read_bytes(), source_id=path.name, media_type=PPTX, chain=chain))
        assert doc.metadata["status"] in ("ok", "empty"), (path.name, doc.metadata["reason"])
        assert doc.chunks, path.name
        pptx_chunks = [c for c in doc.chunks if c.chunker == "pptx"]
        assert pptx_chunks, f"{path.name}: the pptx chunker claimed nothing"
        for chunk in pptx_chunks:
            assert (chunk.bbox is None) != (chunk.bbox_reason is None), (path.name, chunk.locator)
            if chunk.bbox is not None:
                validate_bbox(chunk.bbox)
            else:
                assert chunk.bbox_reason in ("hidden", "unresolved"), (path.name, chunk.locator)


def test_nested_groups_give_one_piece_per_shape_with_text_inside_the_slide(corpus: Path) -> None:
    path = corpus / "example-docs" / "group-shapes-nested.pptx"
    doc = to_document(encode_bytes(path.read_bytes(), source_id=path.name, media_type=PPTX, chain=load_chain(ChainConfig())))
    texts = [c for c in doc.chunks if c.chunk_type == "content"]
    assert sorted(c.content for c in texts) == LETTERS  # 10 shapes hold a letter; 4 empty rectangles give nothing
    assert all(c.chunker == "pptx" and c.bbox is not None for c in texts)
    for chunk in texts:
        x0, y0, x1, y1 = validate_bbox(chunk.bbox)
        assert 0 < x0 < x1 < 1 and 0 < y0 < y1 < 1  # strictly inside: nothing needed clamping
        assert "clamped" not in chunk.metadata


def test_corpus_tables_and_pictures(corpus: Path) -> None:
    chain = load_chain(ChainConfig())
    table_deck = corpus / "example-docs" / "fake-power-point-table.pptx"
    doc = to_document(encode_bytes(table_deck.read_bytes(), source_id=table_deck.name, media_type=PPTX, chain=chain))
    [table] = [c for c in doc.chunks if c.chunk_type == "table"]
    assert table.content.splitlines()[0].split(" | ") == ["Column 1", "Column 2", "Column 3"]
    assert table.metadata["table_markdown"].startswith("| Column 1 | Column 2 | Column 3 |")
    for name in ("picture.pptx", "test-image-jpg-mime.pptx"):
        path = corpus / "example-docs" / name
        doc = to_document(encode_bytes(path.read_bytes(), source_id=name, media_type=PPTX, chain=chain))
        images = [c for c in doc.chunks if c.chunk_type == "image"]
        assert len(images) == 1 and images[0].image and images[0].bbox is not None, name


def test_bundled_sample_deck_is_the_generated_one_and_chunks() -> None:
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("make_sample_corpus", root / "scripts" / "make_sample_corpus.py")
    script = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(script)  # type: ignore[union-attr]
    bundled = root / "data" / "sample" / "slides" / "lighthouse-keepers.pptx"
    assert bundled.read_bytes() == script.lighthouse_deck()  # regenerate with scripts/make_sample_corpus.py
    doc = to_document(encode_bytes(bundled.read_bytes(), source_id=bundled.name, chain=load_chain(ChainConfig())))
    assert doc.metadata["media_type"] == PPTX
    assert [c.content for c in doc.chunks if c.page == 2][1:] == ["Flame", "Prism rings", "Horizontal beam"]
    assert [c.chunk_type for c in doc.chunks if c.page == 3] == ["content", "table"]
