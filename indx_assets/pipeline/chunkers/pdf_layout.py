"""Page layout from text runs: runs → visual lines → blocks (paragraphs, list items, headings,
tables) → reading order. Pure geometry, no PDF library: the `pdf` chunker feeds it runs (`readers.pdf_runs.Run`).

Coordinates are points on the *displayed* page (rotation and crop box already applied),
top-left origin, y growing downwards. Thresholds are multiples of the local line height, so
the same rules work for 6 pt footnotes and 30 pt titles.

The rules, in order:
1. Runs on one baseline (vertical overlap) whose horizontal gap is under `WORD_GAP` line
   heights join into one visual line; a larger gap (a column gutter, a table's cell spacing)
   keeps them apart, so a generator that draws every glyph alone still gives whole lines
   while two columns drawn row by row stay two columns. A formula's sub/superscripts and an
   accent drawn as a glyph of its own join the line of the letter they are set on (see
   `scripts`), and runs stacked over each other are read in the page text's order.
2. Rows where several separate lines share a baseline, at least one of them short (cells,
   not prose), and that follow each other closely, form a table region, read row by row.
3. The remaining lines stack into blocks: the next line joins the block directly above it
   when their x-ranges overlap, the gap is under `PARAGRAPH_GAP` line heights and the font
   size matches; a bullet or enumerator starts a new block (a list item).
4. A block is a heading when its text is at least `HEADING_RATIO` times the page's body size,
   or it is a short bold line; its level: 1 from `LEVEL_ONE_RATIO` times the body size, 2 for
   other big headings, 3 for bold lines at body size.
5. Reading order (recursive XY-cut): the blocks are cut in two at the widest empty gap,
   vertical (a gutter: left part first) or horizontal (upper part first), and each part is
   ordered the same way. The widest gap first means a title's gap over the columns is cut
   before the gutter, and the gutter before the paragraph gaps inside the columns, so
   multi-column pages read column by column.
"""

import re
import unicodedata
from dataclasses import dataclass, field, replace
from statistics import median

from indx_assets.pipeline.readers.pdf_runs import Run

#: Gap (in line heights) under which two runs on one baseline belong to one line.
WORD_GAP = 1.2
#: Gap (in line heights) from which a new paragraph starts.
PARAGRAPH_GAP = 0.75
#: Font-size ratio over the body size that makes a heading.
HEADING_RATIO = 1.15
#: Font-size ratio over the body size that makes a top-level (level 1) heading.
LEVEL_ONE_RATIO = 1.5
#: Longest text (characters) a one-line bold block may have and still be a heading.
BOLD_HEADING_CHARS = 80
#: A cell is "short" under this many characters: rows of short pieces are tables, not columns.
SHORT_CELL_CHARS = 24
#: Rows further apart than this (in row heights) do not continue a table.
TABLE_ROW_GAP = 2.5
#: A run set under this share of its base's size, beside it, can be its sub/superscript.
SCRIPT_RATIO = 0.9
#: Unicode categories of an accent PDFium draws as a glyph of its own ("ˇ", "´", "`", "¨").
_ACCENT_CATEGORIES = frozenset({"Sk", "Lm", "Mn"})

_BULLET = re.compile(r"^\s*(?:[•◦▪▫●○■□‣⁃∙·\-–—*]\s|(?:\(?\d{1,3}|[a-zA-Z]|[ivxlcdm]{1,6})[.)]\s)")


