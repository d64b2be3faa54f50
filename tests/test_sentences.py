"""The `sentences` chain option: each prose chunk's sentences as `sentence` pieces of their own."""

import json
import re
from itertools import pairwise
from pathlib import Path

import pytest

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chunker_port import ChunkPiece, PageOutput
from indx_assets.pipeline.chunkers.html import HtmlProvider
from indx_assets.pipeline.chunkers.markdown import MarkdownProvider
from indx_assets.pipeline.chunkers.text import TextProvider
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document

PROVIDERS = {"text/markdown": MarkdownProvider, "text/html": HtmlProvider, "text/plain": TextProvider}
MARKDOWN = """# Retention

Old versions are what make time travel possible, so keep at least one week of them
before running cleanup. Compaction runs daily! Does it block readers? It does not.

| Job | Keeps |
| --- | --- |
| cleanup | 7 days |

```sh
indx restore
```

- Tag a version before a re-chunk.
- Restore it by name.

One sentence only.
"""


def pieces(text: str, media_type: str = "text/markdown", **options: object) -> tuple[ChunkPiece, ...]:
    (chunker,) = PROVIDERS[media_type]().with_options(**options).chunkers()
    (claim,) = chunker.chunk(text.encode(), media_type, (PageOutput(page=1, text=text, status="ok"),))
    return claim.pieces


def owners(all_pieces: tuple[ChunkPiece, ...]) -> list[tuple[ChunkPiece, list[ChunkPiece]]]:
    """Each chunk with the sentence pieces that follow it."""
    out: list[tuple[ChunkPiece, list[ChunkPiece]]] = []
    for piece in all_pieces:
        if piece.chunk_type == "sentence":
            out[-1][1].append(piece)
        else:
            out.append((piece, []))
    return out


def test_sentences_are_slices_of_their_chunk_cut_inside_its_blocks() -> None:
    assert all(p.chunk_type != "sentence" for p in pieces(MARKDOWN))  # off by default
    cut = pieces(MARKDOWN, sentences=True, max_tokens=60, new_after_n_tokens=45)
    sentences = [p.text for p in cut if p.chunk_type == "sentence"]
    # a hard-wrapped line break does not cut a sentence; a heading and list items are their own
    assert "Old versions are what make time travel possible, so keep at least one week of them\nbefore running cleanup." in sentences
    assert sentences[:1] == ["Retention"]
    assert {"Compaction runs daily!", "Does it block readers?", "It does not."} <= set(sentences)
    assert "- Restore it by name." in sentences and "One sentence only." in sentences
    for chunk, own in owners(cut):
        if chunk.chunk_type in ("table", "code"):
            assert own == [], chunk.chunk_type
        for sentence in own:
            assert sentence.text == MARKDOWN[sentence.start : sentence.end]
            assert chunk.start <= sentence.start < sentence.end <= chunk.end
            assert sentence.metadata["section_title"] == chunk.metadata["section_title"] == "Retention"
        assert all(a.end <= b.start for a, b in pairwise(own))  # disjoint, in order


def test_with_overlap_a_sentence_belongs_to_the_first_chunk_that_holds_it() -> None:
    text = "\n\n".join(f"Paragraph {i} says one thing. It then says another thing about {i}." for i in range(12))
    cut = pieces(text, "text/plain", sentences=True, max_tokens=40, new_after_n_tokens=30,
                 overlap=12, overlap_all=True)
    chunks = [p for p in cut if p.chunk_type != "sentence"]
    assert any(a.end > b.start for a, b in pairwise(chunks)), "the chunks should overlap"
    sentences = [p for p in cut if p.chunk_type == "sentence"]
    assert len({(s.start, s.end) for s in sentences}) == len(sentences)  # no sentence twice
    for chunk, own in owners(cut):
        for sentence in own:  # the earliest enclosing chunk is the one it follows
            holder = min((c for c in chunks if c.start <= sentence.start and sentence.end <= c.end), key=lambda c: c.start)
            assert holder is chunk
    one_sentence = pieces("A chunk of one sentence has no sentence pieces.", "text/plain", sentences=True)
    assert [p.chunk_type for p in one_sentence] == ["content"]
    # every sentence of the text is a sentence piece (the chunks have at least two each)
    expected = {m.group() for m in re.finditer(r"[A-Z][^.]*\.", text)}
    assert {s.text for s in sentences} == expected


def test_sentences_must_be_a_boolean() -> None:
    with pytest.raises(ValueError, match="'sentences'"):
        MarkdownProvider().with_options(sentences="yes")


def test_sentence_locators_are_typed_and_unique_and_name_their_chunk() -> None:
    chain = load_chain(ChainConfig.parse(json.dumps({"options": {"markdown": {"sentences": True}}})))
    document = to_document(encode_bytes(MARKDOWN.encode(), source_id="guide.md", chain=chain))
    sentences = [c for c in document.chunks if c.chunk_type == "sentence"]
    assert sentences and all(c.locator == f"sentence:char:{c.start_offset}-{c.end_offset}" for c in sentences)
    assert all(document.content[c.start_offset : c.end_offset] == c.content for c in sentences)
    assert len({c.locator for c in document.chunks}) == len(document.chunks)
    # each names the chunk it follows, the earliest that holds it
    ids = {c.id: c for c in document.chunks}
    for sentence in sentences:
        chunk = ids[sentence.metadata["chunk_id"]]
        holders = [c for c in document.chunks if c.chunk_type != "sentence"
                   and c.start_offset <= sentence.start_offset and sentence.end_offset <= c.end_offset]
        assert chunk is min(holders, key=lambda c: c.start_offset)


@pytest.mark.slow
def test_every_corpus_text_file_gets_sentences_inside_its_chunks(corpus: Path) -> None:
    options = {"sentences": True}
    chain = load_chain(ChainConfig.parse(json.dumps({"options": {n: options for n in ("markdown", "html", "text")}})))
    files = sorted(p for p in corpus.rglob("*") if p.suffix.lower() in (".md", ".html", ".htm", ".txt") and p.is_file())
    assert files
    found = 0
    for path in files:
        encoded = encode_bytes(path.read_bytes(), source_id=path.name, name=path.name, chain=chain)
        by_page = {p.page: p.text for p in encoded.read.pages}
        holder: ChunkPiece | None = None
        for mapped in encoded.chunk_map.chunks:
            piece = mapped.piece
            if piece.chunk_type != "sentence":
                holder = piece
                continue
            found += 1
            assert holder is not None and holder.chunk_type == "content", path
            assert piece.text == by_page[mapped.page][piece.start : piece.end] and piece.text.strip(), path
            assert holder.start <= piece.start < piece.end <= holder.end, (path, piece.text[:60])
        locators = [c.locator for c in to_document(encoded).chunks]
        assert len(set(locators)) == len(locators), path
    assert found > 100
