"""Runs a chain over one document and merges the answers into its chunk map.

The rules (DESIGN §2):
- per page, the first chunker in chain order that answers wins; omitting a page declines it;
- a chunker that raises is defective for this document: logged with its traceback, treated
  as declining the whole document, and the next chunker is asked;
- answers for pages that do not exist are dropped and logged;
- on a page the readers reported `failed` or `unreadable`, text pieces are dropped and image
  pieces kept (a chunker may not smuggle in text the reading ladder gave up on); a claim
  left empty counts as declined;
- positions (`page:N/chunk:M`) come from piece order, assigned here, the one place that sees
  the whole document.

The reader's parsed form of the document (`DocumentRead.parsed`), when the caller has it, is
handed to the chunkers that declare `reads_parsed = True` (read with `getattr(..., False)`,
not part of the port) as `chunk(..., parsed=...)`, so they cut what the reader parsed rather
than parsing the bytes again. Every other chunker, and every chunker when there is no parsed
form (pages rebuilt from storage), is called through the port alone. A chunker that declares
`reads_content = False` cuts from the page outputs alone: when no chunker that may take a
document reads its bytes (`reads_content`), the caller may hand over none; when each that reads
them declares `reads_mapped = True` (`maps_content`), a read-only map of a file of them will do.

A document whose chain cuts it page by page (`cuts_page_by_page`) may be cut a page at a time
as a stream (`stream_page`): a chunker that offers `stream_page` (the built-in structured ones,
read with `getattr`, not part of the port) hands over a page's pieces as it cuts them, so a long
page's pieces are never all held; one that stops part way has what it gave taken back.

A container of documents (an e-mail and its attachments, `indx_assets.pipeline.readers.parts`)
is cut part by part: each part's pages, numbered from 1 again, go through the chain with the
part's own bytes and media type, exactly as that part would on its own; its pieces come back on
the container's pages, named with the part's file name.
"""

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from indx_assets.pipeline.chain import Chain
from indx_assets.pipeline.chunker_port import Chunker, ChunkPiece, PageChunks, PageDeclined, PageOutput
from indx_assets.pipeline.readers.parts import CONTAINER_TYPES, PART_KEY, PART_NAME_KEY, PART_PAGE_KEY, Parts, parts_of

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MappedChunk:
    """A piece placed in its document: page, position on the page, and who cut it."""

    page: int
    index: int
    chunker: str
    piece: ChunkPiece


@dataclass(frozen=True, slots=True)
class ChunkMap:
    """The merged answer of a chain for one document."""

    chunks: tuple[MappedChunk, ...]
    #: pages no chunker claimed (readable or not), for the record
    unclaimed_pages: tuple[int, ...]
    #: chunkers that raised on this document
    failed_chunkers: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.chunks


def _admissible(pieces: Iterable[ChunkPiece], output: PageOutput, chunker: str) -> Iterator[ChunkPiece]:
    """The `pieces` the page allows, with offsets that do not point into its text cleared (each
    kind of fault logged once)."""
    size = len(output.text)
    dropped = misplaced = False
    for piece in pieces:
        if not output.readable and piece.image is None:
            if not dropped:
                log.warning("chunker %s claimed text on %s page %d; text pieces dropped", chunker, output.status, output.page)
            dropped = True
            continue
        if piece.end is not None and piece.end > size:
            # An offset past the page's text would give a locator that points at nothing (or at
            # the wrong text); the piece itself is kept, placed by position instead of by offsets.
            if not misplaced:
                log.warning("chunker %s gave offsets past the %d characters of page %d; placed by position instead",
                            chunker, size, output.page)
            misplaced = True
            piece = replace(piece, start=None, end=None)
        yield piece


def _ask(chunker: Chunker, content: bytes, media_type: str, outputs: tuple[PageOutput, ...], parsed: object) -> Any:
    """One chunker's answer, given the parsed form when it declares it reads one."""
    if parsed is not None and getattr(chunker, "reads_parsed", False):
        return chunker.chunk(content, media_type, outputs, parsed=parsed)  # type: ignore[call-arg]
    return chunker.chunk(content, media_type, outputs)


