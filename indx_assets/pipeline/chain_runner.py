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
form (pages rebuilt from storage), is called through the port alone.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from indx_assets.pipeline.chain import Chain
from indx_assets.pipeline.chunker_port import Chunker, ChunkPiece, PageChunks, PageOutput

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


def _admissible(claim: PageChunks, output: PageOutput, chunker: str) -> tuple[ChunkPiece, ...]:
    """The pieces of `claim` the page allows, with offsets that do not point into its text cleared."""
    pieces = claim.pieces if output.readable else tuple(p for p in claim.pieces if p.image is not None)
    if len(pieces) < len(claim.pieces):
        log.warning("chunker %s claimed text on %s page %d; text pieces dropped", chunker, output.status, claim.page)
    size = len(output.text)
    if any(p.end is not None and p.end > size for p in pieces):
        # An offset past the page's text would give a locator that points at nothing (or at the
        # wrong text); the piece itself is kept, placed by position instead of by offsets.
        log.warning(
            "chunker %s gave offsets past the %d characters of page %d; placed by position instead",
            chunker, size, claim.page,
        )
        pieces = tuple(replace(p, start=None, end=None) if p.end is not None and p.end > size else p for p in pieces)
    return pieces


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
    by_page = {o.page: o for o in outputs}
    claimed: dict[int, tuple[str, tuple[ChunkPiece, ...]]] = {}
    failed: list[str] = []
    for link in chain.links:
        if len(claimed) == len(by_page):
            break  # every page has its answer; nobody later can change it
        try:
            answer = tuple(_ask(link.chunker, content, media_type, outputs, parsed) or ())
            for claim in answer:
                if not isinstance(claim, PageChunks):
                    raise TypeError(f"chunk() returned {type(claim).__name__}, not PageChunks")
        except Exception:
            log.exception("chunker %s raised; treating it as declining this document", link.name)
            failed.append(link.name)
            continue
        for claim in answer:
            output = by_page.get(claim.page)
            if output is None:
                log.warning("chunker %s answered for page %d, which does not exist; dropped", link.name, claim.page)
                continue
            if claim.page in claimed:
                if claimed[claim.page][0] == link.name:
                    log.warning("chunker %s answered twice for page %d; only its first answer kept", link.name, claim.page)
                continue
            pieces = _admissible(claim, output, link.name)
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