@dataclass(slots=True)
class VisualLine:
    runs: list[Run]
    x0: float
    y0: float
    x1: float
    y1: float
    #: `text`, `size` and `bold`, computed once (the runs of a line never change once it is formed)
    _text: str | None = None
    _size: float | None = None
    _bold: bool | None = None
    #: `char_map()`, kept: a line that two chunks share is mapped for each
    _chars: list[int] | None = None

    @classmethod
    def of(cls, runs: list[Run]) -> "VisualLine":
        if len(runs) == 1:  # most lines: one run, its box as it is
            run = runs[0]
            return cls([run], run.x0, run.y0, run.x1, run.y1)
        runs = left_to_right(runs)
        return cls(runs, min(r.x0 for r in runs), min(r.y0 for r in runs), max(r.x1 for r in runs), max(r.y1 for r in runs))

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def _segments(self) -> list[tuple[str, "Run | None"]]:
        """The line's runs left to right, with a space (`None` run) between two runs where the
        page text has whitespace between them when it reads them one after the other (a
        superscript PDFium set apart, letter-spaced capitals it reads as one word), else where
        the page shows a gap."""
        segments: list[tuple[str, Run | None]] = [(self.runs[0].text, self.runs[0])]
        for prev, run in zip(self.runs, self.runs[1:]):
            joined = segments[-1][0].endswith(" ") or run.text.startswith(" ")
            spaced = prev.spaced_before(run)
            if spaced is None:
                spaced = run.x0 - prev.x1 > 0.15 * max(prev.height, run.height)
            if spaced and not joined:
                segments.append((" ", None))
            segments.append((run.text, run))
        return segments

    @property
    def text(self) -> str:
        """Runs joined with one space where the page shows a gap (a word boundary), else nothing;
        whitespace collapsed."""
        if self._text is None:
            self._text = " ".join("".join(t for t, _ in self._segments()).split())
        return self._text

    def char_map(self) -> list[int]:
        """For each character of `text`, its index in the page text (-1 for a space the line adds).
        Computed once per line; the list is shared, so callers read it and never change it."""
        if self._chars is None:
            self._chars = self._char_map()
        return self._chars

    def _char_map(self) -> list[int]:
        chars: list[str] = []
        where: list[int] = []
        for t, run in self._segments():
            chars.extend(t)
            if run is None:
                where.extend([-1] * len(t))
            else:  # a run's text is its page-text slice, character for character
                # run.start + min(i, last) for each character i: a range, then the last repeated
                last = max(run.end - run.start - 1, 0)
                where.extend(range(run.start, run.start + min(len(t), last + 1)))
                where.extend([run.start + last] * (len(t) - last - 1))
        out: list[int] = []
        pending = False
        for c, i in zip(chars, where):
            if c.isspace():
                pending = bool(out)
                continue
            if pending:
                out.append(-1)
                pending = False
            out.append(i)
        return out

    @property
    def size(self) -> float:
        """The size of the line's main run (most characters): superscripts do not make headings."""
        if self._size is None:
            self._size = max(self.runs, key=lambda r: len(r.text)).size or self.height
        return self._size

    @property
    def bold(self) -> bool:
        if self._bold is None:
            self._bold = all(r.bold for r in self.runs)
        return self._bold


@dataclass(slots=True)
class Block:
    """A paragraph, list item, heading or table: lines (or table rows) with their union box."""

    kind: str  # "text", "list_item", "heading", "table"
    lines: list[VisualLine] = field(default_factory=list)
    #: for tables: rows of cells (each cell a visual line), top to bottom, left to right
    rows: list[list[VisualLine]] = field(default_factory=list)
    #: for headings: 1 (at least `LEVEL_ONE_RATIO` times the body size), 2 (bigger than the
    #: body) or 3 (a short bold line at body size)
    level: int = 0

    @property
    def all_lines(self) -> list[VisualLine]:
        return [cell for row in self.rows for cell in row] if self.kind == "table" else self.lines

    @property
    def box(self) -> tuple[float, float, float, float]:
        lines = self.all_lines
        return (min(l.x0 for l in lines), min(l.y0 for l in lines), max(l.x1 for l in lines), max(l.y1 for l in lines))

    def row_texts(self) -> list[str]:
        """Text units of the block: one per visual line, or one per table row (cells joined by ` | `)."""
        if self.kind == "table":
            return [" | ".join(cell.text for cell in row) for row in self.rows]
        return [line.text for line in self.lines]

    @property
    def text(self) -> str:
        return "\n".join(self.row_texts())

    @property
    def size(self) -> float:
        return max(l.size for l in self.all_lines)


