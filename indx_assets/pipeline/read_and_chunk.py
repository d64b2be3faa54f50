"""Encoding one source: read its pages, run the chain, and turn the result into a `Document`.

`to_document` is the one place where page outputs and a chunk map become identity-bearing
records; the CLI, the assets and the tests all go through it.
"""

import logging
from array import array
from bisect import bisect_left
from dataclasses import dataclass, fields
from pathlib import Path

from indx_assets.pipeline.chain import Chain, load_chain
from indx_assets.pipeline.chain_runner import ChunkMap, MappedChunk, run_chain
from indx_assets.pipeline.chunker_port import ChunkPiece, sentence_holders
from indx_assets.pipeline.document import Document, DocumentChunk
from indx_assets.pipeline.fidelity import UNSTRUCTURED_KEY
from indx_assets.pipeline.identity import char_locator, position_locator, typed_locator
from indx_assets.pipeline.media import detect_media_type, is_text_type
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig, read_document
from indx_assets.pipeline.readers.parts import PART_KEY, PART_PAGE_KEY, part_locator

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Encoded:
    """A source after reading and chunking, before embedding."""

    source_id: str
    read: DocumentRead
    chunk_map: ChunkMap
    chain: Chain

    @property
    def media_type(self) -> str:
        return self.read.media_type


def encode_bytes(
    content: bytes,
    *,
    source_id: str,
    name: str | None = None,
    media_type: str | None = None,
    chain: Chain | None = None,
    reader_config: ReaderConfig | None = None,
) -> Encoded:
    media_type = media_type or detect_media_type(content, name or source_id)
    chain = chain if chain is not None else load_chain()
    read = read_document(content, media_type, reader_config)
    chunk_map = run_chain(chain, content, media_type, read.pages, read.parsed) if read.pages else ChunkMap((), ())
    # the parsed form has served its one purpose: whoever keeps the result keeps no parse with it
    return Encoded(source_id, read.with_parsed(None), chunk_map, chain)


def encode_file(path: Path, *, source_id: str | None = None, **kwargs: object) -> Encoded:
    """Encode a file; its `source_id` defaults to the file's name."""
    return encode_bytes(path.read_bytes(), source_id=source_id or path.name, name=path.name, **kwargs)  # type: ignore[arg-type]


def page_origins(read: DocumentRead, offset: int = 0) -> dict[int, int]:
    """Where each page's text starts in its chunks' offsets (`DocumentChunk.start_offset`): a
    paged source's offsets are its page's own; a text's are the whole text's (`read.content`,
    pages joined by one form feed), its first page's at `offset`."""
    if not is_text_type(read.media_type):
        return {page.page: 0 for page in read.pages}
    origins = {}
    for page in read.pages:
        origins[page.page] = offset
        offset += len(page.text) + 1
    return origins


def _part_pages(read: DocumentRead) -> dict[int, tuple[int, int]]:
    """For each page of a container's part (`indx_assets.pipeline.readers.parts`), the part's
    number and the page's number within it."""
    return {p.page: (p.metadata[PART_KEY], p.metadata.get(PART_PAGE_KEY, p.page))
            for p in read.pages if p.metadata.get(PART_KEY)}


def _locate(mapped: MappedChunk, paged: bool, origin: int, page: int) -> tuple[str, int | None, int | None]:
    """The chunk's locator and offsets, its page's text starting at `origin`; `page` is the
    number its page has in its own part."""
    piece = mapped.piece
    if piece.start is None or piece.end is None:
        return position_locator(page, mapped.index), None, None
    start, end = origin + piece.start, origin + piece.end
    return char_locator(start, end, page=page if paged else None), start, end


class PageSpans:
    """The spans (chunk type, start, end) the chunks placed on one page cut, so that a piece
    cutting a span again gets a locator of its own (`ChunkPlacer`). Locators of other pages
    never meet this page's (a page's offsets are its own, or a stretch of the document's text no
    other page shares), so only a page's spans are kept. Pieces come mostly in order of their
    spans: those are kept in a sorted array, 8 bytes a span, the few that come out of order in a set."""

    def __init__(self) -> None:
        self._ordered: dict[str, array[int]] = {}
        self._others: dict[str, set[int | tuple[int, int]]] = {}

    def add(self, chunk_type: str, start: int, end: int) -> bool:
        """Keep the span; False when it was kept already."""
        if end >> 32:  # past what a packed span holds
            return self._add_other(chunk_type, (start, end))
        key = start << 32 | end  # orders as (start, end)
        ordered = self._ordered.setdefault(chunk_type, array("Q"))
        if not ordered or key > ordered[-1]:
            ordered.append(key)
            return True
        at = bisect_left(ordered, key)
        return not (at < len(ordered) and ordered[at] == key) and self._add_other(chunk_type, key)

    def _add_other(self, chunk_type: str, key: int | tuple[int, int]) -> bool:
        others = self._others.setdefault(chunk_type, set())
        if key in others:
            return False
        others.add(key)
        return True


