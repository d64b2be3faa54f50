"""Text runs with their boxes from a loaded PDFium page: the geometry the `pdf` chunker lays out.

The PDF reader calls `page_runs` while it has each page loaded (it keeps the runs beside the
page text, see `indx_assets.pipeline.readers.pdf.load_pdf`), so a page is loaded once for reading and
chunking; the chunker calls it itself only for pages the reader did not keep runs for.

Boxes are in displayed points: crop box and `/Rotate` applied, top-left origin (`PageFrame`).

Offsets: a run's `start`/`end` index the page text (`get_text_range()`, the reader's text),
while PDFium's box calls take indices into its own character list. The two differ on pages
where PDFium leaves characters of its list out of the text (control glyphs such as U+0003 in
a table's numbers): every index after such a character is shifted, and boxes read with text
offsets belong to the characters beside them (a run "Sa" | "ni" for "Sanni", "4.0910" for
"24.0910"). `CharIndex` translates text offsets to character indices.
"""

import re
from dataclasses import dataclass
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pypdfium2

#: A run's rects further apart than this many line heights are separate runs (gutters, cells).
RUN_GAP = 1.2
_LINE = re.compile(r"[^\r\n]+")
_VISIBLE = re.compile(r"\S")
_SOFT_HYPHENS = str.maketrans({"\x02": "\u00ad", "\ufffe": "\u00ad"})