def left_to_right(runs: list[Run]) -> list[Run]:
    """A line's runs left to right; runs stacked over each other (their x-ranges overlap: a
    superscript over its subscript, an accent over its letter) in the order the page text
    reads them, the only order the page gives for glyphs set one above the other ("w", "(i)",
    "1" for w with (i) over 1, not "w1" and "(i)")."""
    ordered = sorted(runs, key=lambda r: r.x0)
    out: list[Run] = []
    stack: list[Run] = []
    reach = 0.0
    for run in ordered:
        if stack and run.x0 >= reach:
            out.extend(sorted(stack, key=lambda r: r.start) if len(stack) > 1 else stack)
            stack = []
        if not stack:
            reach = run.x1
        stack.append(run)
        reach = max(reach, run.x1)
    out.extend(sorted(stack, key=lambda r: r.start) if len(stack) > 1 else stack)
    return out


def _is_accent(run: Run) -> bool:
    """A run of nothing but accents (a modifier letter or symbol such as "ˇ" or "´"): set over
    a letter, it is part of that letter's line, never a line of its own."""
    return all(unicodedata.category(c) in _ACCENT_CATEGORIES for c in run.text if not c.isspace())


def scripts(runs: list[Run]) -> dict[int, list[Run]]:
    """Rule 1a: the sub/superscripts of the page's runs, by the `id` of the run they are set on
    (their base), in page-text order.

    A run is a script when the page text reads it right after its base (or after a script of
    that base: "w", "(i)", "1"), it is set smaller (under `SCRIPT_RATIO` of the base's size),
    its box shares height with the base's, and it starts past the base's start, no more than
    a line height back from the base's end and less than `WORD_GAP` line heights after where
    the base and its scripts so far end. A superscript shares too little height with its line
    to join it by rule 1 (it made rows of "(i)" apart from their line, read as a table), and a
    subscript under a superscript is drawn over it: attached, both are read with their letter.
    """
    after = {r.next_start: r for r in runs if r.next_start >= 0}
    found: dict[int, list[Run]] = {}
    base_of: dict[int, Run] = {}
    for run in sorted(runs, key=lambda r: r.start):
        before = after.get(run.start)
        if before is None or before is run or before.hidden != run.hidden:
            continue
        base = base_of.get(id(before), before)
        # the size test first: it turns most runs away (this runs for every run of every page)
        if run.size >= SCRIPT_RATIO * base.size or run.x0 <= base.x0 or min(run.y1, base.y1) <= max(run.y0, base.y0):
            continue
        height = base.height
        right = max([base.x1, *(s.x1 for s in found.get(id(base), ()))])
        if base.x1 - height <= run.x0 <= right + WORD_GAP * height:
            base_of[id(run)] = base
            found.setdefault(id(base), []).append(run)
    return found


def _v_overlap(a: Run | VisualLine, b: Run | VisualLine) -> float:
    """Vertical overlap as a share of the shorter box's height."""
    # min/max spelt as conditionals that pick what they pick (this runs for every run and line pair)
    a0, a1, b0, b1 = a.y0, a.y1, b.y0, b.y1
    inter = (b1 if b1 < a1 else a1) - (b0 if b0 > a0 else a0)
    ha, hb = a1 - a0, b1 - b0
    shorter = hb if hb < ha else ha
    return inter / (1e-6 if 1e-6 > shorter else shorter)


def _x_overlaps(a0: float, a1: float, b0: float, b1: float) -> bool:
    return min(a1, b1) - max(a0, b0) > 0


