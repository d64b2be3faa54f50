"""The e-mail reader: a saved message (`.eml`, RFC 5322 with MIME) as one document of parts.

The message is parsed by the standard `email` package (`policy.default`). Its headers become
document metadata (`subject`, `from`, `to`, `cc`, `date` in ISO form when it parses, and
`message_id`). The body is the part `get_body` prefers, plain text first, else HTML; it is
decoded from its transfer encoding and charset and read by the plain-text or HTML reader, so
an HTML body keeps its headings, lists and tables. Its pages come first.

Every other leaf part is an attachment, numbered from 1 in the order the message holds them
(the other renderings of the body in its `multipart/alternative` are not: they are the same
words). An attachment whose media type (its bytes first, then its file name, then its declared
type; `indx_assets.pipeline.media`) has a reader is read by that reader, its pages laid after
the body's as further pages of this document (`indx_assets.pipeline.readers.parts`); the
others are listed in the metadata (`unsupported_attachments`). `attachments` records every
attachment's number, name, media type, status and pages. An attached message is read as an
e-mail too, its own attachments listed but not read (no unbounded nesting).

Hostile messages: before anything is parsed, a message declaring more than
`MAX_MULTIPARTS` multipart boundaries or holding more than `MAX_DELIMITER_LINES` lines that
could delimit a part is refused (`failed`); after parsing, one with more than `MAX_PARTS`
parts is refused too, before any part is read. The parser's work and memory grow with the
number of parts, so this bounds both.
"""

import re
from dataclasses import dataclass, replace
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.media import EML, OCTET, PLAIN, detect_media_type
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig, read_document, reader_for
from indx_assets.pipeline.readers.parts import PART_KEY, PART_NAME_KEY, PART_PAGE_KEY, Part, Parts

#: More `boundary=` parameters than this and the message is refused unparsed.
MAX_MULTIPARTS = 64
#: More lines starting with `--` (each could delimit a part) than this: refused unparsed.
MAX_DELIMITER_LINES = 1_000
#: More MIME parts than this (multiparts and leaves): refused before any part is read.
MAX_PARTS = 500
#: An attached message's own attachments are listed, not read.
MAX_NESTING = 1

_BOUNDARY = re.compile(rb"boundary\*?[0-9]*\*?\s*=", re.IGNORECASE)
_HEADERS = (("subject", "subject"), ("from", "from"), ("to", "to"), ("cc", "cc"), ("message_id", "message-id"))


class MailRefused(ValueError):
    """The message is not parsed or not read; the reason says why."""


@dataclass(frozen=True)
class _Split:
    """A message taken apart: its headers, its body part and its attachments."""

    metadata: dict[str, Any]
    body: Part | None
    attachments: tuple[Part, ...]


def _parse(content: bytes) -> EmailMessage:
    multiparts = len(_BOUNDARY.findall(content))
    if multiparts > MAX_MULTIPARTS:
        raise MailRefused(f"refused (MIME bomb?): the message declares {multiparts:,} multipart boundaries "
                          f"(at most {MAX_MULTIPARTS} are read)")
    delimiters = content.count(b"\n--")
    if delimiters > MAX_DELIMITER_LINES:
        raise MailRefused(f"refused (MIME bomb?): {delimiters:,} lines could delimit MIME parts "
                          f"(at most {MAX_DELIMITER_LINES:,} are read)")
    try:
        message = BytesParser(policy=policy.default).parsebytes(content)
    except Exception as exc:  # the parser is lenient; whatever it still raises is the file's fault
        raise MailRefused(f"not a readable e-mail: {type(exc).__name__}: {exc}") from exc
    if not isinstance(message, EmailMessage):  # policy.default always builds one; a guard for mypy
        raise MailRefused("not a readable e-mail")
    return message


def _header(message: EmailMessage, name: str) -> str | None:
    try:
        value = message[name]
    except Exception:  # a header the policy cannot parse: its raw text is still worth keeping
        value = message.get_all(name, failobj=[None])[0]
    text = " ".join(str(value).split()) if value is not None else ""
    return text or None


def _headers(message: EmailMessage) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for key, name in _HEADERS:
        value = _header(message, name)
        if value:
            metadata[key] = value
    date = _header(message, "date")
    if date:
        try:
            when = message["date"].datetime
            metadata["date"] = when.isoformat() if when is not None else date
        except Exception:  # an unparsable date is kept as written
            metadata["date"] = date
    return metadata


def _leaves(message: EmailMessage) -> list[tuple[EmailMessage, int | None]]:
    """Every leaf part in message order, with the id of its nearest `multipart/alternative`
    (None outside one). An attached message is a leaf; `MAX_PARTS` bounds the walk."""
    leaves: list[tuple[EmailMessage, int | None]] = []
    stack: list[tuple[EmailMessage, int | None]] = [(message, None)]
    seen = 0
    while stack:
        part, alternative = stack.pop()
        seen += 1
        if seen > MAX_PARTS:
            raise MailRefused(f"refused (MIME bomb?): more than {MAX_PARTS:,} MIME parts")
        children = part.get_payload()
        if part.get_content_maintype() == "multipart" and isinstance(children, list):
            if part.get_content_subtype() == "alternative":
                alternative = id(part)
            stack.extend((child, alternative) for child in reversed(children) if isinstance(child, EmailMessage))
        else:
            leaves.append((part, alternative))
    return leaves