@dataclass(slots=True)
class Run:
    """A piece of text PDFium drew on one baseline, with its box and its span in the page text."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    start: int
    end: int
    size: float = 0.0
    bold: bool = False
    #: the page-text offset of the next visible character after the run (-1: not known)
    next_start: int = -1
    #: drawn outside the displayed page (its box lies beyond the page's edges)
    hidden: bool = False

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def spaced_before(self, run: "Run") -> bool | None:
        """Whether the page text puts whitespace between this run and `run`, when `run` is what
        the page text reads next (None when it is not: the text does not say)."""
        return self.next_start > self.end if self.next_start == run.start else None


def _shown(span: str) -> str:
    """A run's text as shown, one character per character of the page text: PDFium's U+0002
    and U+FFFE (its soft hyphen, and a glyph it cannot map, such as an "ffi" ligature) are a
    hyphen where they end the run (the hyphen printed at a line's end) and a soft hyphen
    (U+00AD, not part of any word) elsewhere; "di\ufffeculties" is not "di-culties"."""
    shown = span.strip()
    if "\x02" not in shown and "\ufffe" not in shown:  # most runs: nothing to rewrite
        return shown
    shown = shown.translate(_SOFT_HYPHENS)
    return shown[:-1] + "-" if shown.endswith("\u00ad") else shown


@dataclass(frozen=True)
class PageFrame:
    """Maps PDF user-space rectangles to the displayed page (crop box, then clockwise rotation)."""

    left: float
    bottom: float
    width: float
    height: float
    rotation: int  # 0, 90, 180 or 270, clockwise as displayed

    @classmethod
    def of(cls, page: "pypdfium2.PdfPage") -> "PageFrame":
        left, bottom, right, top = page.get_cropbox()
        return cls(left, bottom, right - left, top - bottom, page.get_rotation() % 360)

    @property
    def display_size(self) -> tuple[float, float]:
        return (self.height, self.width) if self.rotation in (90, 270) else (self.width, self.height)

    def to_display(self, l: float, b: float, r: float, t: float, clip: bool = True) -> tuple[float, float, float, float] | None:
        """A user-space rectangle in displayed points (top-left origin), clipped to the page
        (None if off it) unless not `clip`."""
        # (attributes read once: this runs for every rect of every page)
        left, width, height, rotation = self.left, self.width, self.height, self.rotation
        top = self.bottom + height
        u0, u1 = (l - left) / width, (r - left) / width
        v0, v1 = (top - t) / height, (top - b) / height
        if rotation == 0:
            x0, x1, y0, y1 = u0, u1, v0, v1
        elif rotation == 90:
            x0, x1, y0, y1 = 1 - v1, 1 - v0, u0, u1
        elif rotation == 180:
            x0, x1, y0, y1 = 1 - u1, 1 - u0, 1 - v1, 1 - v0
        elif rotation == 270:
            x0, x1, y0, y1 = v0, v1, 1 - u1, 1 - u0
        else:
            x0, x1, y0, y1 = u0, u1, v0, v1
        if clip:  # conditionals, not max/min: this runs for every rect of every page
            x0 = 0.0 if x0 < 0.0 else x0
            y0 = 0.0 if y0 < 0.0 else y0
            x1 = 1.0 if x1 > 1.0 else x1
            y1 = 1.0 if y1 > 1.0 else y1
        if x1 <= x0 or y1 <= y0:
            return None
        if rotation == 90 or rotation == 270:
            return x0 * height, y0 * width, x1 * height, y1 * width
        return x0 * width, y0 * height, x1 * width, y1 * height


def _breaks(prev: tuple[float, float, float, float], cur: tuple[float, float, float, float], glyphs: bool = False) -> bool:
    """Whether `cur` (next in character order) starts a new run after `prev`: it leaves the
    row, jumps back left, or sits more than `RUN_GAP` line heights to the right. Between two
    glyphs (`glyphs`), one straight above or below the other in the same column goes on:
    text set vertically, which PDFium reads as one line (a spine's "UNDERSTANDING" is one
    word, not thirteen). (Not between PDFium's rectangles: a line that wraps has its second
    rectangle under the first.)"""
    height = max(prev[3] - prev[1], cur[3] - cur[1], 1e-3)
    same_row = min(prev[3], cur[3]) - max(prev[1], cur[1]) > 0
    if not same_row:
        if not glyphs:
            return True
        width = min(prev[2] - prev[0], cur[2] - cur[0])
        shared = min(prev[2], cur[2]) - max(prev[0], cur[0])
        near = min(abs(cur[1] - prev[3]), abs(prev[1] - cur[3])) < 0.5 * width
        return not (width > 0 and shared > 0.8 * width and near)
    return cur[0] - prev[2] > RUN_GAP * height or cur[2] < prev[0]


def _gap_groups(rects: list[tuple[float, float, float, float]]) -> list[list[int]]:
    """Split consecutive rects (char order, displayed points) where they break (see `_breaks`)."""
    groups = [[0]]
    for k in range(1, len(rects)):
        if _breaks(rects[k - 1], rects[k]):
            groups.append([k])
        else:
            groups[-1].append(k)
    return groups


def _raw() -> Any:
    """`pypdfium2.raw`, imported on first use (module scope stays cheap) and then a lookup."""
    import pypdfium2.raw as raw

    return raw


def _loose_boxes(textpage: "pypdfium2.PdfTextPage", frame: PageFrame) -> Callable[..., tuple[float, float, float, float] | None]:
    """`box(index, clip=True)`: a glyph's box from the font's ascent to its descent, over its
    advance (displayed points; None where PDFium has none, or off the page when `clip`).

    Loose boxes give every glyph of a line the same height, so line spacing can be compared
    across lines whatever letters they hold (tight boxes of `ACE` and `gypsy` differ).
    (A closure over one reused out-parameter: it runs for every run, and every glyph of a
    line with a gap inside.)
    """
    raw = _raw()
    rect = raw.FS_RECTF()
    get, to_display = raw.FPDFText_GetLooseCharBox, frame.to_display

    def box(index: int, clip: bool = True) -> tuple[float, float, float, float] | None:
        if not get(textpage, index, rect):
            return None
        return to_display(rect.left, rect.bottom, rect.right, rect.top, clip)

    return box


class CharIndex:
    """Page-text offsets to PDFium character indices, for one text page.

    Most pages map one to one: PDFium's text index of the last character is the last character
    index, and the mapping is strictly increasing, so every offset maps to itself and nothing
    more is asked of PDFium. Other pages get the full table (one call per character).
    """

    __slots__ = ("table",)

    def __init__(self, textpage: "pypdfium2.PdfTextPage", text: str):
        raw = _raw()
        n = len(text)
        count = raw.FPDFText_CountChars(textpage)
        identity = n == 0 or (count == n and raw.FPDFText_GetCharIndexFromTextIndex(textpage, n - 1) == n - 1)
        to_char = raw.FPDFText_GetCharIndexFromTextIndex
        self.table: list[int] | None = None if identity else [to_char(textpage, i) for i in range(n)]

    def __call__(self, offset: int) -> int:
        """The character index of text offset `offset` (-1 for a character PDFium's list lacks)."""
        return offset if self.table is None else self.table[offset]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The character index of `start` and the count of characters up to text offset `end`
        (text characters PDFium's list lacks skipped at either end; a count of 0 if all are)."""
        if self.table is None:
            return start, end - start
        held = [c for c in self.table[start:end] if c >= 0]
        return (held[0], held[-1] - held[0] + 1) if held else (0, 0)


def _char_runs(textpage: "pypdfium2.PdfTextPage", text: str, start: int, end: int, frame: PageFrame, index: CharIndex) -> list[Run]:
    """Runs of one PDFium line cut glyph by glyph (used only for lines with a gap inside);
    glyphs drawn off the displayed page make runs of their own, `hidden`."""
    loose_box = _loose_boxes(textpage, frame)
    table = index.table
    runs: list[Run] = []
    cur: list[tuple[int, tuple[float, float, float, float]]] = []
    off_page = False

    def close() -> None:
        if cur:
            s, e = cur[0][0], cur[-1][0] + 1
            boxes = [box for _, box in cur]
            runs.append(Run(text[s:e], min(x[0] for x in boxes), min(x[1] for x in boxes), max(x[2] for x in boxes), max(x[3] for x in boxes), s, e, hidden=off_page))
            cur.clear()

    for match in _VISIBLE.finditer(text, start, end):  # (`\S`: exactly what `isspace()` calls no space)
        i = match.start()
        char = i if table is None else table[i]
        if char < 0:
            continue
        box = loose_box(char)
        hidden = box is None
        if hidden:
            box = loose_box(char, clip=False)
            if box is None:
                continue
        if cur and (hidden != off_page or _breaks(cur[-1][1], box, glyphs=True)):
            close()
        off_page = hidden
        cur.append((i, box))
    close()
    return runs


def page_runs(page: "pypdfium2.PdfPage", textpage: "pypdfium2.PdfTextPage", text: str) -> list[Run]:
    """The text runs of a page: PDFium's lines, cut where their glyphs jump apart, with boxes.

    PDFium's rectangles per line are cheap (a few calls per line); only a line whose
    rectangles show a gutter-sized gap is measured glyph by glyph to find where to cut.
    """
    import ctypes

    from pypdfium2 import PdfiumError

    raw = _raw()
    frame = PageFrame.of(page)
    index = CharIndex(textpage, text)
    to_display = frame.to_display
    # PDFium's calls straight, with reused out-parameters: the helpers allocate per rectangle
    count_rects, get_rect = raw.FPDFText_CountRects, raw.FPDFText_GetRect
    left, top, right, bottom = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    loose_box, get_weight = _loose_boxes(textpage, frame), raw.FPDFText_GetFontWeight
    table = index.table  # None: text offsets are character indices (most pages)
    runs: list[Run] = []
    for match in _LINE.finditer(text):
        start, end = match.span()
        line = match.group()
        if not line.strip():
            continue
        first_char, char_count = (start, end - start) if table is None else index.span(start, end)
        count = count_rects(textpage, first_char, char_count)
        if count < 0:
            raise PdfiumError("Failed to count rectangles.")
        rects = []
        for k in range(count):
            if not get_rect(textpage, k, left, top, right, bottom):
                raise PdfiumError("Failed to get rectangle.")
            box = to_display(left.value, bottom.value, right.value, top.value)
            if box is not None:
                rects.append(box)
        if not rects:
            # drawn outside the crop box (the facing page of a spread, a slug): not on the
            # displayed page, yet in its text layer, so kept as one hidden run per line
            hidden = [to_display(left.value, bottom.value, right.value, top.value, clip=False)
                      for k in range(count) if get_rect(textpage, k, left, top, right, bottom)]
            boxes = [b for b in hidden if b is not None]
            if boxes:
                xs0, ys0, xs1, ys1 = zip(*boxes)
                lead, trail = len(line) - len(line.lstrip()), len(line) - len(line.rstrip())
                runs.append(Run(_shown(line), min(xs0), min(ys0), max(xs1), max(ys1),
                                start + lead, end - trail, size=max(ys1) - min(ys0), hidden=True))
            continue
        if len(rects) == 1:  # most lines: one rectangle, the run's box as it is
            line_runs = [Run(line, *rects[0], start, end)]
        elif len(_gap_groups(rects)) == 1:
            xs0, ys0, xs1, ys1 = zip(*rects)
            line_runs = [Run(line, min(xs0), min(ys0), max(xs1), max(ys1), start, end)]
        else:
            line_runs = _char_runs(textpage, text, start, end, frame, index)
        for run in line_runs:
            span = run.text  # (a run's text is its page-text slice until trimmed below)
            lead = len(span) - len(span.lstrip())  # (lstrip strips exactly what isspace() calls space)
            at = run.start + lead if lead < len(span) else run.start
            first = at if table is None else table[at]
            loose = loose_box(first)
            if loose is not None:  # the font's full height, whatever glyphs the run holds
                run.y0, run.y1 = min(run.y0, loose[1]), max(run.y1, loose[3])
            run.size = run.y1 - run.y0
            run.bold = get_weight(textpage, first) >= 600
            # trim the run's text (and offsets) to its visible characters
            run.start, run.end = run.start + lead, run.end - (len(span) - len(span.rstrip()))
            run.text = _shown(span)
            runs.append(run)
    for run in runs:  # where the page text goes on after each run, to space runs as it does
        following = _VISIBLE.search(text, run.end)
        run.next_start = following.start() if following else -1
    return runs


@dataclass(frozen=True, slots=True)
class PageGeometry:
    """What the chunker lays out for one text page: its runs and its displayed size (points).

    The runs are shared (the reader keeps them for every chunking of the document), so
    layout code reads them and never changes them.
    """

    runs: tuple[Run, ...]
    display_size: tuple[float, float]


def page_geometry(page: "pypdfium2.PdfPage", textpage: "pypdfium2.PdfTextPage", text: str) -> PageGeometry:
    """The runs of a loaded page whose text layer reads `text`, and its displayed size."""
    return PageGeometry(tuple(page_runs(page, textpage, text)), PageFrame.of(page).display_size)
