"""The `pdf` chunker: PDFium text runs → visual lines → blocks → size-bounded, boxed pieces.

It claims PDF pages whose text the PDF reader (`pdfium`) read from the text layer, and the
pages the readers left `failed` or `unreadable` (no OCR took them), which become one PNG
image piece of the whole page rendered at `INDX_CHUNK_DPI` (default 120). It declines
pages whose text came from OCR (they carry `lines`; the `lines` chunker cuts them) and
everything that is not a PDF. Bytes it cannot open (corrupt, or encrypted without a
configured password) are declined, never raised over.

The runs come from the reader's own pass, handed over as the read's parsed form
(`readers.pdf.PdfParse`, `reads_parsed`): each page is loaded once for reading and chunking.
Only pages the reader kept no runs for (beyond `KEPT_GEOMETRY_PAGES`) and pages to render are
loaded again here; without a parsed form (pages rebuilt from storage, `indx chunk` of stored
pages) the chunker reads the document itself, once.

Page furniture (running headers and footers, page numbers; see `pdf_furniture`, learned from
the pages the reader kept runs for) is left out of the layout: each piece names its page's
in `page_header` / `page_footer` instead of ending with the page number.

Every text piece carries the union box of its lines, normalised to the displayed page (crop
box and `/Rotate` applied, top-left origin), and, when its runs form one stretch of the
reader's page text that no other piece reaches into, the character offsets of that stretch.
Text the page's text layer holds but draws beyond the displayed page (the facing page of a
spread, clipped by the crop box) is laid out on its own after the page's pieces: its pieces
carry `bbox_reason` `hidden` and `off_page: true`, so every word of the page text is in a
chunk while no box points outside the page.

Sizes and sections are the structure-aware chunking library's (`indx_assets.pipeline.chunking`, the
same `ChunkerSettings` as the `markdown`, `html` and `text` chunkers; `pdf_elements` maps the
page's blocks to its elements and its chunks back to lines): by default `by_title` with at
most 254 MiniLM tokens and a soft maximum of 150; every heading starts a section and each
piece names its section (`section_title`, `section_path`, ...); small sections are combined;
a table is its own `table` piece, split by rows with the header row repeated; blocks are
only combined within one flow (blocks stacked in one column), so no piece spans two columns.
Options (`with_options`): the chunking options of `ChunkerSettings` (e.g. `max_tokens`, or
`max_characters`/`new_after_n_chars` for character limits) and `dpi`.
"""

import io
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from indx_interfaces import ChunkPiece, PageChunks, PageOutput

from indx_assets.pipeline.bounds import OVER_OCR_BOUND
from indx_assets.pipeline.chunkers.base import ChunkerSettings
from indx_assets.pipeline.chunkers.pdf_elements import Cut, SectionTrail, boxed, cut_page, page_layout, reader_offsets
from indx_assets.pipeline.chunkers.pdf_furniture import Furniture
from indx_assets.pipeline.chunkers.pdf_layout import layout
from indx_assets.pipeline.readers.pdf_runs import PageGeometry, Run, page_geometry

if TYPE_CHECKING:
    import pypdfium2

MEDIA_TYPE = "application/pdf"
PDF_READER = "pdfium"
DPI_ENV = "INDX_CHUNK_DPI"
DEFAULT_DPI = 120


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


def text_pieces(geometry: PageGeometry, text: str, output: PageOutput, settings: ChunkerSettings,
                trail: SectionTrail | None = None, furniture: Furniture | None = None) -> tuple[ChunkPiece, ...]:
    """Cut one page's runs (`geometry`, measured on the page text `text`) into boxed pieces in
    reading order (see `pdf_elements`), its furniture left out (see `pdf_furniture`).

    `trail` carries the open sections from the pages before (a fresh one when None);
    `furniture` is what the document's pages repeat (page numbers alone when None).
    """
    runs, named = (furniture or Furniture()).split(geometry)
    hidden = [run for run in runs if run.hidden]
    runs = [run for run in runs if not run.hidden]
    if named and not any(run.text.strip() for run in runs):
        # a page of nothing but furniture keeps it as its text: left without pieces, the page
        # would go to the fallback chunker, which knows no furniture at all
        runs, named = [run for run in geometry.runs if not run.hidden], {}
    size = geometry.display_size
    cuts = _cuts(runs, output.page, size, settings, trail or SectionTrail())
    # text drawn off the displayed page is laid out on its own, its sections its own too
    shown = len(cuts)
    cuts += _cuts(hidden, output.page, size, settings, SectionTrail())
    same_text = text == output.text  # offsets point into the reader's text only if it is this text
    pieces = []
    for k, (cut, span) in enumerate(zip(cuts, reader_offsets(cuts))):
        bbox = boxed(cut, size) if k < shown else None
        if (k < shown and bbox is None) or not (cut.piece.text or "").strip():
            continue
        start, end = span if (span and same_text) else (None, None)
        metadata = {**cut.piece.metadata, **named} if named else cut.piece.metadata
        if bbox is None:  # drawn beyond the page's edges: hidden where the page is shown
            metadata = {**metadata, "off_page": True}
        pieces.append(replace(cut.piece, bbox=bbox, bbox_reason=None if bbox else "hidden", start=start, end=end, metadata=metadata))
    return tuple(pieces)


