"""The `pdf` chunker: PDFium text runs → visual lines → blocks → size-bounded, boxed pieces.

It claims PDF pages whose text the PDF reader (`pdfium`) read from the text layer, and the
pages the readers left `failed` or `unreadable` (no OCR took them), which become one PNG
image piece of the whole page rendered at `INDX_CHUNK_DPI` (default 120). It declines
pages whose text came from OCR (they carry `lines`; the `lines` chunker cuts them) and
everything that is not a PDF. Bytes it cannot open (corrupt, or encrypted without a
configured password) are declined, never raised over.

Every text piece carries the union box of its lines, normalised to the displayed page (crop
box and `/Rotate` applied, top-left origin), and, when its runs form one stretch of the
reader's page text that no other piece reaches into, the character offsets of that stretch.

Size policy (`with_options`): `max_characters` (hard limit, default 1000) and
`new_after_n_chars` (soft limit, default 800). A heading starts a new piece; blocks are only
combined when they stack vertically (so a piece never spans two columns); a table is its
own `table` piece, split by rows with the header row repeated; a block over the limit is
split between lines, and a line over the limit between words.
"""

import io
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from indx_assets.chunkers.pdf_layout import Block, Run, VisualLine, layout
from indx_assets.port import BBox, ChunkPiece, PageChunks, PageOutput

if TYPE_CHECKING:
    import pypdfium2

MEDIA_TYPE = "application/pdf"
PDF_READER = "pdfium"
DPI_ENV = "INDX_CHUNK_DPI"
DEFAULT_DPI = 120
#: A run's rects further apart than this many line heights are separate runs (gutters, cells).
RUN_GAP = 1.2
_LINE = re.compile(r"[^\r\n]+")


def chunk_dpi() -> int:
    """`INDX_CHUNK_DPI` (default 120): the resolution of image pieces for pages without text."""
    raw = os.environ.get(DPI_ENV, "").strip()
    try:
        dpi = int(raw) if raw else DEFAULT_DPI
    except ValueError:
        raise ValueError(f"{DPI_ENV} must be a whole number of dots per inch, got {raw!r}") from None
    if not 10 <= dpi <= 1200:
        raise ValueError(f"{DPI_ENV} must lie in [10, 1200], got {dpi}")
    return dpi


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

    def to_display(self, l: float, b: float, r: float, t: float) -> tuple[float, float, float, float] | None:
        """A user-space rectangle in displayed points (top-left origin), clipped; None if off the page."""
        u0, u1 = (l - self.left) / self.width, (r - self.left) / self.width
        v0, v1 = (self.bottom + self.height - t) / self.height, (self.bottom + self.height - b) / self.height
        if self.rotation == 90:
            x0, x1, y0, y1 = 1 - v1, 1 - v0, u0, u1
        elif self.rotation == 180:
            x0, x1, y0, y1 = 1 - u1, 1 - u0, 1 - v1, 1 - v0
        elif self.rotation == 270:
            x0, x1, y0, y1 = v0, v1, 1 - u1, 1 - u0
        else:
            x0, x1, y0, y1 = u0, u1, v0, v1
        x0, y0, x1, y1 = max(x0, 0.0), max(y0, 0.0), min(x1, 1.0), min(y1, 1.0)
        if x1 <= x0 or y1 <= y0:
            return None
        w, h = self.display_size
        return x0 * w, y0 * h, x1 * w, y1 * h


def _breaks(prev: tuple[float, float, float, float], cur: tuple[float, float, float, float]) -> bool:
    """Whether `cur` (next in character order) starts a new run after `prev`: it leaves the
    row, jumps back left, or sits more than `RUN_GAP` line heights to the right."""
    height = max(prev[3] - prev[1], cur[3] - cur[1], 1e-3)
    same_row = min(prev[3], cur[3]) - max(prev[1], cur[1]) > 0
    return not same_row or cur[0] - prev[2] > RUN_GAP * height or cur[2] < prev[0]


def _gap_groups(rects: list[tuple[float, float, float, float]]) -> list[list[int]]:
    """Split consecutive rects (char order, displayed points) where they break (see `_breaks`)."""
    groups = [[0]]
    for k in range(1, len(rects)):
        if _breaks(rects[k - 1], rects[k]):
            groups.append([k])
        else:
            groups[-1].append(k)
    return groups