def run_chain(
    chain: Chain, content: bytes, media_type: str, outputs: Iterable[PageOutput], parsed: object = None
) -> ChunkMap:
    """Ask every chunker of `chain` in order and merge their answers per page; `parsed` is the
    reader's parsed form of this document, if the caller has it (see the module docstring)."""
    outputs = tuple(outputs)
    parts = parts_of(content, media_type, parsed)
    if parts is not None:
        return _run_parts(chain, parts, outputs)
    by_page = {o.page: o for o in outputs}
    claimed: dict[int, tuple[str, tuple[ChunkPiece, ...]]] = {}
    failed: list[str] = []
    for link in chain.links:
        if len(claimed) == len(by_page):
            break  # every page has its answer; nobody later can change it
        try:
            answer = _claims(link.chunker, content, media_type, outputs, parsed, link.name)
        except Exception:
            log.exception("chunker %s raised; treating it as declining this document", link.name)
            failed.append(link.name)
            continue
        for claim in answer:
            if claim.page in claimed:
                if claimed[claim.page][0] == link.name:
                    log.warning("chunker %s answered twice for page %d; only its first answer kept", link.name, claim.page)
                continue
            pieces = tuple(_admissible(claim.pieces, by_page[claim.page], link.name))
            if pieces:
                claimed[claim.page] = (link.name, pieces)
    chunks = tuple(
        MappedChunk(page, index, name, piece)
        for page in sorted(claimed)
        for name, pieces in [claimed[page]]
        for index, piece in enumerate(pieces)
    )
    unclaimed = tuple(p for p in sorted(by_page) if p not in claimed)
    return ChunkMap(chunks, unclaimed, tuple(failed))


def _claims(chunker: Chunker, content: bytes, media_type: str, outputs: tuple[PageOutput, ...], parsed: object,
            name: str) -> list[PageChunks]:
    """One chunker's answer, but for its claims on pages that do not exist (dropped and
    logged). Raises what the chunker raises, and `TypeError` for an answer that is not
    `PageChunks`."""
    answer = tuple(_ask(chunker, content, media_type, outputs, parsed) or ())
    for claim in answer:
        if not isinstance(claim, PageChunks):
            raise TypeError(f"chunk() returned {type(claim).__name__}, not PageChunks")
    pages = {o.page for o in outputs}
    for claim in answer:
        if claim.page not in pages:
            log.warning("chunker %s answered for page %d, which does not exist; dropped", name, claim.page)
    return [claim for claim in answer if claim.page in pages]


def stream_page(chain: Chain, content: bytes, media_type: str, output: PageOutput, parsed: object = None, *,
                retract: Callable[[], None], failed: list[str]) -> Iterator[MappedChunk]:
    """`run_chain` over one page of a document that `chain` cuts page by page
    (`cuts_page_by_page`), its chunks given as they are cut: a chunker that offers
    `stream_page(content, media_type, output, parsed)` (the built-in structured ones) hands
    over its pieces one at a time, so a long page's pieces are never all held. The rules are
    `run_chain`'s, and one more: a chunker that stops part way, declining the page
    (`PageDeclined`) or raising, has the chunks it gave taken back (`retract` is called)
    before the next is asked. A chunker that raises is added to `failed` (once)."""
    for link in chain.links:
        given, stopped = 0, False
        try:
            for piece in _page_pieces(link.chunker, link.name, content, media_type, output, parsed):
                yield MappedChunk(output.page, given, link.name, piece)
                given += 1
        except PageDeclined:
            stopped = True
        except Exception:
            log.exception("chunker %s raised; treating it as declining this page", link.name)
            if link.name not in failed:
                failed.append(link.name)
            stopped = True
        if given and not stopped:
            return  # the page's answer
        if given:
            retract()


def _page_pieces(chunker: Chunker, name: str, content: bytes, media_type: str, output: PageOutput,
                 parsed: object) -> Iterator[ChunkPiece]:
    """One chunker's admissible pieces of one page: streamed when it offers `stream_page`."""
    stream = getattr(chunker, "stream_page", None)
    if stream is not None:
        return _admissible(_checked(stream(content, media_type, output, parsed)), output, name)
    # the first claim on the page that keeps any piece (as `run_chain` takes it)
    answer = _claims(chunker, content, media_type, (output,), parsed, name)
    return iter(next((pieces for claim in answer if (pieces := tuple(_admissible(claim.pieces, output, name)))), ()))


