"""Media-type detection: from the bytes first, the name second.

Bytes decide whenever they can (a PDF named `.txt` is a PDF); the name only chooses among
the text types, which have no signature (Markdown and plain text are the same bytes).
"""

import io
import zipfile
from pathlib import PurePath

import filetype

from indx_assets.pipeline.ole import OLE_MAGIC, is_encrypted_ooxml

PDF = "application/pdf"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PLAIN = "text/plain"
MARKDOWN = "text/markdown"
HTML = "text/html"
CSV = "text/csv"
TSV = "text/tab-separated-values"
OCTET = "application/octet-stream"
EML = "message/rfc822"
EPUB = "application/epub+zip"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"

_TEXT_BY_SUFFIX = {
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".mdown": MARKDOWN,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".txt": PLAIN,
    ".text": PLAIN,
    ".csv": CSV,
    ".tsv": TSV,
    ".tab": TSV,
}
#: Text formats with a reader of their own, known by their name alone (their bytes are text).
_TEXT_CONTAINERS = {".eml": EML}
_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body")
_TEXT_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _looks_like_html(head: bytes) -> bool:
    """Markup from the first byte on (after a BOM and blank space) with an HTML marker early.

    A note that merely mentions `<body>` in its prose is still a note.
    """
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").lower()
    return head.startswith(b"<") and any(marker in head[:1024] for marker in _HTML_MARKERS)


def _looks_binary(head: bytes) -> bool:
    return b"\x00" in head and not head.startswith(_TEXT_BOMS)


#: Signature formats that are themselves plain ASCII: their magic is meant, even in clean text.
_TEXTUAL_FORMATS = frozenset({PDF, "application/rtf", "application/postscript"})
#: C0 controls (and DEL) that text does not contain; every binary format's header does.
_CONTROL_BYTES = tuple(bytes([b]) for b in [*range(0x20), 0x7F] if b not in b"\t\n\r\f\v\x1b")


def _looks_textual(head: bytes) -> bool:
    return not any(c in head for c in _CONTROL_BYTES)


#: The part that makes a zip an Office Open XML document of each kind.
_OOXML_PARTS = {
    "ppt/presentation.xml": PPTX,
    "word/document.xml": DOCX,
    "xl/workbook.xml": XLSX,
}
#: A password-protected Office file is an OLE container, and a damaged one a zip without a
#: readable directory; only the name then says which kind it was meant to be (its reader
#: records why it cannot be read). Macro-enabled variants (`.docm`, `.xlsm`) are read as their
#: plain kind (macros never run).
_OFFICE_BY_SUFFIX = {".pptx": PPTX, ".pptm": PPTX, ".docx": DOCX, ".docm": DOCX, ".xlsx": XLSX, ".xlsm": XLSX}


#: Zips that name their kind in a `mimetype` entry (EPUB's OCF and OpenDocument), and the
#: names that say it when the zip cannot be opened (its reader records why).
_ZIP_MIMETYPES = frozenset({EPUB, ODT, ODS, ODP})
_ZIP_BY_SUFFIX = {".epub": EPUB, ".odt": ODT, ".ods": ODS, ".odp": ODP}


def _zip_mimetype(archive: zipfile.ZipFile, names: set[str]) -> str | None:
    """The kind a zip's `mimetype` entry names, if one this module knows (the entry is read only
    when it is as small as such a name)."""
    if "mimetype" not in names or archive.getinfo("mimetype").file_size > 100:
        return None
    try:
        declared = archive.read("mimetype").decode("ascii").strip()
    except (zipfile.BadZipFile, UnicodeDecodeError, NotImplementedError, RuntimeError, OSError):
        return None
    return declared if declared in _ZIP_MIMETYPES else None


def _container_type(content: bytes, suffix: str) -> str | None:
    """What a zip or OLE container really holds, when its signature alone cannot say.

    A zip is an Office document when it has that format's main part (read from the central
    directory only); a password-protected Office file is an OLE container holding the
    encrypted package, recognisable only together with its name.
    """
    if content.startswith(b"PK"):
        try:
            archive = zipfile.ZipFile(io.BytesIO(content))
            names = set(archive.namelist())
        except (zipfile.BadZipFile, ValueError, OSError):
            return _OFFICE_BY_SUFFIX.get(suffix) or _ZIP_BY_SUFFIX.get(suffix)
        ooxml = next((mime for part, mime in _OOXML_PARTS.items() if part in names), None)
        return ooxml or _zip_mimetype(archive, names)
    if content.startswith(OLE_MAGIC) and suffix in _OFFICE_BY_SUFFIX:
        return _OFFICE_BY_SUFFIX[suffix] if is_encrypted_ooxml(content) else None
    return None


def detect_media_type(content: bytes, name: str | None = None) -> str:
    """The media type of `content`, with `name` (a file name or path) as a hint.

    A signature wins when the bytes around it are binary, or when the format is itself
    textual (PDF, RTF, PostScript). Many signatures are two to four letters ("BM" is a
    bitmap, "ID3" an MP3), so clean text that merely begins with them stays text.
    """
    head = content[:8192]
    suffix = PurePath(name).suffix.lower() if name else ""
    container = _container_type(content, suffix)
    if container is not None:
        return container
    kind = filetype.guess(head if not head.startswith(b"PK") else content)
    if kind is not None and (kind.mime in _TEXTUAL_FORMATS or not _looks_textual(head)):
        return kind.mime
    if head.lstrip().startswith(b"%PDF") or b"%PDF-" in head[:1024]:
        return PDF
    by_name = _TEXT_BY_SUFFIX.get(suffix)
    if _looks_binary(head):
        # No signature and not text: the name is all we have; the reader will say it is not text.
        return by_name or OCTET
    if suffix in _TEXT_CONTAINERS:
        return _TEXT_CONTAINERS[suffix]
    if _looks_like_html(head) and by_name != MARKDOWN:
        return HTML
    return by_name or PLAIN


def is_text_type(media_type: str) -> bool:
    return media_type in (PLAIN, MARKDOWN, HTML, CSV, TSV)
