"""Media-type detection: from the bytes first, the name second.

Bytes decide whenever they can (a PDF named `.txt` is a PDF); the name only chooses among
the text types, which have no signature (Markdown and plain text are the same bytes).
"""

from pathlib import PurePath

import filetype

PDF = "application/pdf"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
PLAIN = "text/plain"
MARKDOWN = "text/markdown"
HTML = "text/html"
OCTET = "application/octet-stream"

_TEXT_BY_SUFFIX = {
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".mdown": MARKDOWN,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".txt": PLAIN,
    ".text": PLAIN,
}
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


def detect_media_type(content: bytes, name: str | None = None) -> str:
    """The media type of `content`, with `name` (a file name or path) as a hint."""
    head = content[:8192]
    kind = filetype.guess(head if not head.startswith(b"PK") else content)
    if kind is not None:
        return kind.mime
    if head.lstrip().startswith(b"%PDF") or b"%PDF-" in head[:1024]:
        return PDF
    suffix = PurePath(name).suffix.lower() if name else ""
    by_name = _TEXT_BY_SUFFIX.get(suffix)
    if _looks_binary(head):
        # No signature and not text: the name is all we have; the reader will say it is not text.
        return by_name or OCTET
    if _looks_like_html(head) and by_name != MARKDOWN:
        return HTML
    return by_name or PLAIN


def is_text_type(media_type: str) -> bool:
    return media_type in (PLAIN, MARKDOWN, HTML)
