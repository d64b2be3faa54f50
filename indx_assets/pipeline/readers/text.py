"""Readers for plain text and Markdown: decode the bytes, split pages at form feeds."""

import codecs
import io
import unicodedata
from dataclasses import dataclass
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from charset_normalizer.models import CharsetMatch

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig

#: Past this share of control characters a "decoding" is just binary seen through a codec.
_MAX_CONTROL_SHARE = 0.01
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\v")
#: The characters at the start of a text looked at for control characters.
_SAMPLE = 65536
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


class NotText(ValueError):
    """The bytes do not decode to text in any encoding worth trusting."""


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: str


def _control_share(text: str) -> float:
    if not text:
        return 0.0
    sample = text[:_SAMPLE]
    controls = sum(1 for ch in sample if unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS)
    return controls / len(sample)


#: UTF-16/32 without a byte-order mark would have NUL bytes for Latin text (refused above), so
#: a detector's UTF-16 guess for NUL-free bytes pairs up single-byte text into CJK noise.
_BOMLESS_WIDE = ["utf_16", "utf_16_be", "utf_16_le", "utf_32", "utf_32_be", "utf_32_le"]
#: The legacy encoding of Western text on the web and on Windows (WHATWG maps latin-1 to it).
_WESTERN = "cp1252"


#: Bytes longer than this have their encoding detected from their start (cut after a line break),
#: kept when all of them decode with it: charset-normalizer costs many times what it reads (20-40x
#: of a MiB, some 4x of 16 MiB).
_DETECT_SAMPLE = 1 << 18


def _detect_codec(file: BinaryIO) -> "str | CharsetMatch":
    """The codec that decodes a file's bytes (from where it stands; left there) that are not
    UTF-8, or the detector's match where its decoding is not the codec's alone (UTF-7 with a
    byte-order mark: see `CharsetMatch.__str__`). Detected from the start of a large file
    (`_DETECT_SAMPLE`), the rest checked a step at a time, or from all of it where the start's
    codec does not decode the rest."""
    start = file.tell()
    head = file.read(_DETECT_SAMPLE + 1)
    if len(head) > _DETECT_SAMPLE:
        # cut after a byte no multi-byte code page uses inside a character (their trail bytes
        # are 0x40 and up): a line break, or in minified HTML the end of a tag or a space
        cut = max(head.rfind(byte, 0, _DETECT_SAMPLE) for byte in (b"\n", b">", b" "))
        try:
            codec = _detect_codec_of(head[: cut + 1 if cut > 0 else _DETECT_SAMPLE])
        except NotText:
            codec = None
        del head
        file.seek(start)
        if isinstance(codec, str) and _decodes(file, codec):
            file.seek(start)
            return codec
    file.seek(start)
    found = _detect_codec_of(file.read())
    file.seek(start)
    return found


def _detect_codec_of(content: bytes) -> "str | CharsetMatch":
    """`_detect_codec` from all of `content`.

    charset-normalizer breaks ties between equally plausible code pages by name, so
    Latin-1 text often comes out as cp1250 ("crème" as "crčme"); among the candidates it
    rates best, Windows-1252 wins when it decodes the bytes.
    """
    from charset_normalizer import from_bytes

    results = from_bytes(content, cp_exclusion=_BOMLESS_WIDE)
    best = results.best()
    if best is None:
        raise NotText("no text encoding fits these bytes")
    tied = [r for r in results if (r.chaos, r.coherence) == (best.chaos, best.coherence)]
    if any(_WESTERN in r.could_be_from_charset for r in tied) and _decodes(io.BytesIO(content), _WESTERN):
        return _WESTERN
    if best.encoding == "utf_7" and best.bom:
        return best
    return best.encoding


def _decodes(file: BinaryIO, codec: str) -> bool:
    """Whether the rest of `file` decodes with `codec`, checked a step at a time (no copy of its
    bytes or its text)."""
    decoder = codecs.getincrementaldecoder(codec)()
    try:
        while block := file.read(_STEP):
            decoder.decode(block)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


#: The head of a file looked at for a byte-order mark and NUL bytes.
_HEAD = 65536
#: A file is decoded this many bytes at a time (`decode_file`).
_STEP = 1 << 20


def decode_text(content: bytes) -> DecodedText:
    """Decode bytes to text: BOM first, then strict UTF-8, then charset detection.

    Raises `NotText` for binary content (NUL bytes, or a decoding full of control characters).
    """
    return decode_file(io.BytesIO(content))


def _bom_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark at the start of `head` names; `NotText` for NUL bytes
    in a head without one."""
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding
    if b"\x00" in head:
        raise NotText("contains NUL bytes: binary, not text")
    return None


def _check_controls(text: str, encoding: str) -> None:
    if _control_share(text) > _MAX_CONTROL_SHARE:
        raise NotText(f"decodes as {encoding} only into control characters: binary, not text")


def _utf8_steps(head: bytes, file: BinaryIO) -> Iterator[str]:
    """`head` then the rest of `file` decoded as UTF-8 a step at a time (`UnicodeDecodeError`)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    yield decoder.decode(head)
    while block := file.read(_STEP):
        step = decoder.decode(block)
        del block
        yield step
        del step  # neither step's bytes nor its text are held while the next is read
    yield decoder.decode(b"", final=True)


def utf8_text(file: BinaryIO, head: bytes = b"") -> str:
    """`head` then the rest of `file` decoded as UTF-8 (`UnicodeDecodeError`) a step at a time
    into one string grown in place (CPython extends a string only one name holds): nothing else
    is allocated between the steps, so the string moves to its own mapping once past malloc's
    threshold and grows there, and a large text costs about its size and a step."""
    text = ""
    for step in _utf8_steps(head, file):
        text += step
        del step  # not held while the next step is read
    return text