def visual_lines(runs: list[Run]) -> list[VisualLine]:
    """Rule 1: merge runs that share a baseline and sit closer than `WORD_GAP` line heights."""
    runs = [r for r in runs if r.text.strip() and r.x1 > r.x0 and r.y1 > r.y0]
    if not runs:
        return []
    # Runs far taller than the text around them (vertical text in a margin) are lines of
    # their own: on one "baseline" with everything beside them they would swallow it.
    typical = median(r.height for r in runs)
    attached = scripts(runs)
    ends: dict[int, float] = {}  # where a run and its scripts end, for the gaps of rule 1
    if attached:  # laid out with their base, below
        held = {id(script) for group in attached.values() for script in group}
        runs = [r for r in runs if id(r) not in held]
        ends = {id(r): max(r.x1, *(s.x1 for s in attached[id(r)])) for r in runs if id(r) in attached}
    tall = [r for r in runs if r.height > 2.5 * typical]
    runs = [r for r in runs if r.height <= 2.5 * typical]
    runs.sort(key=lambda r: ((r.y0 + r.y1) / 2, r.x0))
    # (copies: the runs are the reader's, kept for every chunking of the document)
    lines: list[list[Run]] = [[replace(r, size=typical), *attached.get(id(r), ())] for r in tall]
    # Bucket runs into baseline rows, then cut each row where the horizontal gap is large.
    row: list[Run] = []
    for run in runs:
        if row and _v_overlap(run, row[-1]) < 0.5 and _v_overlap(run, row[0]) < 0.5:
            lines.extend(_split_row(row, ends))
            row = []
        row.append(run)
    if row:
        lines.extend(_split_row(row, ends))
    if attached:  # (a tall run's line is a copy of it, its scripts already with it)
        for group in lines:
            group.extend([script for run in group for script in attached.get(id(run), ())])
    return [VisualLine.of(group) for group in lines]


def _split_row(row: list[Run], ends: dict[int, float]) -> list[list[Run]]:
    """One baseline row's runs as lines, left to right: a run continues the line whose last run
    ends less than `WORD_GAP` line heights before it, shares its baseline (half the shorter
    height) and lies beside it rather than over it (less than half the narrower width shared).
    The row is a chain of overlaps, so it can hold two stacked lines of a paragraph
    joined through a taller run beside them (a big figure in the next column); testing the
    run's own neighbour keeps them apart, where one gap test for the row read them as one line
    ("chapter" + "and one which..." as "chapterand one which...").

    A run ends where its scripts end when they reach further (`ends`, by the run's `id`)."""
    row = sorted(row, key=lambda r: r.x0)
    groups: list[list[Run]] = [[row[0]]]
    rights = [ends.get(id(row[0]), row[0].x1)]
    for run in row[1:]:
        best, overlap = -1, 0.5
        for k, group in enumerate(groups):
            height = min(run.height, max(r.height for r in group))
            if run.x0 - rights[k] > WORD_GAP * height:
                continue
            last = group[-1]
            if min(run.x1, last.x1) - max(run.x0, last.x0) > 0.5 * min(run.x1 - run.x0, last.x1 - last.x0) \
                    and not _is_accent(run):
                continue  # drawn over it, not beside it: the next line of slanted or stacked text
            shared = _v_overlap(run, last)
            if shared >= overlap:
                best, overlap = k, shared
        end = ends.get(id(run), run.x1)
        if best < 0:
            groups.append([run])
            rights.append(end)
        else:
            groups[best].append(run)
            rights[best] = max(rights[best], end)
    return groups


def _rows(lines: list[VisualLine]) -> list[list[VisualLine]]:
    """Lines sharing a baseline, top to bottom; each row left to right."""
    rows: list[list[VisualLine]] = []
    for line in sorted(lines, key=lambda l: ((l.y0 + l.y1) / 2, l.x0)):
        if rows and _v_overlap(line, rows[-1][0]) >= 0.5:
            rows[-1].append(line)
        else:
            rows.append([line])
    return [sorted(row, key=lambda l: l.x0) for row in rows]