def _loose_box(textpage: "pypdfium2.PdfTextPage", index: int, frame: PageFrame, rect: Any) -> tuple[float, float, float, float] | None:
    """A glyph's box from the font's ascent to its descent, over its advance (displayed points).

    Loose boxes give every glyph of a line the same height, so line spacing can be compared
    across lines whatever letters they hold (tight boxes of `ACE` and `gypsy` differ).
    """
    import pypdfium2.raw as raw

    if not raw.FPDFText_GetLooseCharBox(textpage, index, rect):
        return None
    return frame.to_display(rect.left, rect.bottom, rect.right, rect.top)


def _char_runs(textpage: "pypdfium2.PdfTextPage", text: str, start: int, end: int, frame: PageFrame) -> list[Run]:
    """Runs of one PDFium line cut glyph by glyph (used only for lines with a gap inside)."""
    import pypdfium2.raw as raw

    rect = raw.FS_RECTF()
    runs: list[Run] = []
    cur: list[tuple[int, tuple[float, float, float, float]]] = []

    def close() -> None:
        if cur:
            s, e = cur[0][0], cur[-1][0] + 1
            boxes = [box for _, box in cur]
            runs.append(Run(text[s:e], min(x[0] for x in boxes), min(x[1] for x in boxes), max(x[2] for x in boxes), max(x[3] for x in boxes), s, e))
            cur.clear()

    for i in range(start, end):
        if text[i].isspace():
            continue
        box = _loose_box(textpage, i, frame, rect)
        if box is None:
            continue
        if cur and _breaks(cur[-1][1], box):
            close()
        cur.append((i, box))
    close()
    return runs


def page_runs(page: "pypdfium2.PdfPage", textpage: "pypdfium2.PdfTextPage", text: str) -> list[Run]:
    """The text runs of a page: PDFium's lines, cut where their glyphs jump apart, with boxes.

    PDFium's rectangles per line are cheap (a few calls per line); only a line whose
    rectangles show a gutter-sized gap is measured glyph by glyph to find where to cut.
    """
    import pypdfium2.raw as raw

    frame = PageFrame.of(page)
    rect = raw.FS_RECTF()
    runs: list[Run] = []
    for match in _LINE.finditer(text):
        start, end = match.span()
        if not text[start:end].strip():
            continue
        count = textpage.count_rects(start, end - start)
        rects = []
        for k in range(count):
            box = frame.to_display(*textpage.get_rect(k))
            if box is not None:
                rects.append(box)
        if not rects:
            continue  # text outside the crop box is not on the displayed page
        if len(_gap_groups(rects)) == 1:
            line_runs = [Run(text[start:end], min(x[0] for x in rects), min(x[1] for x in rects), max(x[2] for x in rects), max(x[3] for x in rects), start, end)]
        else:
            line_runs = _char_runs(textpage, text, start, end, frame)
        for run in line_runs:
            first = next((i for i in range(run.start, run.end) if not text[i].isspace()), run.start)
            loose = _loose_box(textpage, first, frame, rect)
            if loose is not None:  # the font's full height, whatever glyphs the run holds
                run.y0, run.y1 = min(run.y0, loose[1]), max(run.y1, loose[3])
            run.size = run.y1 - run.y0
            run.bold = raw.FPDFText_GetFontWeight(textpage, first) >= 600
            # trim the run's text (and offsets) to its visible characters
            lead = len(run.text) - len(run.text.lstrip())
            trail = len(run.text) - len(run.text.rstrip())
            run.start, run.end = run.start + lead, run.end - trail
            run.text = run.text.strip().replace("\x02", "-").replace("\ufffe", "-")
            runs.append(run)
    return runs


@dataclass
class _Draft:
    """A piece being assembled: its text units and their boxes and text spans."""

    kind: str  # "text" or "table"
    units: list[str] = field(default_factory=list)
    boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    last_block: tuple[float, float, float, float] | None = None
    section: str | None = None
    chars: int = 0

    def add(self, text: str, box: tuple[float, float, float, float], spans: Sequence[tuple[int, int]], sep: str = "\n") -> None:
        self.chars += len(text) + (len(sep) if self.units else 0)
        self.units.append(text if not self.units else sep + text)
        self.boxes.append(box)
        self.spans.extend(spans)

    @property
    def text(self) -> str:
        return "".join(self.units)


def _spans(lines: Sequence[VisualLine]) -> list[tuple[int, int]]:
    return [(r.start, r.end) for line in lines for r in line.runs]


