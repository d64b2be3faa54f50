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

Sizes and sections are the structure-aware chunking library's (`indx_assets.chunking`, the
same `ChunkerSettings` as the `markdown`, `html` and `text` chunkers; `pdf_elements` maps the
page's blocks to its elements and its chunks back to lines): by default `by_title` with at
most 254 MiniLM tokens and a soft maximum of 160; every heading starts a section and each
piece names its section (`section_title`, `section_path`, ...); small sections are combined;
a table is its own `table` piece, split by rows with the header row repeated; blocks are
only combined within one flow (blocks stacked in one column), so no piece spans two columns.
Options (`with_options`): the chunking options of `ChunkerSettings` (e.g. `max_tokens`, or
`max_characters`/`new_after_n_chars` for character limits) and `dpi`.
"""

import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from indx_assets.chunkers.pdf_elements import SectionTrail, boxed, cut_page, page_layout, reader_offsets
from indx_assets.chunkers.pdf_layout import Run, layout
from indx_assets.chunking.pieces import ChunkerSettings
from indx_assets.port import ChunkPiece, PageChunks, PageOutput

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


def text_pieces(page: "pypdfium2.PdfPage", output: PageOutput, settings: ChunkerSettings, trail: SectionTrail | None = None) -> tuple[ChunkPiece, ...]:
    """Cut one page's text layer into boxed pieces in reading order (see `pdf_elements`).

    `trail` carries the open sections from the pages before (a fresh one when None).
    """
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        runs = page_runs(page, textpage, text)
    finally:
        textpage.close()
    blocks = layout(runs)
    if not blocks:
        return ()
    size = PageFrame.of(page).display_size
    placed = page_layout(blocks, output.page, size)
    cuts = cut_page(placed, settings, trail or SectionTrail())
    same_text = text == output.text  # offsets point into the reader's text only if it is this text
    pieces = []
    for cut, span in zip(cuts, reader_offsets(cuts)):
        bbox = boxed(cut, size)
        if bbox is None or not (cut.piece.text or "").strip():
            continue
        start, end = span if (span and same_text) else (None, None)
        pieces.append(replace(cut.piece, bbox=bbox, bbox_reason=None, start=start, end=end))
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
    """The `pdf` chunker; `options` are the shared `ChunkerSettings` (sizes, strategy, ...)."""

    builtin = True

    def __init__(self, settings: ChunkerSettings | None = None, *, dpi: int | None = None, **options: Any):
        if settings is not None and options:
            raise ValueError("pass either settings or chunking options, not both")
        self.settings = settings or ChunkerSettings.from_options(**options)
        if dpi is not None and (isinstance(dpi, bool) or not isinstance(dpi, int) or not 10 <= dpi <= 1200):
            raise ValueError(f"dpi must be a whole number in [10, 1200], got {dpi!r}")
        self.dpi = dpi

    @property
    def max_characters(self) -> int | None:
        return self.settings.max_characters

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
        trail = SectionTrail()  # sections run on from page to page
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
                        pieces = text_pieces(page, output, self.settings, trail)
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
    """Entry point `pdf`; options: the shared chunking options (`ChunkerSettings`: `max_tokens`,
    `new_after_n_tokens`, `max_characters`, `new_after_n_chars`, `strategy`, ...) and `dpi`."""

    def __init__(self, **options: Any):
        self.options = options
        PdfChunker(**options)  # refuse bad options when the chain is configured, not at chunk time

    def with_options(self, **options: Any) -> "PdfProvider":
        return PdfProvider(**{**self.options, **options})

    def chunkers(self) -> tuple[PdfChunker, ...]:
        return (PdfChunker(**self.options),)
