"""The `lines` chunker: the lines a reader found (OCR fills them) become boxed pieces.

For any media type, a page whose reader gave `lines` is cut into one piece per line, with
the line's box, in the reader's reading order; the bytes are never reopened. Pages without
lines are declined, so the format chunkers and the `page` fallback see them.

With a size policy (`with_options(max_characters=N)`), neighbouring lines of one block
(`metadata["block"]`, which the OCR reader sets) are merged into one piece whose box is the
union of theirs, as long as the merged text stays within N characters; a line longer than N
stays a piece of its own (a line is never cut). Lines whose reader names no block are never
merged, since nothing says they belong together.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from indx_interfaces import BBox, ChunkPiece, Line, PageChunks, PageOutput


def _union(boxes: Sequence[BBox]) -> BBox:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _offsets(text: str, lines: Sequence[Line]) -> list[tuple[int, int] | None]:
    """Where each line's text sits in the page text, searched in order; None where it is not found."""
    found: list[tuple[int, int] | None] = []
    cursor = 0
    for line in lines:
        start = text.find(line.text, cursor) if line.text else -1
        if start < 0:
            found.append(None)
            continue
        cursor = start + len(line.text)
        found.append((start, cursor))
    return found


def _groups(lines: Sequence[Line], max_characters: int | None) -> list[list[int]]:
    """Indexes of the lines each piece holds: one line each, or runs of one block within the limit."""
    if max_characters is None:
        return [[i] for i in range(len(lines))]
    groups: list[list[int]] = []
    size = 0
    for i, line in enumerate(lines):
        block = line.metadata.get("block")
        if groups:
            last = lines[groups[-1][-1]]
            same_block = block is not None and block == last.metadata.get("block")
            if same_block and size + 1 + len(line.text) <= max_characters:
                groups[-1].append(i)
                size += 1 + len(line.text)
                continue
        groups.append([i])
        size = len(line.text)
    return groups


def _piece(page: PageOutput, lines: Sequence[Line], spans: Sequence[tuple[int, int] | None]) -> ChunkPiece:
    confidences = [line.metadata["confidence"] for line in lines if "confidence" in line.metadata]
    metadata: dict[str, Any] = {"lines": len(lines)}
    if confidences:
        metadata["confidence"] = round(min(confidences), 4)
    bbox = _union([line.bbox for line in lines])
    if all(spans):
        # Contiguous in the page text: the piece is that slice, so offsets hold exactly.
        start, end = spans[0][0], spans[-1][1]  # type: ignore[index]
        return ChunkPiece(text=page.text[start:end], bbox=bbox, start=start, end=end, metadata=metadata)
    return ChunkPiece(text="\n".join(line.text for line in lines), bbox=bbox, metadata=metadata)


@dataclass(frozen=True)
class LinesChunker:
    """One piece per line (or per run of lines of one block up to `max_characters`)."""

    max_characters: int | None = None
    builtin = True
    page_local = True  # each page's answer is cut from its own lines (`chain_runner.cuts_page_by_page`)
    reads_content = False  # (`chain_runner.reads_content`)

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
        claims: list[PageChunks] = []
        for page in outputs:
            lines = [line for line in page.lines or () if line.text.strip()]
            if not page.readable or not lines:
                continue
            spans = _offsets(page.text, lines)
            pieces = tuple(
                _piece(page, [lines[i] for i in group], [spans[i] for i in group])
                for group in _groups(lines, self.max_characters)
            )
            claims.append(PageChunks(page.page, pieces))
        return tuple(claims)


class LinesProvider:
    """Entry point `lines`; options: `max_characters` (merge lines of one block up to this size)."""

    def __init__(self, max_characters: int | None = None) -> None:
        if max_characters is not None and (
            isinstance(max_characters, bool) or not isinstance(max_characters, int) or max_characters < 1
        ):
            raise ValueError(f"lines: max_characters must be a positive int, got {max_characters!r}")
        self.max_characters = max_characters

    def with_options(self, **options: Any) -> "LinesProvider":
        unknown = set(options) - {"max_characters"}
        if unknown:
            raise ValueError(f"lines: unknown options {sorted(unknown)}; it takes max_characters")
        return LinesProvider(**options)

    def chunkers(self) -> tuple[LinesChunker, ...]:
        return (LinesChunker(self.max_characters),)
