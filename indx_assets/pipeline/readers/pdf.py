"""The PDF reader: one `PageOutput` per page from the text layer, through PDFium (`pypdfium2`).

Per page (reader name `pdfium`):
- `ok`: the text layer's text, exactly as `PdfTextPage.get_text_range()` gives it, so a
  chunker that re-opens the bytes can point into it with character offsets;
- `empty`: no text and nothing drawn;
- `unreadable`: no text but drawn content (a scan, a figure), left for OCR to take;
- `failed`: PDFium could not load the page or its text (`reason` says why).

Whole-document problems become a `DocumentRead.failure`: `encrypted` (no password, or none
of the configured ones, opens it), `failed` (corrupt, truncated beyond repair, not a PDF),
`empty` (zero pages). Pages are loaded and closed one at a time, so PDFium's memory stays
flat in the page count; only the extracted text accumulates, and, for the first
`KEPT_GEOMETRY_PAGES` text pages, the runs with boxes that the `pdf` chunker lays out, measured
while the page is loaded anyway. They reach the chunker as the read's parsed form (`PdfParse`,
`DocumentRead.parsed`), so a page is loaded once for reading and cutting; nothing is cached.
Page 1 of a document of up to `PREVIEW_MAX_PAGES` pages is also rendered at `PREVIEW_DPI`
while it is loaded (`PdfParse.preview`): the picture of its chunks that the `chunk_map`
materialization shows is drawn on it, so that page is not loaded again either.

Passwords come from one place, `pdf_passwords()`: the reader's `ReaderConfig.passwords` plus
the `INDX_PDF_PASSWORDS` environment variable. The parsed form carries the passwords that
opened the document, so the chunker opens it again (to render a page) as the reader did; a
chunker handed no parsed form calls `pdf_passwords()` with the environment's alone.

Every open and page load goes through `open_pdf` and `load_page`, which count them in
`LOADS` (instrumentation for the tests and `bench/bench_ingest.py`: documents opened and
pages loaded per document).
"""

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.passwords import PASSWORDS_ENV, parse_passwords

if TYPE_CHECKING:
    import pypdfium2
    from PIL import Image

    from indx_assets.pipeline.readers.pdf_runs import PageGeometry

READER = "pdfium"
MEDIA_TYPE = "application/pdf"

#: PDFium's FPDF_GetLastError codes that mean "this needs (another) password".
_ERR_SUCCESS = 0
_ERR_FILE = 2
_ERR_PASSWORD = 4
_ERR_SECURITY = 5
_EMPTY_PAGE_TREE = re.compile(rb"/Count\s*0\b")


def _prime_last_error() -> None:
    """Set PDFium's last error to FILE (2), which loading from memory never sets.

    PDFium only writes its last error on some failures and never clears it, so a stale code
    from an earlier document (say PASSWORD) would otherwise be read as this one's reason.
    Failing to open a path that does not exist sets FILE; still seeing FILE after a load from
    memory means that load gave no reason.
    """
    import pypdfium2.raw as raw

    raw.FPDF_LoadDocument(b"/nonexistent/indx-assets/prime-last-error.pdf", None)


@dataclass
class PdfLoads:
    """How many times this process had PDFium open a document and load a page."""

    documents: int = 0
    pages: int = 0


#: The process's count of PDFium opens and page loads (`open_pdf`, `load_page`).
LOADS = PdfLoads()


