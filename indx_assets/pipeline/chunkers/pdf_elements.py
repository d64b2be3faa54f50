"""A PDF page's blocks as chunking-library elements, and the library's chunks back on the page.

The `pdf` chunker finds the page's blocks (`pdf_layout`); the structure-aware chunking library
(`indx_assets.pipeline.chunking`, the same `ChunkerSettings` and `page_pieces` as the `markdown`,
`html` and `text` chunkers) decides where chunks start and end. This module is the bridge.

Blocks → elements: headings become `Title`s (level from their size over the body size),
paragraphs `NarrativeText`, list items `ListItem`s, tables `Table`s (cells ` | `-joined per
row, the first row as the `<thead>` of their HTML so split tables repeat it). The blocks are
written, in reading order, into a *layout text* (lines joined by a line break, blocks by a
blank line), and every line remembers its span in it, its box and its runs' spans in the
reader's page text.

Chunks → boxes: `page_pieces` reports each chunk's span in the layout text (found word by
word, so it holds for a chunk cut out of the middle of a paragraph, at a sentence end or
between words, as well as for whole blocks). A piece's box is the union of the lines its span
touches, so a piece split from a long block gets its own lines' box, not the block's (the
library's consolidated `bbox` is the union of whole elements and would give every piece of a
split paragraph the paragraph's box). Per-line elements would give the same boxes but make
the library pack lines instead of paragraphs (joined by blank lines, cut mid-paragraph at the
soft maximum); mapping spans back keeps paragraphs as the unit.

Flows: blocks are chunked per *flow*, a run of blocks in reading order where none starts
above the one before and each overlaps the flow's x-range, so no chunk joins the bottom of
one column to the top of the next. Sections carry across flows and pages (`SectionTrail`): a chunk at the
top of a column or page belongs to the heading above it, and section ids are unique in the
document.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any

from indx_interfaces import BBox, ChunkPiece

from indx_assets.pipeline.chunkers.base import ChunkerSettings, Section, page_pieces, section_name
from indx_assets.pipeline.chunkers.pdf_layout import Block, VisualLine
from indx_assets.pipeline.chunking.elements import Element, ListItem, NarrativeText, Table, Title
from indx_assets.pipeline.chunking.options import TEXT_SEPARATOR

Box = tuple[float, float, float, float]
LINE_BREAK = "\n"
BLOCK_BREAK = TEXT_SEPARATOR  # the library's own separator between elements
CELL_SEPARATOR = " | "


@dataclass(slots=True)
class PlacedLine:
    """A line (or a table row of cells) in the layout text: its span there, its box, its runs' spans."""

    start: int
    end: int
    box: Box
    runs: list[tuple[int, int]]
    cells: list[VisualLine]

    def reader_spans(self, start: int, end: int) -> list[tuple[int, int]]:
        """Where the layout text `[start, end)` of this line lies in the page text: its runs'
        spans when it holds the whole line, else the extent of the characters it holds."""
        if start <= self.start and end >= self.end:
            return self.runs
        where: list[int] = []
        for k, cell in enumerate(self.cells):
            if k:
                where.extend([-1] * len(CELL_SEPARATOR))
            where.extend(cell.char_map())
        held = [i for i in where[max(start - self.start, 0) : end - self.start] if i >= 0]
        return [(min(held), max(held) + 1)] if held else []


@dataclass(slots=True)
class PlacedTable:
    start: int
    end: int
    header: str  # the header row as written in the layout text
    header_flat: str  # the header row as the library writes it (cells joined by spaces)


@dataclass
class PageLayout:
    """One page's blocks written out for the chunking library (see the module docstring).

    `text` joins the lines of a block with a line break, `flat` (the same length) with a
    space: the library writes an element's lines with spaces, so chunks of whole elements are
    verbatim slices of `flat` (and need no re-measuring), and become the same slice of `text`.
    """

    text: str
    flat: str
    lines: list[PlacedLine]
    flows: list[list[Element]]
    tables: list[PlacedTable] = field(default_factory=list)