def _checked(pieces: Iterable[Any]) -> Iterator[ChunkPiece]:
    """`pieces`, each checked to be a `ChunkPiece` as it comes."""
    for piece in pieces:
        if not isinstance(piece, ChunkPiece):
            raise TypeError(f"stream_page() gave {type(piece).__name__}, not ChunkPiece")
        yield piece


def cuts_page_by_page(chain: Chain, media_type: str) -> bool:
    """Whether `chain` cuts a document of `media_type` page by page: `run_chain` over each page
    alone then gives what it gives over the whole document, so a long document can be cut a
    page at a time. The rule: every link's chunker either declares `page_local = True` (its
    answer for a page depends on that page alone) or takes no document of this type (its
    `media_types` leave it out). A chunker that declares neither may look across pages (a
    PDF's running headers), so its documents are cut whole. A container of parts is never."""
    return media_type not in CONTAINER_TYPES and all(getattr(c, "page_local", False) for c in _taking(chain, media_type))


def reads_content(chain: Chain, media_type: str) -> bool:
    """Whether `chain` may read the bytes of a document of `media_type` when it cuts it, so the
    caller must hand them over (else it may hand over none, and not hold a large text file's
    bytes beside its page text). The rule: a chunker reads them unless it declares
    `reads_content = False` (it cuts from the page outputs alone) or takes no document of this
    type. A container of parts is cut from its bytes (its parts are in them)."""
    return media_type in CONTAINER_TYPES or any(getattr(c, "reads_content", True) for c in _taking(chain, media_type))


def maps_content(chain: Chain, media_type: str) -> bool:
    """Whether every chunker of `chain` that may read the bytes of a document of `media_type`
    (`reads_content`) takes them as a read-only map of a file (declares `reads_mapped = True`:
    the `html` chunker, which lets the map's pages go as it walks them), so the caller may hand
    over a map instead of the bytes. A chunker that declares nothing gets bytes."""
    readers = [c for c in _taking(chain, media_type) if getattr(c, "reads_content", True)]
    return media_type not in CONTAINER_TYPES and bool(readers) and all(getattr(c, "reads_mapped", False) for c in readers)


def _taking(chain: Chain, media_type: str) -> Iterator[Chunker]:
    """The chunkers of `chain` that may take a document of `media_type` (whose `media_types`,
    if they declare any, hold it)."""
    for link in chain.links:
        types = getattr(link.chunker, "media_types", None)
        if types is None or media_type in types:
            yield link.chunker


_PART_KEYS = (PART_KEY, PART_NAME_KEY, PART_PAGE_KEY)


def _run_parts(chain: Chain, parts: Parts, outputs: tuple[PageOutput, ...]) -> ChunkMap:
    """Cut each part of a container with `chain` on its own (see the module docstring)."""
    groups: dict[int, list[PageOutput]] = {}
    for output in outputs:
        groups.setdefault(output.metadata.get(PART_KEY, 0), []).append(output)
    chunks: list[MappedChunk] = []
    unclaimed: list[int] = []
    failed: list[str] = []
    for number, pages in groups.items():
        part = parts.by_number.get(number)
        if part is None:  # pages of a part the container no longer holds: nothing to cut them by
            unclaimed += [p.page for p in pages]
            continue
        own = tuple(
            replace(p, page=i, metadata={k: v for k, v in p.metadata.items() if k not in _PART_KEYS})
            for i, p in enumerate(pages, start=1)
        )
        answer = run_chain(chain, part.content, part.media_type, own, part.parsed)
        named = {PART_KEY: number, **({PART_NAME_KEY: part.name} if part.name else {})} if number else {}
        for mapped in answer.chunks:
            piece = replace(mapped.piece, metadata={**mapped.piece.metadata, **named}) if named else mapped.piece
            chunks.append(replace(mapped, page=pages[mapped.page - 1].page, piece=piece))
        unclaimed += [pages[p - 1].page for p in answer.unclaimed_pages]
        failed += [name for name in answer.failed_chunkers if name not in failed]
    chunks.sort(key=lambda c: (c.page, c.index))
    return ChunkMap(tuple(chunks), tuple(sorted(unclaimed)), tuple(failed))
