"""A long page's chunks streamed from the chunker to the stored chunk map (`stages.cut_chunks`,
`chain_runner.stream_page`): what a user sees is what cutting the page whole gives.

A chain that cuts page by page (a text, Markdown or HTML document) hands over its pieces one at
a time; they are placed, spooled past `stages.HELD_CHUNKS` a page, measured and stored without
the page's chunks ever being held all at once. A chunker that stops part way (declines the page
or raises) has what it gave taken back, and the next chunker cuts the page, as `run_chain`
would have it. Real stored sources, the real chain, real Parquet files; the chunkers that stop
part way are written here, as a third party would write one (none of the built-in ones does).
"""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from indx_interfaces import ChunkPiece, PageChunks, PageOutput
from stored_sources import stored_text

from indx_assets.pipeline.chain import Chain, ChainLink, load_chain
from indx_assets.pipeline.chain_runner import run_chain
from indx_assets.pipeline.chunker_port import PageDeclined
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.wiring.assets import stages
from indx_assets.wiring.resources.storage import StorageResource

PARAGRAPH = ("The pilot boarded at dawn, read the tide tables twice and took the ship past the harbour wall. "
             "The crew waited below deck until the anchor held.")


def _stored_chunks(storage: StorageResource, source: str) -> list[tuple[str, str, str, dict]]:
    rows = storage.read(stages.CHUNK_MAP, source).to_pylist()
    return [(r["id"], r["chunker"], r["text"], json.loads(r["metadata"])) for r in rows]


def _whole(path: Path, chain: Chain, source: str) -> list[tuple[str, str, str, dict]]:
    """The chunks cutting the file whole gives (`run_chain`, `to_document`): the library's path."""
    document = to_document(encode_bytes(path.read_bytes(), source_id=source, name=path.name, chain=chain))
    return [(c.id, c.chunker, c.content, dict(c.metadata)) for c in document.chunks]


class _Stopping:
    """A chunker that streams the first `after` pieces of a real chunker's cut of a page, then
    stops: it declines the page (`PageDeclined`) or, as a defect, raises."""

    builtin = False
    page_local = True
    reads_content = False

    def __init__(self, media_type: str, after: int, defect: bool) -> None:
        self.media_types = frozenset({media_type})
        self.after, self.defect, self.given = after, defect, 0
        self._chain = load_chain()

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple:
        raise AssertionError("a chain that cuts page by page streams the page")

    def stream_page(self, content: bytes, media_type: str, page: PageOutput, parsed: object = None) -> Iterator[ChunkPiece]:
        (real,) = [link.chunker for link in self._chain.links if link.name in ("text", "markdown")
                   and media_type in link.chunker.media_types]
        for n, piece in enumerate(real.stream_page(content, media_type, page)):
            if n == self.after:
                if self.defect:
                    raise RuntimeError("the stopping chunker's own defect")
                raise PageDeclined("declined part way")
            self.given += 1
            yield piece


@pytest.mark.parametrize("defect", [False, True], ids=["declines", "raises"])
@pytest.mark.parametrize("held", [stages.HELD_CHUNKS, 8], ids=["held", "spooled"])
def test_a_chunker_that_stops_part_way_has_its_chunks_taken_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 defect: bool, held: int) -> None:
    monkeypatch.setattr(stages, "HELD_CHUNKS", held)
    text = "\n\n".join(f"{PARAGRAPH} Watch {n}." for n in range(120))
    source, storage = stored_text(tmp_path, "log.txt", text)
    chain = load_chain()
    stopping = _Stopping("text/plain", after=12, defect=defect)
    cut = stages.cut_chunks(source, storage, Chain((ChainLink("stopping", stopping, "inline", "", ""), *chain.links)))

    assert stopping.given == 12, "it gave some of the page before it stopped (past a spool step, when spooled)"
    stored = _stored_chunks(storage, source)
    assert stored == _whole(tmp_path / "log.txt", chain, source), "the next chunker's cut, nothing of the first"
    assert {c[1] for c in stored} == {"text"} and len({c[0] for c in stored}) == len(stored) > 12
    assert cut.metadata["chunks"] == len(stored) and cut.metadata["chunks_by_chunker"] == {"text": len(stored)}
    assert cut.metadata.get("failed_chunkers") == (["stopping"] if defect else None)
    assert cut.metadata["fidelity"]["passes"]


@pytest.mark.parametrize(("name", "options"), [
    ("prose.txt", {}),
    ("prose.txt", {"text": {"max_characters": 300, "overlap": 120, "overlap_all": True, "sentences": True}}),
    ("notes.md", {"markdown": {"max_characters": 400, "sentences": True}}),
    ("page.html", {"html": {"max_characters": 500, "overlap": 60}}),
], ids=["text", "text-overlaps-sentences", "markdown-sentences", "html-overlap"])
def test_a_page_streamed_through_a_spool_is_stored_as_cutting_it_whole_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, options: dict) -> None:
    """Every piece placed where the whole document puts it: ids, overlaps and the sentence links
    (`chunk_id`, to a chunk spooled before it), with a page's chunks spooled a few at a time."""
    monkeypatch.setattr(stages, "HELD_CHUNKS", 5)
    monkeypatch.setenv("INDX_CHAIN", json.dumps({"options": options}))
    paragraphs = [f"{PARAGRAPH} Watch {n} ended at bell {n % 8}." for n in range(200)]
    if name.endswith(".md"):
        text = "\n\n".join((f"## Watch {n}\n\n" if n % 6 == 0 else "") + p for n, p in enumerate(paragraphs))
    elif name.endswith(".html"):
        text = "<html><body>" + "".join(f"<h2>Watch {n}</h2>" * (n % 6 == 0) + f"<p>{p}</p>"
                                        for n, p in enumerate(paragraphs)) + "</body></html>"
    else:
        text = "\n\n".join(paragraphs)
    source, storage = stored_text(tmp_path, name, text)
    chain = load_chain()
    cut = stages.cut_chunks(source, storage, chain)

    stored = _stored_chunks(storage, source)
    assert len(stored) > 3 * 5, "more chunks than a spool step"
    assert stored == _whole(tmp_path / name, chain, source)
    if options.get("text", options.get("markdown", {})).get("sentences"):  # each links to a chunk before it
        ids = [c[0] for c in stored]
        linked = [(ids.index(c[3]["chunk_id"]), at) for at, c in enumerate(stored) if "chunk_id" in c[3]]
        assert linked and all(chunk < sentence for chunk, sentence in linked)
    assert cut.metadata["fidelity"]["passes"]


class _Twice:
    """A third-party chunker that answers page 1 twice: first with no piece, then with one."""

    page_local = True

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
        return (PageChunks(1, ()), PageChunks(1, (ChunkPiece(text="The pilot", start=0, end=9, bbox_reason="no_geometry"),)))


def test_a_second_answer_for_a_page_counts_when_the_first_keeps_nothing(tmp_path: Path) -> None:
    """As `run_chain` has always taken it, whether the page is cut whole or streamed."""
    source, storage = stored_text(tmp_path, "log.txt", PARAGRAPH)
    chain = Chain((ChainLink("twice", _Twice(), "inline", "", ""), *load_chain().links))
    mapped = run_chain(chain, b"", "text/plain", (PageOutput(1, PARAGRAPH),)).chunks
    assert [(m.chunker, m.piece.text) for m in mapped] == [("twice", "The pilot")]
    stages.cut_chunks(source, storage, chain)
    assert [(c[1], c[2]) for c in _stored_chunks(storage, source)] == [("twice", "The pilot")]
