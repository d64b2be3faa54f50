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
flat in the page count; only the extracted text accumulates.

Passwords come from one place, `pdf_passwords()`: the reader's `ReaderConfig.passwords` plus
the `INDX_PDF_PASSWORDS` environment variable. The chunker, which gets no configuration,
calls the same function, so whatever opens a document for the reader opens it for the
chunker too when the passwords are configured through the environment.
"""

import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from indx_assets.port import PageOutput
from indx_assets.readers import DocumentRead, ReaderConfig

if TYPE_CHECKING:
    import pypdfium2

READER = "pdfium"
MEDIA_TYPE = "application/pdf"
PASSWORDS_ENV = "INDX_PDF_PASSWORDS"

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


class PdfOpenError(Exception):
    """The document cannot be opened; `status` is the document status to report."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def pdf_passwords(config: ReaderConfig | None = None) -> tuple[str, ...]:
    """The passwords to try, in order: the empty one, the configured ones, then the environment's.

    `INDX_PDF_PASSWORDS` holds a JSON array of strings, or passwords one per line.
    """
    raw = os.environ.get(PASSWORDS_ENV, "")
    from_env: list[str] = []
    if raw.strip().startswith("["):
        try:
            from_env = [p for p in json.loads(raw) if isinstance(p, str)]
        except json.JSONDecodeError:
            from_env = []
    elif raw:
        from_env = [line for line in raw.splitlines() if line]
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
            return pdfium.PdfDocument(content, password=password or None)
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


def page_has_drawing(page: "pypdfium2.PdfPage") -> bool:
    """Whether the page draws anything at all (images, paths, shadings, forms or text objects)."""
    import pypdfium2.raw as raw

    return raw.FPDFPage_CountObjects(page) > 0


def read_page(document: "pypdfium2.PdfDocument", index: int) -> PageOutput:
    """Read page `index` (0-based) into a `PageOutput`, closing everything PDFium allocated."""
    number = index + 1
    try:
        page = document[index]
    except Exception as exc:  # PDFium refuses the page object itself
        return PageOutput(page=number, status="failed", reader=READER, reason=f"PDFium cannot load the page: {exc}")
    try:
        try:
            textpage = page.get_textpage()
        except Exception as exc:
            return PageOutput(page=number, status="failed", reader=READER, reason=f"PDFium cannot load the page's text: {exc}")
        try:
            text = textpage.get_text_range()
        finally:
            textpage.close()
        if text.strip():
            return PageOutput(page=number, text=text, status="ok", reader=READER)
        if page_has_drawing(page):
            return PageOutput(page=number, status="unreadable", reader=READER, reason="no text layer; the page has drawn content (a scan?)")
        return PageOutput(page=number, status="empty", reader=READER)
    finally:
        page.close()


def read_pdf(content: bytes, config: ReaderConfig) -> DocumentRead:
    """Read every page of a PDF's text layer; see the module docstring for the statuses."""
    try:
        document = open_pdf(content, pdf_passwords(config))
    except PdfOpenError as exc:
        return DocumentRead.failure(MEDIA_TYPE, exc.status, exc.reason)
    try:
        count = len(document)
        if count == 0:
            return DocumentRead.failure(MEDIA_TYPE, "empty", "the PDF has no pages")
        pages = tuple(read_page(document, i) for i in range(count))
    finally:
        document.close()
    return DocumentRead.from_pages(MEDIA_TYPE, pages, page_count=count)
