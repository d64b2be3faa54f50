"""Readers turn a source's bytes into one `PageOutput` per page.

A reader never raises for bad bytes: it returns pages with a `failed` or `unreadable`
status and a reason, or, when the whole document cannot be opened, no pages and a
document status (`failed`, `encrypted`, `unsupported`, ...) with a reason.
"""

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import BinaryIO

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.stage_clock import CLOCK

log = logging.getLogger(__name__)

#: Document statuses. `ok`: at least one page read; `empty`: read, nothing in it; the rest
#: say why nothing (or not everything) could be read: `too_large` and `outside_root` are the
#: bounds of `indx_assets.pipeline.bounds`.
DOCUMENT_STATUSES = ("ok", "empty", "unreadable", "failed", "encrypted", "unsupported", "too_large", "outside_root")


@dataclass(frozen=True)
class ReaderConfig:
    """Settings readers honour (passwords for encrypted files and the like)."""

    passwords: tuple[str, ...] = ()
    ocr_dpi: int = 200
    ocr_languages: str = "eng"
    #: A document with more pages to OCR than this is not OCR'd: `too_large` (`INDX_MAX_OCR_PAGES`).
    max_ocr_pages: int = 500


@dataclass(frozen=True)
class DocumentRead:
    """What the readers made of one document."""

    media_type: str
    pages: tuple[PageOutput, ...]
    status: str
    reason: str | None = None
    metadata: dict[str, object] = field(default_factory=dict)
    #: The reader's parsed form of this document (a PDF's pages with their runs, a PPTX deck,
    #: a Word document's blocks, a workbook's sheets), handed to this document's chunkers so
    #: they cut what the reader parsed instead of parsing the bytes again (`run_chain`'s
    #: `parsed`). It lives as long as this value: never stored, never cached, None for a read
    #: rebuilt from stored pages, and no part of equality.
    parsed: object = field(default=None, compare=False, repr=False)

    @classmethod
    def from_pages(cls, media_type: str, pages: tuple[PageOutput, ...], **metadata: object) -> "DocumentRead":
        """Derive the document status from its pages (`PageTally`)."""
        tally = PageTally()
        for page in pages:
            tally.add(page)
        return replace(tally.read(media_type, **metadata), pages=tuple(pages))

    @classmethod
    def failure(cls, media_type: str, status: str, reason: str) -> "DocumentRead":
        """A document that could not be opened at all."""
        return cls(media_type, (), status, reason)

    def with_parsed(self, parsed: object) -> "DocumentRead":
        """This read, carrying the reader's parsed form of the document (see `parsed`)."""
        return replace(self, parsed=parsed)

    @property
    def content(self) -> str:
        """The document's full text: page texts joined by form feeds."""
        return "\f".join(p.text for p in self.pages)


class PageTally:
    """A document's status and reason derived from its pages, counted as they are read (a
    long document read in steps is never all its pages at once). The rule: `ok` when any
    page is; `empty` when there is no page or all are; else `unreadable` when any page is,
    else `failed`; the reason, the non-ok pages' reasons, sorted, joined by `; `."""

    def __init__(self) -> None:
        self.statuses: set[str] = set()
        self.reasons: set[str] = set()
        self.pages = 0

    def add(self, page: PageOutput) -> None:
        self.pages += 1
        self.statuses.add(page.status)
        if page.reason and page.status != "ok":
            self.reasons.add(page.reason)

    def read(self, media_type: str, **metadata: object) -> DocumentRead:
        """The document's read, without its pages."""
        statuses = self.statuses
        if "ok" in statuses:
            status = "ok"
        elif not self.pages or statuses == {"empty"}:
            status = "empty"
        elif "unreadable" in statuses:
            status = "unreadable"
        else:
            status = "failed"
        return DocumentRead(media_type, (), status, "; ".join(sorted(self.reasons)) or None, dict(metadata))


Reader = Callable[[bytes, ReaderConfig], DocumentRead]