def _box(lines: Sequence[VisualLine]) -> tuple[float, float, float, float]:
    return (min(l.x0 for l in lines), min(l.y0 for l in lines), max(l.x1 for l in lines), max(l.y1 for l in lines))


def _split_words(text: str, limit: int) -> list[str]:
    """Cut an over-long line between words (between characters if a word alone is too long)."""
    parts: list[str] = []
    current = ""
    for word in text.split(" "):
        while len(word) > limit:
            if current:
                parts.append(current)
                current = ""
            parts.append(word[:limit])
            word = word[limit:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) > limit:
            parts.append(current)
            current = word
        else:
            current = candidate
    if current:
        parts.append(current)
    return [p for p in parts if p]


def _stacks_under(box: tuple[float, float, float, float], above: tuple[float, float, float, float] | None) -> bool:
    """Whether `box` sits below `above` in the same column (their x-ranges overlap)."""
    return above is not None and min(box[2], above[2]) > max(box[0], above[0]) and box[1] >= above[1]


def cut_blocks(blocks: Sequence[Block], max_characters: int, new_after_n_chars: int) -> list[_Draft]:
    """Blocks in reading order → drafts no longer than `max_characters` (see module docstring)."""
    drafts: list[_Draft] = []
    current: _Draft | None = None
    section: str | None = None

    def flush() -> None:
        nonlocal current
        if current is not None and current.units:
            drafts.append(current)
        current = None

    for block in blocks:
        box = block.box
        if block.kind == "table":
            flush()
            header, header_cells = block.row_texts()[0], block.rows[0]
            draft = _Draft("table", section=section)
            for i, (row_text, cells) in enumerate(zip(block.row_texts(), block.rows)):
                if draft.units and draft.chars + 1 + len(row_text) > max_characters:
                    drafts.append(draft)
                    draft = _Draft("table", section=section)
                    if len(header) + 1 + len(row_text) <= max_characters and i > 0:
                        draft.add(header, _box(header_cells), [])  # repeated header: no new span
                for part in _split_words(row_text, max_characters) if len(row_text) > max_characters else [row_text]:
                    if draft.units and draft.chars + 1 + len(part) > max_characters:
                        drafts.append(draft)
                        draft = _Draft("table", section=section)
                    draft.add(part, _box(cells), _spans(cells))
            drafts.append(draft)
            continue
        if block.kind == "heading":
            flush()
            section = " ".join(block.row_texts())
        text = block.text
        fits = current is not None and current.chars + 2 + len(text) <= max_characters
        joinable = (
            current is not None
            and current.kind == "text"
            and current.chars < new_after_n_chars
            and (_stacks_under(box, current.last_block) or current.last_block is None)
        )
        if not (fits and joinable):
            flush()
        if current is None:
            current = _Draft("text", section=section)
        if len(text) <= max_characters - (current.chars + 2 if current.units else 0):
            current.add(text, box, _spans(block.lines), sep="\n\n")
        else:
            # too long for what is left: cut between lines (between words for a giant line)
            first = True
            for line in block.lines:
                for part in _split_words(line.text, max_characters) if len(line.text) > max_characters else [line.text]:
                    sep = "\n\n" if first else "\n"
                    if current.units and current.chars + len(sep) + len(part) > max_characters:
                        flush()
                        current = _Draft("text", section=section)
                    current.add(part, (line.x0, line.y0, line.x1, line.y1), _spans([line]), sep=sep)
                    first = False
        current.last_block = box
    flush()
    return drafts


def _offsets(drafts: Sequence[_Draft]) -> list[tuple[int, int] | None]:
    """Each draft's [min, max) span in the page text, kept only if no other draft reaches into it."""
    extents = [(min(s for s, _ in d.spans), max(e for _, e in d.spans)) if d.spans else None for d in drafts]
    owner: list[tuple[int, int, int]] = sorted((s, e, k) for k, d in enumerate(drafts) for s, e in d.spans)
    result: list[tuple[int, int] | None] = []
    for k, extent in enumerate(extents):
        if extent is None or drafts[k].kind == "table" and len(drafts[k].spans) < len(drafts[k].units):
            result.append(None)
            continue
        lo, hi = extent
        intruder = any(other != k and s < hi and e > lo for s, e, other in owner)
        result.append(None if intruder else extent)
    return result