def decode_file(file: BinaryIO) -> DecodedText:
    """`decode_text` of a binary file's bytes, read from where it stands. UTF-8 (most text) is
    decoded a step at a time into one growing string, so a large file costs about its text
    and no copy of its bytes; a byte-order mark or another encoding reads the bytes whole."""
    start = file.tell()
    head = file.read(_HEAD)
    bom_encoding = _bom_encoding(head)
    if bom_encoding is not None:
        file.seek(start)
        content = file.read()
        try:
            return DecodedText(content.decode(bom_encoding), bom_encoding.replace("-sig", ""))
        except UnicodeDecodeError as exc:
            raise NotText(f"has a {bom_encoding} byte-order mark but does not decode: {exc.reason}") from exc
    try:
        text = utf8_text(file, head)
        encoding = "utf-8"
    except UnicodeDecodeError:
        text = ""
        file.seek(start)
        codec = _detect_codec(file)
        text, encoding = (file.read().decode(codec), codec) if isinstance(codec, str) else (str(codec), codec.encoding)
    _check_controls(text, encoding)
    return DecodedText(text, encoding)


def same_utf8_text(file: BinaryIO, text: str) -> bool:
    """Whether `file`, UTF-8 from where it stands, holds `text`: compared a step at a time, so
    neither is copied whole."""
    at = 0
    try:
        for step in _utf8_steps(b"", file):
            if not text.startswith(step, at):
                return False
            at += len(step)
    except UnicodeDecodeError:
        return False
    return at == len(text)


def is_utf8_file(file: BinaryIO) -> bool:
    """Whether `decode_file` would decode `file` (from where it stands, and left there) as
    UTF-8: no byte-order mark and valid UTF-8 throughout. Checked a step at a time, keeping no
    more than the sample `decode_file` looks at for control characters; `NotText` as there."""
    start = file.tell()
    head = file.read(_HEAD)
    if _bom_encoding(head) is not None:
        file.seek(start)
        return False
    sample = ""
    try:
        for step in _utf8_steps(head, file):
            if len(sample) < _SAMPLE:
                sample += step[: _SAMPLE - len(sample)]
            del step  # not held while the next step is read
    except UnicodeDecodeError:
        file.seek(start)
        return False
    file.seek(start)
    _check_controls(sample, "utf-8")
    return True


def transcode_file(file: BinaryIO, sink: BinaryIO) -> str:
    """`decode_file` of a file not in UTF-8 (a byte-order mark, or detected), written to `sink`
    as UTF-8 a step at a time instead of held as one text; the encoding `decode_file` names
    (`NotText` as there). The file's bytes are read whole only where its start does not tell
    its encoding (`_detect_codec`)."""
    start = file.tell()
    head = file.read(_HEAD)
    codec = _bom_encoding(head)
    marked = codec is not None  # a byte-order mark says it is text: no controls checked, as there
    file.seek(start)
    if codec is None:
        found = _detect_codec(file)
        if not isinstance(found, str):  # decoded as the detector does: whole
            text = str(found)
            _check_controls(text, found.encoding)
            sink.write(text.encode("utf-8", errors="ignore"))
            return found.encoding
        codec = found
    decoder = codecs.getincrementaldecoder(codec)()
    sample = ""
    try:
        while True:
            block = file.read(_STEP)
            step = decoder.decode(block, final=not block)
            if len(sample) < _SAMPLE:
                sample += step[: _SAMPLE - len(sample)]
            sink.write(step.encode("utf-8", errors="ignore"))  # as `utf8_source` encodes a text
            del step
            if not block:
                break
    except UnicodeDecodeError as exc:
        raise NotText(f"has a {codec} byte-order mark but does not decode: {exc.reason}") from exc
    if not marked:
        _check_controls(sample, codec)
    return codec.replace("-sig", "")


def text_pages(text: str, reader: str) -> tuple[PageOutput, ...]:
    """One page per form-feed-separated part; whitespace-only parts are `empty`."""
    return tuple(
        PageOutput(page=i, text=part, reader=reader)
        if part and not part.isspace()  # what `part.strip()` says, without a copy of the page
        else PageOutput(page=i, text=part, status="empty", reader=reader, reason="only whitespace")
        for i, part in enumerate(text.split("\f"), start=1)
    )


def _read(file: BinaryIO, media_type: str, reader: str) -> DocumentRead:
    if not file.read(1):
        return DocumentRead.from_pages(media_type, (PageOutput(page=1, status="empty", reader=reader, reason="empty file"),))
    file.seek(-1, io.SEEK_CUR)
    try:
        decoded = decode_file(file)
    except NotText as exc:
        failed = PageOutput(page=1, status="failed", reader=reader, reason=str(exc))
        return DocumentRead.from_pages(media_type, (failed,))
    return DocumentRead.from_pages(media_type, text_pages(decoded.text, reader), encoding=decoded.encoding)


def read_plain(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read(io.BytesIO(content), "text/plain", "text")


def read_markdown(content: bytes, config: ReaderConfig) -> DocumentRead:
    """Markdown pages keep their source text, so chunkers can parse its structure with offsets."""
    return _read(io.BytesIO(content), "text/markdown", "markdown")


def read_plain_file(file: BinaryIO, config: ReaderConfig) -> DocumentRead:
    """`read_plain` of a file's bytes, decoded in steps (`decode_file`)."""
    return _read(file, "text/plain", "text")


def read_markdown_file(file: BinaryIO, config: ReaderConfig) -> DocumentRead:
    """`read_markdown` of a file's bytes, decoded in steps (`decode_file`)."""
    return _read(file, "text/markdown", "markdown")