class PdfOpenError(Exception):
    """The document cannot be opened; `status` is the document status to report."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def pdf_passwords(config: ReaderConfig | None = None) -> tuple[str, ...]:
    """The passwords to try, in order: the empty one, the configured ones, then the environment's
    (`INDX_PDF_PASSWORDS`, read by `passwords.parse_passwords`)."""
    from_env = parse_passwords(os.environ.get(PASSWORDS_ENV, ""))
    ordered = ["", *(config.passwords if config else ()), *from_env]
    return tuple(dict.fromkeys(ordered))


def open_pdf(content: bytes, passwords: Sequence[str] = ("",)) -> "pypdfium2.PdfDocument":
    """Open `content` with the first password that works, or raise `PdfOpenError`."""
    import pypdfium2 as pdfium

    if not content:
        raise PdfOpenError("failed", "the file is empty (0 bytes)")
    tried_password = False
    last: Exception | None = None
    for password in passwords or ("",):
        _prime_last_error()
        try:
            document = pdfium.PdfDocument(content, password=password or None)
        except pdfium.PdfiumError as exc:
            last = exc
            if getattr(exc, "err_code", None) in (_ERR_FILE, _ERR_SUCCESS):
                # PDFium returned no document without saying why: it does that for a
                # well-formed file whose page tree is empty
                if _EMPTY_PAGE_TREE.search(content):
                    raise PdfOpenError("empty", "the PDF has no pages") from exc
                raise PdfOpenError("failed", "PDFium refused the file without giving a reason") from exc
            if getattr(exc, "err_code", None) in (_ERR_PASSWORD, _ERR_SECURITY):
                tried_password = True
                continue
            break  # not a password problem: another password will not help
        else:
            LOADS.documents += 1
            return document
    if tried_password:
        configured = len([p for p in passwords if p])
        hint = (
            f"none of the {configured} configured password(s) opens it"
            if configured
            else f"no password configured (set {PASSWORDS_ENV} or the reader's passwords)"
        )
        raise PdfOpenError("encrypted", f"the PDF is encrypted: {hint}")
    raise PdfOpenError("failed", f"not a readable PDF (corrupt, truncated or not a PDF): {last}")


@contextmanager
def opened_pdf(content: bytes, passwords: Sequence[str] = ("",)) -> Iterator["pypdfium2.PdfDocument"]:
    """`open_pdf` as a context manager that always closes the document."""
    document = open_pdf(content, passwords)
    try:
        yield document
    finally:
        document.close()


def load_page(document: "pypdfium2.PdfDocument", index: int) -> "pypdfium2.PdfPage":
    """Page `index` (0-based) of `document`, loaded by PDFium and counted in `LOADS`; the
    caller closes it."""
    page = document[index]
    LOADS.pages += 1
    return page


def page_has_drawing(page: "pypdfium2.PdfPage") -> bool:
    """Whether the page draws anything at all (images, paths, shadings, forms or text objects)."""
    import pypdfium2.raw as raw

    return raw.FPDFPage_CountObjects(page) > 0


@dataclass(frozen=True)
class PdfPageRead:
    """One page as the reader read it: its `PageOutput` and, for a text page, the geometry the
    `pdf` chunker lays out (None when not kept: see `KEPT_GEOMETRY_PAGES`)."""

    output: PageOutput
    geometry: "PageGeometry | None" = None
    #: The page rendered at `PREVIEW_DPI` (page 1 of a short document only: `load_pdf`).
    preview: "Image.Image | None" = None


#: Pages per document whose geometry (runs and boxes) the reader keeps for the chunker; the
#: chunker loads any later page again itself, so what the parsed form holds stays bounded
#: whatever the page count.
KEPT_GEOMETRY_PAGES = 1000
#: Page 1 of documents up to this many pages is rendered at this resolution while it is read.
PREVIEW_MAX_PAGES = 50
PREVIEW_DPI = 50


def _preview(page: "pypdfium2.PdfPage", dpi: int) -> "Image.Image | None":
    """The displayed page (crop box, rotation) as an RGB image at `dpi`; None when PDFium cannot."""
    try:
        bitmap = page.render(scale=dpi / 72)
    except Exception:
        return None
    try:
        return bitmap.to_pil().convert("RGB")
    finally:
        bitmap.close()


def read_page(document: "pypdfium2.PdfDocument", index: int, keep_geometry: bool = True,
              preview_dpi: int | None = None) -> PdfPageRead:
    """Read page `index` (0-based), closing everything PDFium allocated.

    A text page's runs are measured in the same pass (`keep_geometry`), and the page rendered
    at `preview_dpi` when given: loading a page is most of the cost of reading it, and the
    `pdf` chunker needs exactly these runs.
    """
    from indx_assets.pipeline.readers.pdf_runs import page_geometry

    number = index + 1
    try:
        page = load_page(document, index)
    except Exception as exc:  # PDFium refuses the page object itself
        return PdfPageRead(PageOutput(page=number, status="failed", reader=READER, reason=f"PDFium cannot load the page: {exc}"))
    try:
        try:
            textpage = page.get_textpage()
        except Exception as exc:
            return PdfPageRead(PageOutput(page=number, status="failed", reader=READER, reason=f"PDFium cannot load the page's text: {exc}"))
        try:
            text = textpage.get_text_range()
            geometry = None
            if keep_geometry and text.strip():
                try:
                    geometry = page_geometry(page, textpage, text)
                except Exception:  # left to the chunker, which measures the page again itself
                    geometry = None
        finally:
            textpage.close()
        preview = _preview(page, preview_dpi) if preview_dpi else None
        if text.strip():
            return PdfPageRead(PageOutput(page=number, text=text, status="ok", reader=READER), geometry, preview)
        if page_has_drawing(page):
            return PdfPageRead(PageOutput(page=number, status="unreadable", reader=READER, reason="no text layer; the page has drawn content (a scan?)"), None, preview)
        return PdfPageRead(PageOutput(page=number, status="empty", reader=READER), None, preview)
    finally:
        page.close()


@dataclass(frozen=True)
class PdfParse:
    """The PDF reader's parsed form of one document (`DocumentRead.parsed`): every page as read,
    and the passwords that opened it. Only per-page data, never a PDFium object."""

    pages: tuple[PdfPageRead, ...]
    passwords: tuple[str, ...] = ("",)

    @property
    def preview(self) -> "Image.Image | None":
        """Page 1 rendered at `PREVIEW_DPI` (None for documents over `PREVIEW_MAX_PAGES`)."""
        return self.pages[0].preview if self.pages else None


def load_pdf(content: bytes, passwords: tuple[str, ...] = ("",)) -> PdfParse:
    """Every page of the PDF in `content`, read one at a time; raises `PdfOpenError`."""
    document = open_pdf(content, passwords)
    try:
        count = len(document)
        if count == 0:
            raise PdfOpenError("empty", "the PDF has no pages")
        preview = PREVIEW_DPI if count <= PREVIEW_MAX_PAGES else None
        pages = tuple(read_page(document, i, keep_geometry=i < KEPT_GEOMETRY_PAGES, preview_dpi=preview if i == 0 else None)
                      for i in range(count))
        return PdfParse(pages, passwords)
    finally:
        document.close()


def read_pdf(content: bytes, config: ReaderConfig) -> DocumentRead:
    """Read every page of a PDF's text layer; see the module docstring for the statuses."""
    try:
        parse = load_pdf(content, pdf_passwords(config))
    except PdfOpenError as exc:
        return DocumentRead.failure(MEDIA_TYPE, exc.status, exc.reason)
    read = DocumentRead.from_pages(MEDIA_TYPE, tuple(p.output for p in parse.pages), page_count=len(parse.pages))
    return read.with_parsed(parse)