def _normalise(box: tuple[float, float, float, float], size: tuple[float, float]) -> BBox | None:
    w, h = size
    x0, y0, x1, y1 = max(box[0] / w, 0.0), max(box[1] / h, 0.0), min(box[2] / w, 1.0), min(box[3] / h, 1.0)
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def text_pieces(
    page: "pypdfium2.PdfPage", output: PageOutput, *, max_characters: int = 1000, new_after_n_chars: int = 800
) -> tuple[ChunkPiece, ...]:
    """Cut one page's text layer into boxed pieces in reading order."""
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        runs = page_runs(page, textpage, text)
    finally:
        textpage.close()
    drafts = cut_blocks(layout(runs), max_characters, new_after_n_chars)
    size = PageFrame.of(page).display_size
    same_text = text == output.text  # offsets point into the reader's text only if it is this text
    pieces = []
    for draft, span in zip(drafts, _offsets(drafts)):
        bbox = _normalise(
            (min(b[0] for b in draft.boxes), min(b[1] for b in draft.boxes), max(b[2] for b in draft.boxes), max(b[3] for b in draft.boxes)),
            size,
        )
        body = draft.text.strip()
        if not body or bbox is None:
            continue
        start, end = span if (span and same_text) else (None, None)
        metadata: dict[str, Any] = {"section_title": draft.section} if draft.section else {}
        pieces.append(
            ChunkPiece(
                text=body,
                bbox=bbox,
                chunk_type="table" if draft.kind == "table" else "content",
                start=start,
                end=end,
                metadata=metadata,
            )
        )
    return tuple(pieces)


def render_png(page: "pypdfium2.PdfPage", dpi: int) -> bytes:
    """The displayed page (crop box, rotation) as a PNG at `dpi`."""
    bitmap = page.render(scale=dpi / 72)
    try:
        image = bitmap.to_pil()
    finally:
        bitmap.close()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def _is_ours(output: PageOutput) -> bool:
    return output.reader == PDF_READER and output.lines is None


class PdfChunker:
    builtin = True

    def __init__(self, max_characters: int = 1000, new_after_n_chars: int | None = None, dpi: int | None = None):
        if max_characters <= 0:
            raise ValueError(f"max_characters must be > 0, got {max_characters}")
        soft = new_after_n_chars if new_after_n_chars is not None else min(800, max_characters)
        if not 0 <= soft <= max_characters:
            raise ValueError(f"new_after_n_chars must lie in [0, max_characters], got {soft}")
        self.max_characters = max_characters
        self.new_after_n_chars = soft
        self.dpi = dpi

    def _pages(self, content: bytes, outputs: tuple[PageOutput, ...]) -> Iterator[PageChunks]:
        from indx_assets.readers.pdf import PdfOpenError, open_pdf, pdf_passwords

        wanted = [o for o in outputs if _is_ours(o) and (o.status in ("failed", "unreadable") or (o.status == "ok" and o.text.strip()))]
        if not wanted:
            return
        try:
            document = open_pdf(content, pdf_passwords())
        except PdfOpenError:
            return  # the reader already said why; nothing here to cut
        dpi = self.dpi or chunk_dpi()
        try:
            count = len(document)
            for output in wanted:
                if output.page > count:
                    continue
                try:
                    page = document[output.page - 1]
                except Exception:
                    continue  # a page PDFium cannot load cannot be rasterised either: no chunk
                try:
                    if output.status == "ok":
                        pieces = text_pieces(page, output, max_characters=self.max_characters, new_after_n_chars=self.new_after_n_chars)
                    else:
                        try:
                            pieces = (ChunkPiece(image=render_png(page, dpi), bbox=(0.0, 0.0, 1.0, 1.0), metadata={"dpi": dpi}),)
                        except Exception:
                            pieces = ()  # could not rasterise: no chunk, and nothing fails
                finally:
                    page.close()
                if pieces:
                    yield PageChunks(output.page, pieces)
        finally:
            document.close()

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
        if media_type != MEDIA_TYPE:
            return ()
        return tuple(self._pages(content, outputs))


class PdfProvider:
    """Entry point `pdf`; options: `max_characters`, `new_after_n_chars`, `dpi`."""

    def __init__(self, **options: Any):
        self.options = options
        PdfChunker(**options)  # refuse bad options when the chain is configured, not at chunk time

    def with_options(self, **options: Any) -> "PdfProvider":
        return PdfProvider(**{**self.options, **options})

    def chunkers(self) -> tuple[PdfChunker, ...]:
        return (PdfChunker(**self.options),)