class ChunkPlacer:
    """Makes a document's chunks from its mapped chunks, given one at a time in chunk order:
    each gets its locator (and so its id) and offsets in the document, and a `sentence` piece's
    metadata names the chunk it is a sentence of (the port's rule, `sentence_holders`) as
    `chunk_id`, the link by which search and embedding go from a sentence to its chunk.

    A piece that cuts a span a piece of its type on the same page cut before is placed by its
    position instead (`PageSpans`): every chunk of a document has an id of its own.

    A long document cut a few pages at a time (`chain_runner.cuts_page_by_page`) is placed one
    step at a time, each step's pages only: `offset`, where its first page starts in the whole
    document's text, makes its chunks those of the whole document's.
    """

    def __init__(self, source_id: str, read: DocumentRead, offset: int = 0) -> None:
        self.source_id = source_id
        self._paged = not is_text_type(read.media_type)
        self._origins = page_origins(read, offset)
        self._parts = _part_pages(read)
        self._page: int | None = None  # the page being placed
        self._spans = PageSpans()  # its spans
        self._holder: tuple[ChunkPiece, str] | None = None  # its last chunk that is no sentence, and that one's id

    def origin(self, page: int) -> int:
        """Where page `page`'s text starts in its chunks' offsets (`page_origins`)."""
        return self._origins[page]

    def place(self, mapped: MappedChunk) -> DocumentChunk:
        """The document's chunk for the next of its mapped chunks."""
        piece = mapped.piece
        if mapped.page != self._page:
            self._page = mapped.page
            self.take_back()
        # a container's part names its chunks by its number and its own page numbers
        # (`attachment:2:page:1:char:0-80`), the body as a document of its own
        part, page = self._parts.get(mapped.page, (0, mapped.page))
        chunk_type = piece.chunk_type or "content"
        locator, start, end = _locate(mapped, self._paged, self._origins[mapped.page], page)
        if piece.start is not None and not self._spans.add(chunk_type, piece.start, piece.end):  # type: ignore[arg-type]
            locator = position_locator(page, mapped.index)  # unique: no two pieces share a page and position
        locator = part_locator(part, typed_locator(chunk_type, locator))
        metadata = piece.metadata
        if piece.chunk_type == "sentence":
            # the port's rule for this piece, given the last piece before it that is no sentence
            if self._holder is not None and sentence_holders([self._holder[0], piece])[1] == 0:
                metadata = {**metadata, "chunk_id": self._holder[1]}
        chunk = DocumentChunk(
            source_id=self.source_id,
            locator=locator,
            content=piece.text or "",
            chunk_type=chunk_type,
            page=mapped.page,
            bbox=piece.bbox,
            bbox_reason=piece.bbox_reason,
            chunker=mapped.chunker,
            start_offset=start,
            end_offset=end,
            image=piece.image,
            metadata=metadata,
        )
        if piece.chunk_type != "sentence":
            self._holder = (piece, chunk.id)
        return chunk

    def take_back(self) -> None:
        """Forget the chunks placed on the current page (`chain_runner.stream_page`'s `retract`):
        the page is placed again from its first chunk."""
        self._spans, self._holder = PageSpans(), None


def to_document(encoded: Encoded) -> Document:
    """The `Document` for an encoded source: content, chunks with derived ids (`ChunkPlacer`),
    read status."""
    read = encoded.read
    placer = ChunkPlacer(encoded.source_id, read)
    chunks = tuple(placer.place(mapped) for mapped in encoded.chunk_map.chunks)
    # a chunker that kept text its parser gave up on as plain text says why on its pieces;
    # the page's record repeats it, so the reason is seen without reading the chunks
    unstructured: dict[int, list[str]] = {}
    for mapped in encoded.chunk_map.chunks:
        reason = mapped.piece.metadata.get(UNSTRUCTURED_KEY)
        if reason and reason not in unstructured.setdefault(mapped.page, []):
            unstructured[mapped.page].append(reason)
    metadata = {
        "media_type": read.media_type,
        "status": read.status,
        "reason": read.reason,
        "pages": [
            {"page": p.page, "status": p.status, "reader": p.reader, "reason": p.reason,
             **({UNSTRUCTURED_KEY: "; ".join(unstructured[p.page])} if p.page in unstructured else {})}
            for p in read.pages
        ],
        "unclaimed_pages": list(encoded.chunk_map.unclaimed_pages),
        "failed_chunkers": list(encoded.chunk_map.failed_chunkers),
        "chain": encoded.chain.fingerprint,
        "chunkers": list(encoded.chain.names),
    }
    # The reader's own facts (encoding, page size, ...) join in, but never overwrite the
    # encoder's account of what happened: a reader key that collides is logged and dropped.
    taken = set(metadata) | {f.name for f in fields(Document)}
    clashes = sorted(set(read.metadata) & taken)
    if clashes:
        log.warning("reader metadata keys %s collide with the encoder's or the document's and are dropped", clashes)
    metadata.update({k: v for k, v in read.metadata.items() if k not in taken})
    return Document(source_id=encoded.source_id, content=read.content, chunks=chunks, metadata=metadata)