def _text_of(part: EmailMessage) -> str | None:
    """A text part decoded from its transfer encoding and its declared charset; None when the
    charset is unknown (the bytes are then left to the readers' own detection)."""
    try:
        content = part.get_content()
    except (LookupError, UnicodeError, AssertionError):
        return None
    return content if isinstance(content, str) else None


def _bytes_of(part: EmailMessage) -> bytes:
    """A leaf part's bytes, decoded from its transfer encoding; text re-encoded as UTF-8."""
    if part.get_content_type() == EML:
        payload = part.get_payload()
        inner = payload[0] if isinstance(payload, list) and payload else None
        return inner.as_bytes(policy=policy.default) if isinstance(inner, EmailMessage) else b""
    if part.get_content_maintype() == "text":
        text = _text_of(part)
        if text is not None:
            return text.encode("utf-8")
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else b""


def _media_type(content: bytes, name: str | None, declared: str) -> str:
    """The bytes decide, then the name; the declared type only where those find plain text or
    nothing (a CSV or an e-mail attached without a name)."""
    detected = detect_media_type(content, name)
    if detected in (PLAIN, OCTET) and declared != detected and reader_for(declared) is not None:
        return declared
    return detected


def _split(content: bytes) -> _Split:
    message = _parse(content)
    leaves = _leaves(message)
    body_part = message.get_body(preferencelist=("plain", "html"))
    body: Part | None = None
    siblings: int | None = None
    if isinstance(body_part, EmailMessage):
        text = _text_of(body_part)
        raw = body_part.get_payload(decode=True)
        data = text.encode("utf-8") if text is not None else raw if isinstance(raw, bytes) else b""
        body = Part(0, None, "text/html" if body_part.get_content_subtype() == "html" else "text/plain", data)
        siblings = next((alt for leaf, alt in leaves if leaf is body_part), None)
    attachments: list[Part] = []
    for leaf, alternative in leaves:
        if leaf is body_part:
            continue
        if siblings is not None and alternative == siblings and leaf.get_content_maintype() == "text":
            continue  # another rendering of the body: the same words
        data = _bytes_of(leaf)
        name = leaf.get_filename()
        attachments.append(Part(len(attachments) + 1, name, _media_type(data, name, leaf.get_content_type()), data))
    return _Split(_headers(message), body, tuple(attachments))


def mail_parts(content: bytes) -> Parts:
    """The message's body (part 0) and attachments by number, unread (`MailRefused` for a
    message refused as the module docstring says)."""
    split = _split(content)
    parts = ([split.body] if split.body is not None else []) + list(split.attachments)
    return Parts({part.number: part for part in parts})


def _entry(part: Part, read: DocumentRead | None, first: int, last: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"attachment": part.number, "name": part.name, "media_type": part.media_type,
                             "bytes": len(part.content)}
    if read is not None:
        entry["status"] = read.status
        if read.reason:
            entry["reason"] = read.reason
        if last >= first:
            entry["pages"] = [first, last]
    return entry


def read_mail(content: bytes, config: ReaderConfig, nesting: int = 0) -> DocumentRead:
    """The message's pages: the body's, then each readable attachment's (see the module docstring)."""
    try:
        split = _split(content)
    except MailRefused as exc:
        return DocumentRead.failure(EML, "failed", str(exc))
    pages: list[PageOutput] = []
    parts: dict[int, Part] = {}
    attachments: list[dict[str, Any]] = []
    unsupported: list[dict[str, Any]] = []
    for part in ([split.body] if split.body is not None else []) + list(split.attachments):
        if part.number and (nesting >= MAX_NESTING or reader_for(part.media_type) is None):
            entry = _entry(part, None, 0, -1)
            entry["status"] = "unsupported" if nesting < MAX_NESTING else "not read"
            entry["reason"] = (f"no reader for media type {part.media_type}" if nesting < MAX_NESTING
                               else "an attachment of an attached message")
            attachments.append(entry)
            unsupported.append(entry)
            continue
        read = read_mail(part.content, config, nesting + 1) if part.media_type == EML else \
            read_document(part.content, part.media_type, config)
        first = len(pages) + 1
        for page in read.pages:
            metadata = dict(page.metadata)
            if part.number:
                metadata.update({PART_KEY: part.number, PART_NAME_KEY: part.name, PART_PAGE_KEY: page.page})
            pages.append(replace(page, page=len(pages) + 1, metadata=metadata))
        parts[part.number] = replace(part, parsed=read.parsed)
        if part.number:
            attachments.append(_entry(part, read, first, len(pages)))
    metadata = dict(split.metadata)
    if attachments:
        metadata["attachments"] = attachments
    if unsupported:
        metadata["unsupported_attachments"] = [{k: e[k] for k in ("attachment", "name", "media_type", "reason")}
                                               for e in unsupported]
    if not pages:
        return DocumentRead(EML, (), "empty", "the message has no body and no readable attachment", metadata)
    return DocumentRead.from_pages(EML, tuple(pages), **metadata).with_parsed(Parts(parts))


def read_eml(content: bytes, config: ReaderConfig) -> DocumentRead:
    return read_mail(content, config)