#: media type -> "module:function"; imported on first use so a bare import stays cheap.
READERS: dict[str, str] = {
    "text/plain": "indx_assets.pipeline.readers.text:read_plain",
    "text/markdown": "indx_assets.pipeline.readers.text:read_markdown",
    "text/html": "indx_assets.pipeline.readers.html:read_html",
    "application/pdf": "indx_assets.pipeline.readers.pdf:read_pdf",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "indx_assets.pipeline.readers.pptx:read_pptx",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "indx_assets.pipeline.readers.docx:read_docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "indx_assets.pipeline.readers.sheets:read_xlsx",
    "text/csv": "indx_assets.pipeline.readers.sheets:read_csv",
    "text/tab-separated-values": "indx_assets.pipeline.readers.sheets:read_tsv",
    "image/png": "indx_assets.pipeline.readers.image:read_png",
    "image/jpeg": "indx_assets.pipeline.readers.image:read_jpeg",
    "image/tiff": "indx_assets.pipeline.readers.image:read_tiff",
    "image/bmp": "indx_assets.pipeline.readers.image:read_bmp",
    "image/webp": "indx_assets.pipeline.readers.image:read_webp",
    "message/rfc822": "indx_assets.pipeline.readers.mail:read_eml",
    "application/epub+zip": "indx_assets.pipeline.readers.epub:read_epub",
    "application/vnd.oasis.opendocument.text": "indx_assets.pipeline.readers.odf:read_odt",
    "application/vnd.oasis.opendocument.spreadsheet": "indx_assets.pipeline.readers.odf:read_ods",
    "application/vnd.oasis.opendocument.presentation": "indx_assets.pipeline.readers.odf:read_odp",
}


#: media type -> "module:function" of a reader that reads a binary file in steps, for types
#: whose reading needs no more than one pass (`read_document_file`): a large file is then
#: never held whole beside what is read from it.
FILE_READERS: dict[str, str] = {
    "text/plain": "indx_assets.pipeline.readers.text:read_plain_file",
    "text/markdown": "indx_assets.pipeline.readers.text:read_markdown_file",
    "text/html": "indx_assets.pipeline.readers.html:read_html_file",
}


def _load(target: str) -> Callable[..., DocumentRead]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def reader_for(media_type: str) -> Reader | None:
    target = READERS.get(media_type)
    return None if target is None else _load(target)


def read_document(content: bytes, media_type: str, config: ReaderConfig | None = None) -> DocumentRead:
    """Read `content` with the reader for `media_type`; a reader's own crash becomes `failed`.

    The ladder is per page: the primary reader (text layer) first, then OCR for the pages it
    reported `unreadable` (`indx_assets.pipeline.readers.ocr.apply_ocr`).
    """
    config = config or ReaderConfig()
    reader = reader_for(media_type)
    if reader is None:
        return DocumentRead.failure(media_type, "unsupported", f"no reader for media type {media_type}")
    read = _guarded(reader, content, media_type, config)
    if any(page.status == "unreadable" for page in read.pages):
        from indx_assets.pipeline.readers.ocr import apply_ocr

        with CLOCK.stage("ocr"):
            read = apply_ocr(read, content, config)
    return read


def read_document_file(file: BinaryIO, media_type: str, config: ReaderConfig | None = None) -> DocumentRead:
    """`read_document` of a binary file's bytes (read from where it stands). A type in
    `FILE_READERS` is read from the file in steps; any other from its bytes read whole."""
    target = FILE_READERS.get(media_type)
    if target is None:
        return read_document(file.read(), media_type, config)
    return _guarded(_load(target), file, media_type, config or ReaderConfig())


def _guarded(reader: Callable[..., DocumentRead], source: object, media_type: str, config: ReaderConfig) -> DocumentRead:
    """The reader's read of `source`; a reader's own crash becomes `failed`."""
    try:
        return reader(source, config)
    except Exception as exc:  # a reader defect must not take the run down
        return reader_error(media_type, exc)


def reader_error(media_type: str, exc: Exception) -> DocumentRead:
    """The read of a document whose reader raised `exc` (a reader defect): `failed`, logged."""
    log.exception("reader for %s raised", media_type, exc_info=exc)
    return DocumentRead.failure(media_type, "failed", f"reader error: {type(exc).__name__}: {exc}")


class ReadFailed(Exception):
    """Raised by a document read in steps that turns out unreadable part way: `read` is what
    the document reads as (a document status and reason, no pages), as its reader would have
    returned it read whole."""

    def __init__(self, read: DocumentRead) -> None:
        super().__init__(read.reason)
        self.read = read
