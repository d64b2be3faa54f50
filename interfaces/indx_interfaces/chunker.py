"""The chunker port: the value types a chunker receives and returns, and its protocols.

A chunker decides what a chunk is. It is asked once per document, after every reader has
produced its pages and before anything is embedded, with the same bytes the readers saw
(`Chunker.chunk(content, media_type, outputs)`), and answers with one `PageChunks` per page
it claims. The rules of the port:

- **Claim or decline per page.** Returning `PageChunks` for a page claims it; leaving the
  page out declines it, and the next chunker in the chain is asked. Answers are merged per
  page, first answer wins in chain order. An answer for a page that does not exist is
  dropped (and logged).
- **Raising is the chunker's own defect.** The chain runner logs it with its traceback, treats
  it as declining the whole document and goes on; the document is never failed for it.
- **Unread pages have no text.** For a page whose reader reported `failed` or `unreadable`,
  text pieces are dropped from any answer and image pieces kept; a claim left empty counts
  as declined.
- **The chain runner numbers.** Positions (`page:N/chunk:M`) and chunk ids come from piece
  order, assigned by the chain runner, which alone sees the whole document.
- **Discovery.** Providers are named by entry points in the group `indx.chunkers`
  (`CHUNKER_ENTRY_POINT_GROUP`), the same group the built-in chunkers use. Installed
  third-party chunkers are asked first, then those with `builtin = True`, then the one with
  `fallback = True`; both attributes are read with `getattr(..., False)` and are not part of
  the protocol.
- **Cheap to import.** Module scope of a chunker stays cheap; heavy imports go inside
  `chunk()`.

Everything here is immutable and validated at construction, so an invalid piece can never
reach the chain runner. This module imports nothing outside the standard library.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "BBOX_REASONS",
    "CHUNKER_ENTRY_POINT_GROUP",
    "PAGE_STATUSES",
    "BBox",
    "BBoxReason",
    "ChunkPiece",
    "Chunker",
    "ChunkerProvider",
    "Line",
    "PageChunks",
    "PageOutput",
    "PageStatus",
    "sentence_holders",
    "validate_bbox",
]

PageStatus = Literal["ok", "empty", "failed", "unreadable"]
BBoxReason = Literal["no_geometry", "hidden", "unresolved"]
BBox = tuple[float, float, float, float]

PAGE_STATUSES: frozenset[str] = frozenset({"ok", "empty", "failed", "unreadable"})
BBOX_REASONS: frozenset[str] = frozenset({"no_geometry", "hidden", "unresolved"})
#: The entry-point group that names `ChunkerProvider`s.
CHUNKER_ENTRY_POINT_GROUP = "indx.chunkers"


def validate_bbox(bbox: Any) -> BBox:
    """Return `bbox` as a tuple of four floats, or raise `ValueError`.

    The rule: four finite numbers in [0, 1], normalised to the page, top-left origin,
    with x0 < x1 and y0 < y1 (a box has area). This one function serves pieces, lines and
    blocks alike, so a box that passes anywhere passes everywhere.
    """
    # A string of four digits iterates to four numbers, and True is 1.0: neither is a box.
    if isinstance(bbox, (str, bytes, bytearray, Mapping)):
        raise ValueError(f"bbox must be a sequence of four numbers, got {bbox!r}")
    try:
        if any(isinstance(v, (bool, str, bytes)) for v in bbox):
            raise TypeError("not a number")
        values = tuple(float(v) for v in bbox)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bbox must be four numbers, got {bbox!r}") from exc
    if len(values) != 4:
        raise ValueError(f"bbox must have four numbers (x0, y0, x1, y1), got {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"bbox values must be finite, got {values}")
    if not all(0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"bbox values must lie in [0, 1] (normalised to the page), got {values}")
    x0, y0, x1, y1 = values
    if not (x0 < x1 and y0 < y1):
        raise ValueError(f"bbox must have x0 < x1 and y0 < y1, got {values}")
    return (x0, y0, x1, y1)


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_page(page: Any) -> None:
    if not _is_int(page) or page < 1:
        raise ValueError(f"page must be a 1-based int, got {page!r}")


@dataclass(frozen=True, slots=True)
class Line:
    """One line a reader found on a page (OCR fills these): its text and normalised box."""

    text: str
    bbox: BBox
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError("Line.text must be a str")
        object.__setattr__(self, "bbox", validate_bbox(self.bbox))
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))


@dataclass(frozen=True, slots=True)
class PageOutput:
    """What the reading ladder made of one page.

    `status` is the reader's verdict: `ok` (text read), `empty` (read, nothing there),
    `failed` (the reader could not load the page; `reason` says why) or `unreadable`
    (drawn content but no text, e.g. a scan that OCR may take). `reader` names the reader
    whose verdict this is.
    """

    page: int
    text: str = ""
    status: PageStatus = "ok"
    reader: str = ""
    lines: tuple[Line, ...] | None = None
    reason: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_page(self.page)
        if not isinstance(self.text, str):
            raise TypeError("PageOutput.text must be a str")
        if self.status not in PAGE_STATUSES:
            raise ValueError(f"status must be one of {sorted(PAGE_STATUSES)}, got {self.status!r}")
        if self.lines is not None:
            lines = tuple(self.lines)
            if not all(isinstance(line, Line) for line in lines):
                raise TypeError("PageOutput.lines must hold Line values")
            object.__setattr__(self, "lines", lines)
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))

    @property
    def readable(self) -> bool:
        """A page whose text the readers stand behind (not `failed`, not `unreadable`)."""
        return self.status in ("ok", "empty")


@dataclass(frozen=True, slots=True)
class ChunkPiece:
    """One piece of a page as a chunker cut it.

    Exactly one of `text` / `image` (PNG or other raster bytes), and exactly one of a
    normalised `bbox` / a `bbox_reason` saying why there is none. Optional extras:
    `chunk_type` (defaults to `content` for text, `image` for images), character offsets
    `start`/`end` into the page's text where the piece is a slice of it, and metadata. A
    `sentence` piece is a sentence of the piece before it that is not a sentence, and lies
    within its span where both have offsets (`sentence_holders`).
    """

    text: str | None = None
    image: bytes | None = None
    bbox: BBox | None = None
    bbox_reason: BBoxReason | None = None
    chunk_type: str | None = None
    start: int | None = None
    end: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        has_text = self.text is not None and self.text != ""
        has_image = self.image is not None and len(self.image) > 0
        if self.text is not None and not isinstance(self.text, str):
            raise TypeError("ChunkPiece.text must be a str")
        if self.image is not None and not isinstance(self.image, (bytes, bytearray, memoryview)):
            raise TypeError("ChunkPiece.image must be bytes")
        if has_text == has_image:
            raise ValueError("a ChunkPiece carries exactly one of non-empty text or non-empty image")
        if (self.bbox is None) == (self.bbox_reason is None):
            raise ValueError("a ChunkPiece carries exactly one of bbox or bbox_reason")
        if self.bbox is not None:
            object.__setattr__(self, "bbox", validate_bbox(self.bbox))
        elif self.bbox_reason not in BBOX_REASONS:
            raise ValueError(f"bbox_reason must be one of {sorted(BBOX_REASONS)}, got {self.bbox_reason!r}")
        if has_image:
            object.__setattr__(self, "image", bytes(self.image))  # type: ignore[arg-type]
            object.__setattr__(self, "text", None)
        else:
            object.__setattr__(self, "image", None)
        if self.chunk_type is None:
            object.__setattr__(self, "chunk_type", "image" if has_image else "content")
        elif not isinstance(self.chunk_type, str) or not self.chunk_type.isidentifier():
            raise ValueError(f"chunk_type must be an identifier-like name, got {self.chunk_type!r}")
        if (self.start is None) != (self.end is None):
            raise ValueError("start and end offsets come together or not at all")
        if self.start is not None and not all(_is_int(v) for v in (self.start, self.end)):
            raise TypeError(f"offsets must be ints, got {self.start!r}, {self.end!r}")
        if self.start is not None and not (0 <= self.start <= self.end):  # type: ignore[operator]
            raise ValueError(f"offsets must satisfy 0 <= start <= end, got {self.start}, {self.end}")
        object.__setattr__(self, "metadata", _frozen_mapping(self.metadata))


def sentence_holders(pieces: Sequence[ChunkPiece]) -> list[int | None]:
    """For each piece of one page, the index of the piece it is a sentence of, or None.

    The rule: a `sentence` piece belongs to the last piece before it that is not a sentence,
    unless both have offsets and that piece's span does not enclose its own. Every other
    piece, and a sentence without such a piece, belongs to none.
    """
    holders: list[int | None] = []
    last: int | None = None  # the last piece that is not a sentence
    for index, piece in enumerate(pieces):
        if piece.chunk_type != "sentence":
            holders.append(None)
            last = index
            continue
        holder = pieces[last] if last is not None else None
        outside = (holder is not None and piece.start is not None and holder.start is not None
                   and not (holder.start <= piece.start and piece.end <= holder.end))  # type: ignore[operator]
        holders.append(None if holder is None or outside else last)
    return holders


@dataclass(frozen=True, slots=True)
class PageChunks:
    """A chunker's claim on one page: its 1-based number and its pieces in reading order."""

    page: int
    pieces: tuple[ChunkPiece, ...]

    def __post_init__(self) -> None:
        _check_page(self.page)
        pieces = tuple(self.pieces)
        if not all(isinstance(p, ChunkPiece) for p in pieces):
            raise TypeError("PageChunks.pieces must hold ChunkPiece values")
        object.__setattr__(self, "pieces", pieces)


@runtime_checkable
class Chunker(Protocol):
    """Decides what a chunk is for the pages it claims.

    `content` and `media_type` are the document's bytes and detected media type, exactly as
    the readers saw them (a chunker that knows the format may reopen the bytes for structure
    the flat text lost); `outputs` holds one `PageOutput` per page, in page order. Return one
    `PageChunks` per claimed page; return nothing for a page to decline it; raise only for
    the chunker's own defects (the chain runner logs it and asks the next chunker). Keep module
    scope cheap: heavy imports go inside `chunk()`. Optional attributes read with
    `getattr(..., False)`: `builtin`, `fallback`.
    """

    def chunk(
        self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]
    ) -> tuple[PageChunks, ...]: ...


@runtime_checkable
class ChunkerProvider(Protocol):
    """What an `indx.chunkers` entry point names (the provider, or a class constructed with
    no arguments): a source of chunkers, asked once when the chain is assembled.

    A provider may also offer `with_options(**options) -> ChunkerProvider`, through which the
    chain's configuration (`INDX_CHAIN`'s `options`) reaches it; one without it takes none.
    """

    def chunkers(self) -> tuple[Chunker, ...]: ...