def _is_table_row(row: list[VisualLine]) -> bool:
    """Several pieces on one baseline that read as cells: all short for two, mostly short for more."""
    if len(row) < 2:  # most rows: one line, no table row (and nothing to measure)
        return False
    lengths = sorted(len(l.text) for l in row)
    if len(row) == 2:
        return lengths[1] < SHORT_CELL_CHARS
    return len(row) >= 3 and lengths[len(lengths) // 2] < SHORT_CELL_CHARS


def _columns_align(a: list[VisualLine], b: list[VisualLine]) -> bool:
    """Two table rows line up when every cell of the shorter row overlaps a cell of the other."""
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return all(any(_x_overlaps(c.x0, c.x1, d.x0, d.x1) or abs(c.x0 - d.x0) < c.height for d in longer) for c in shorter)


def gutters(rows: list[list[VisualLine]]) -> list[float]:
    """Where the page's columns of prose part: the empty x-intervals between two long lines
    (at least `SHORT_CELL_CHARS`, prose rather than cells) side by side on one baseline that
    another such row leaves empty too; each gutter as its middle, left to right."""
    spans = [(a.x1, b.x0) for row in rows for a, b in zip(row, row[1:])
             if len(a.text) >= SHORT_CELL_CHARS and len(b.text) >= SHORT_CELL_CHARS and b.x0 > a.x1]
    found: list[tuple[float, float]] = []
    for k, (lo, hi) in enumerate(spans):
        shared = [(max(lo, o_lo), min(hi, o_hi)) for j, (o_lo, o_hi) in enumerate(spans) if j != k and min(hi, o_hi) > max(lo, o_lo)]
        if shared:
            lo, hi = max(s[0] for s in shared), min(s[1] for s in shared)
            if hi > lo and not any(f_lo < hi and lo < f_hi for f_lo, f_hi in found):
                found.append((lo, hi))
    return sorted((lo + hi) / 2 for lo, hi in found)


def tables(lines: list[VisualLine]) -> tuple[list[Block], list[VisualLine]]:
    """Rule 2: pick out table regions; return them and the lines that are not in one.

    Tables are looked for within each column of prose (see `gutters`): a line of the next
    column on a table row's baseline is no cell of it (it took the column's lines into the
    table, a hyphenated word's halves into two chunks)."""
    rows = _rows(lines)
    parts = gutters(rows)
    if not parts:
        return _tables_in(rows, lines)
    columns: list[list[VisualLine]] = [[] for _ in range(len(parts) + 1)]
    for line in lines:
        columns[sum(line.x0 > cut for cut in parts)].append(line)
    found: list[Block] = []
    rest: list[VisualLine] = []
    for column in columns:
        column_found, column_rest = _tables_in(_rows(column), column)
        found += column_found
        rest += column_rest
    return found, rest


def _tables_in(rows: list[list[VisualLine]], lines: list[VisualLine]) -> tuple[list[Block], list[VisualLine]]:
    """Table regions among `rows` (the rows of `lines`), and the lines not in one."""
    found: list[Block] = []
    in_table: set[int] = set()
    run: list[list[VisualLine]] = []

    def close() -> None:
        if len(run) >= 2:
            found.append(Block("table", rows=list(run)))
            in_table.update(id(cell) for row in run for cell in row)
        run.clear()

    for row in rows:
        if not _is_table_row(row):
            close()
            continue
        if run:
            prev = run[-1]
            gap = min(c.y0 for c in row) - max(c.y1 for c in prev)
            height = max(c.height for c in prev)
            if gap > TABLE_ROW_GAP * height or not _columns_align(prev, row):
                close()
        run.append(row)
    close()
    return found, [l for l in lines if id(l) not in in_table]


def body_size(lines: list[VisualLine]) -> float:
    """The median line size, each line weighing one per 20 characters (at least one): the
    size most of the page's text is set in."""
    return weighted_median([(l.size, max(1, len(l.text) // 20)) for l in lines])


def weighted_median(pairs: list[tuple[float, int]]) -> float:
    """`statistics.median` of every value repeated its weight times (0.0 for none), without
    building that list (a page's lines weigh thousands)."""
    pairs = sorted(pairs)
    n = sum(w for _, w in pairs)
    if n == 0:
        return 0.0
    # the values at positions (n - 1) // 2 and n // 2 of the repeated list: equal when n is odd
    wanted, found, seen = ((n - 1) // 2, n // 2), [], 0
    for value, weight in pairs:
        seen += weight
        while len(found) < 2 and wanted[len(found)] < seen:
            found.append(value)
        if len(found) == 2:
            break
    low, high = found
    return high if n % 2 else (low + high) / 2


def text_blocks(lines: list[VisualLine], body_size: float) -> list[Block]:
    """Rule 3 and 4: stack lines into paragraphs and list items; mark headings."""
    blocks: list[Block] = []
    open_blocks: list[Block] = []
    for line in sorted(lines, key=lambda l: (l.y0, l.x0)):
        target = None
        bullet = _BULLET.match(line.text) is not None
        if not bullet:
            size, bold = line.size, line.bold  # (read once: compared with every open block)
            for block in reversed(open_blocks):
                last = block.lines[-1]
                gap = line.y0 - last.y1
                height = max(line.height, last.height)
                if (
                    -0.3 * height <= gap <= PARAGRAPH_GAP * height
                    and _x_overlaps(line.x0, line.x1, last.x0, last.x1)
                    and abs(size - last.size) <= 0.15 * max(size, last.size)
                    and bold == last.bold
                ):
                    target = block
                    break
        if target is None:
            target = Block("list_item" if bullet else "text")
            blocks.append(target)
            open_blocks.append(target)
        target.lines.append(line)
        # a block stays open only while it can still grow: drop those far above this line
        open_blocks = [b for b in open_blocks if line.y0 - b.lines[-1].y1 <= 3 * line.height]
    for block in blocks:
        size = block.size
        n_chars = sum(len(l.text) for l in block.lines)
        big = body_size > 0 and size >= HEADING_RATIO * body_size and len(block.lines) <= 3
        bold_line = len(block.lines) == 1 and block.lines[0].bold and n_chars <= BOLD_HEADING_CHARS
        if block.kind == "text" and (big or (bold_line and not block.lines[0].text.endswith("."))):
            block.kind = "heading"
            block.level = 1 if body_size > 0 and size >= LEVEL_ONE_RATIO * body_size else 2 if big else 3
    return blocks


def _widest_gap(spans: list[tuple[float, float]]) -> tuple[float, float]:
    """The widest empty interval between projected spans: (width, cut position); width 0 if none."""
    best = (0.0, 0.0)
    ordered = sorted(spans)
    reach = ordered[0][1]
    for lo, hi in ordered[1:]:
        if lo > reach and lo - reach > best[0]:
            best = (lo - reach, (lo + reach) / 2)
        reach = max(reach, hi)
    return best


Box = tuple[float, float, float, float]


def reading_order(blocks: list[Block]) -> list[Block]:
    """Rule 5: recursive XY-cut at the widest empty gap, columns left to right, bands top down."""
    return [block for block, _ in _xy_cut([(b, b.box) for b in blocks])]


def _xy_cut(boxed: list[tuple[Block, Box]]) -> list[tuple[Block, Box]]:
    if len(boxed) < 2:
        return boxed
    v_width, v_cut = _widest_gap([(box[0], box[2]) for _, box in boxed])
    h_width, h_cut = _widest_gap([(box[1], box[3]) for _, box in boxed])
    if v_width <= 0 and h_width <= 0:  # overlapping blocks: plain top-down, left-right
        return sorted(boxed, key=lambda item: (item[1][1], item[1][0]))
    # the left column (or the top band) first: the blocks wholly before the cut
    side, cut = (2, v_cut) if v_width >= h_width else (3, h_cut)
    return _xy_cut([i for i in boxed if i[1][side] <= cut]) + _xy_cut([i for i in boxed if i[1][side] > cut])


def layout(runs: list[Run]) -> list[Block]:
    """Runs of one page → its blocks in reading order."""
    lines = visual_lines(runs)
    if not lines:
        return []
    found_tables, rest = tables(lines)
    blocks = text_blocks(rest, body_size(rest or lines)) + found_tables
    return reading_order(blocks)