def _cuts(runs: list[Run], page: int, size: tuple[float, float], settings: ChunkerSettings, trail: SectionTrail) -> list[Cut]:
    """The library's cuts of these runs' blocks (none when they make no blocks)."""
    blocks = layout(runs)
    return cut_page(page_layout(blocks, page, size), settings, trail) if blocks else []


def measured(page: "pypdfium2.PdfPage") -> tuple[PageGeometry, str]:
    """A loaded page's geometry and text layer (for a page the reader kept no geometry for)."""
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        return page_geometry(page, textpage, text), text
    finally:
        textpage.close()


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
    """A page the pdf reader read, not OCR, and not one left unread by the OCR page bound
    (`INDX_MAX_OCR_PAGES`: rendering ten thousand such pages costs what the bound saves)."""
    return output.reader == PDF_READER and output.lines is None and not output.metadata.get(OVER_OCR_BOUND)


class PdfChunker:
    """The `pdf` chunker; `options` are the shared `ChunkerSettings` (sizes, strategy, ...)."""

    builtin = True
    reads_parsed = True
    media_types = frozenset({MEDIA_TYPE})

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

    def _pages(self, content: bytes, outputs: tuple[PageOutput, ...], parsed: object) -> Iterator[PageChunks]:
        from indx_assets.pipeline.readers.pdf import PdfOpenError, PdfParse, load_page, load_pdf, open_pdf, pdf_passwords

        wanted = [o for o in outputs if _is_ours(o) and (o.status in ("failed", "unreadable") or (o.status == "ok" and o.text.strip()))]
        if not wanted:
            return
        if isinstance(parsed, PdfParse):
            parse = parsed  # the reader's pass: its pages are not loaded again
        else:
            try:
                parse = load_pdf(content, pdf_passwords())
            except PdfOpenError:
                return  # the reader already said why; nothing here to cut
        read, passwords = parse.pages, parse.passwords
        dpi = self.dpi or chunk_dpi()
        trail = SectionTrail()  # sections run on from page to page
        # learned from the pages the reader kept geometry for (all but the longest documents')
        furniture = Furniture.learn((n, page.geometry) for n, page in enumerate(read, 1) if page.geometry is not None)
        document: "pypdfium2.PdfDocument | None" = None  # opened only for pages the reader kept no geometry for
        try:
            for output in wanted:
                if output.page > len(read):
                    continue
                kept = read[output.page - 1]
                if output.status == "ok" and kept.geometry is not None:
                    pieces = text_pieces(kept.geometry, kept.output.text, output, self.settings, trail, furniture)
                    if pieces:
                        yield PageChunks(output.page, pieces)
                    continue
                if document is None:
                    try:
                        document = open_pdf(content, passwords)
                    except PdfOpenError:
                        return
                try:
                    page = load_page(document, output.page - 1)
                except Exception:
                    continue  # a page PDFium cannot load cannot be rasterised either: no chunk
                try:
                    if output.status == "ok":
                        pieces = text_pieces(*measured(page), output, self.settings, trail, furniture)
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
            if document is not None:
                document.close()

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...],
              parsed: object = None) -> tuple[PageChunks, ...]:
        """The port's `chunk`; `parsed` is the PDF reader's `PdfParse` of these bytes, if at hand."""
        if media_type not in self.media_types:
            return ()
        return tuple(self._pages(content, outputs, parsed))


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