def _union(boxes: Sequence[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _line_box(lines: Sequence[VisualLine]) -> Box:
    if len(lines) == 1:  # a text line (table rows hold several cells)
        line = lines[0]
        return (line.x0, line.y0, line.x1, line.y1)
    return (min(l.x0 for l in lines), min(l.y0 for l in lines), max(l.x1 for l in lines), max(l.y1 for l in lines))


def _continues(box: Box, previous: Box, flow: Box) -> bool:
    """Whether a block continues the flow: it does not start above the block before it (a
    column change goes back up) and its x-range overlaps the flow's."""
    return box[1] >= previous[1] and min(box[2], flow[2]) > max(box[0], flow[0])


def _table_html(rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(cell)}</th>" for cell in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows[1:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page_layout(blocks: Sequence[Block], page_number: int, size: tuple[float, float]) -> PageLayout:
    """Blocks in reading order → elements (in flows), the layout text and its placed lines."""
    parts: list[str] = []
    flat: list[str] = []
    lines: list[PlacedLine] = []
    tables: list[PlacedTable] = []
    flows: list[list[Element]] = []
    offset = 0
    previous: Box | None = None
    flow_box: Box | None = None
    w, h = size
    for block in blocks:
        start = offset
        if block.kind == "table":
            cells = [[cell.text for cell in row] for row in block.rows]
            units = [(CELL_SEPARATOR.join(row), list(cells_of)) for row, cells_of in zip(cells, block.rows)]
        else:
            units = [(line.text, [line]) for line in block.lines]
        units = [(text, group) for text, group in units if text]
        if not units:
            continue
        if parts:
            parts.append(BLOCK_BREAK)
            flat.append(BLOCK_BREAK)
            start = offset = offset + len(BLOCK_BREAK)
        for k, (text, group) in enumerate(units):
            if k:
                parts.append(LINE_BREAK)
                flat.append(LINE_BREAK if block.kind == "table" else " ")  # a table keeps its rows
                offset += len(LINE_BREAK)
            parts.append(text)
            flat.append(text)
            lines.append(PlacedLine(offset, offset + len(text), _line_box(group), [(r.start, r.end) for g in group for r in g.runs], group))
            offset += len(text)
        text = "\n".join(t for t, _ in units)
        box = block.box
        bbox = (box[0] / w, box[1] / h, box[2] / w, box[3] / h)
        element: Element
        if block.kind == "table":
            element = Table(text, page_number=page_number, bbox=bbox, text_as_html=_table_html(cells))
            tables.append(PlacedTable(start, offset, units[0][0], " ".join(c for c in cells[0] if c)))
        elif block.kind == "heading":
            element = Title(text, page_number=page_number, bbox=bbox)
            element.metadata.category_depth = block.level or 1
        elif block.kind == "list_item":
            element = ListItem(text, page_number=page_number, bbox=bbox)
        else:
            element = NarrativeText(text, page_number=page_number, bbox=bbox)
        element.metadata.start, element.metadata.end = start, offset
        if previous is None or flow_box is None or not _continues(box, previous, flow_box):
            flows.append([])
            flow_box = box
        flows[-1].append(element)
        previous, flow_box = box, _union([flow_box, box])
    return PageLayout("".join(parts), "".join(flat), lines, flows, tables)


class SectionTrail:
    """The open sections of a document read in order: headings nest by level across pages."""

    def __init__(self) -> None:
        self.stack: list[Section] = []
        self.count = 0

    @property
    def current(self) -> Section | None:
        return self.stack[-1] if self.stack else None

    def enter(self, title: Title) -> Section:
        level = title.metadata.category_depth or 1
        while self.stack and self.stack[-1].level >= level:
            self.stack.pop()
        parent = self.current
        name = section_name(title.text)
        section = Section(f"s{self.count}", name, level, parent.id if parent else None, (*(parent.path if parent else ()), name))
        self.count += 1
        self.stack.append(section)
        return section


def _section_metadata(metadata: dict[str, Any], section: Section | None) -> dict[str, Any]:
    out = {k: v for k, v in metadata.items() if k not in ("section_title", "section_id", "parent_section_id", "section_path")}
    if section is not None:
        out.update(section_title=section.title, section_id=section.id, section_path=list(section.path))
        if section.parent is not None:
            out["parent_section_id"] = section.parent
    else:
        out["section_path"] = []
    return out


@dataclass
class Cut:
    """A chunk the library cut from a page: its piece, its span in the layout text, the lines
    that span touches, and whether its text starts with a repeated table header; `tail`, the
    rest of a word hyphenated across its end that it took from the next chunk (see
    `rejoin_hyphenated`): the line it stands on and its span in the layout text."""

    piece: ChunkPiece
    span: tuple[int, int]
    lines: list[PlacedLine]
    repeated_header: bool
    tail: tuple[PlacedLine, int, int] | None = None


def _touching(lines: Sequence[PlacedLine], start: int, end: int) -> list[PlacedLine]:
    return [line for line in lines if line.start < end and line.end > start]


def cut_page(layout: PageLayout, settings: ChunkerSettings, trail: SectionTrail) -> list[Cut]:
    """Chunk each flow with the library; every chunk gets its lines and its document section."""
    cuts: list[Cut] = []
    for flow in layout.flows:
        open_before = trail.current
        local: dict[str, Section] = {}
        titles = [e for e in flow if isinstance(e, Title) and e.text.strip()]
        pieces = page_pieces(layout.flat, flow, settings)
        for title in titles:  # `page_pieces` named this flow's sections; name them in the document
            section = trail.enter(title)
            if title.metadata.element_id is not None:
                local[title.metadata.element_id] = section
        flow_start, flow_end = flow[0].metadata.start or 0, flow[-1].metadata.end or len(layout.text)
        for piece in pieces:
            local_id = piece.metadata.get("section_id")
            section = local.get(local_id) if local_id else open_before
            metadata = _section_metadata(dict(piece.metadata), section)
            if piece.start is None or piece.end is None:  # no word found again: the whole flow, to be safe
                lines = _touching(layout.lines, flow_start, flow_end)
                cuts.append(Cut(replace(piece, metadata=metadata), (flow_start, flow_end), lines, False))
                continue
            lines = _touching(layout.lines, piece.start, piece.end)
            text, repeated = piece.text or "", False
            if text == layout.flat[piece.start : piece.end]:
                text = layout.text[piece.start : piece.end]  # the same slice, lines on lines
            elif piece.chunk_type == "table":
                text, repeated = _table_text(layout, piece, settings)
            cuts.append(Cut(replace(piece, text=text, metadata=metadata), (piece.start, piece.end), lines, repeated))
    return rejoin_hyphenated(cuts, layout)


#: A chunk's text that ends in a word hyphenated at its last line's end ("simi-").
_HYPHEN_END = re.compile(r"\w-$")
#: The first word of a chunk's text, and the whitespace after it.
_FIRST_WORD = re.compile(r"\s*\S+\s*")


def _continues_at(before: Cut, after: Cut) -> bool:
    """Whether the page text goes on from `before`'s last line into `after`'s first: the
    last run `before` holds is followed, in PDFium's text, by the first run `after` holds."""
    if not before.lines or not after.lines or before.span[1] != before.lines[-1].end or after.span[0] != after.lines[0].start:
        return False
    last, first = before.lines[-1].cells[-1].runs, after.lines[0].cells[0].runs
    return bool(last and first) and max(last, key=lambda r: r.end).next_start == min(first, key=lambda r: r.start).start


def rejoin_hyphenated(cuts: list[Cut], layout: PageLayout) -> list[Cut]:
    """A word hyphenated across a chunk break is whole in the chunk where it starts.

    A column (or a size bound) can end a chunk at a line that ends in "simi-", the next chunk
    starting with "larity)": a search for the word finds neither. When a prose chunk ends in a
    hyphenated word and the next prose chunk starts where the page text goes on after it, that
    chunk's first word moves to the end of the first, on a line of its own ("simi-\nlarity)",
    as on the page); the `sentence` pieces of the next chunk drop it too, and a chunk left
    empty goes. The first chunk's box stays the box of its own lines (the word's rest may
    stand at the top of the next column), its offsets reach over the word's rest.
    """
    prose = [k for k, cut in enumerate(cuts) if cut.piece.chunk_type == "content"]
    dropped: set[int] = set()
    for a, b in zip(prose, prose[1:]):
        before, after = cuts[a], cuts[b]
        text_a, text_b = before.piece.text or "", after.piece.text or ""
        start, end = after.span
        if (a in dropped or not _HYPHEN_END.search(text_a[-2:]) or not _continues_at(before, after)
                or text_b != layout.text[start:end] or any(cuts[k].piece.chunk_type != "sentence" for k in range(a + 1, b))):
            continue
        word = _FIRST_WORD.match(text_b)
        if word is None:
            continue
        moved = word.group().strip()
        tail_end = start + len(word.group().rstrip())
        cuts[a] = replace(before, piece=replace(before.piece, text=f"{text_a}\n{moved}"),
                          tail=(after.lines[0], start, tail_end))
        rest = start + word.end()
        if rest >= end:
            dropped.add(b)
        else:
            cuts[b] = replace(after, piece=replace(after.piece, text=text_b[word.end():]), span=(rest, end),
                              lines=[line for line in after.lines if line.end > rest])  # a line of the word alone is gone
        for k in range(b + 1, len(cuts)):  # the next chunk's sentences, which start with the word too
            if cuts[k].piece.chunk_type != "sentence":
                break
            sentence = cuts[k]
            if sentence.span[0] < rest:
                if sentence.span[1] <= rest:
                    dropped.add(k)
                else:
                    cut = rest - sentence.span[0]
                    cuts[k] = replace(sentence, piece=replace(sentence.piece, text=(sentence.piece.text or "")[cut:]),
                                      span=(rest, sentence.span[1]))
    return [cut for k, cut in enumerate(cuts) if k not in dropped]


def _table_text(layout: PageLayout, piece: ChunkPiece, settings: ChunkerSettings) -> tuple[str, bool]:
    """A table piece's text row by row as on the page (` | ` between cells, or spaces when the
    separators would not fit), its header first when the library repeated it."""
    start, end = piece.start or 0, piece.end or 0
    rows = layout.text[start:end]
    table = next((t for t in layout.tables if t.start <= start < t.end), None)
    text = piece.text or ""
    repeated = (
        table is not None and start > table.start and bool(table.header_flat) and text.startswith(table.header_flat)
        and not rows.startswith(table.header)
    )
    rendered = f"{table.header}{LINE_BREAK}{rows}" if repeated and table else rows
    if settings.fits(rendered):
        return rendered, repeated
    # The library sized the rows with cells joined by spaces; ` | ` costs tokens it did not count.
    spaced = rendered.replace(CELL_SEPARATOR, " ")
    return (spaced if settings.fits(spaced) else text), repeated


def reader_offsets(cuts: Sequence[Cut]) -> list[tuple[int, int] | None]:
    """Each cut's [min, max) span in the reader's page text, kept only if no other cut reaches
    into it and the piece is a slice of it (a repeated table header is not). A line split
    between two cuts gives each the characters it holds, so both keep their offsets. Sentence
    pieces lie inside their chunk by design: they are checked against each other only, and
    chunks against chunks."""
    spans = [[run for line in cut.lines for run in line.reader_spans(*cut.span)]
             + (cut.tail[0].reader_spans(cut.tail[1], cut.tail[2]) if cut.tail else []) for cut in cuts]
    sentence = [cut.piece.chunk_type == "sentence" for cut in cuts]
    owner = sorted((s, e, k) for k, runs in enumerate(spans) for s, e in runs)
    result: list[tuple[int, int] | None] = []
    for k, runs in enumerate(spans):
        if not runs or cuts[k].repeated_header:
            result.append(None)
            continue
        lo, hi = min(s for s, _ in runs), max(e for _, e in runs)
        intruder = any(other != k and sentence[other] == sentence[k] and s < hi and e > lo for s, e, other in owner)
        result.append(None if intruder else (lo, hi))
    return result


def normalised(box: Box, size: tuple[float, float]) -> BBox | None:
    w, h = size
    x0, y0, x1, y1 = max(box[0] / w, 0.0), max(box[1] / h, 0.0), min(box[2] / w, 1.0), min(box[3] / h, 1.0)
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def boxed(cut: Cut, size: tuple[float, float]) -> BBox | None:
    """The union box of a cut's lines on the displayed page, normalised (None if off the page)."""
    return normalised(_union([line.box for line in cut.lines]), size) if cut.lines else None
