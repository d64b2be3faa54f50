"""Opening Office Open XML packages (PPTX, DOCX, XLSX) without trusting them.

An OOXML file is a zip of XML parts, and both layers can be turned into weapons: a zip whose
entries inflate to gigabytes (a zip bomb, with honest or lying size headers), and XML parts that
declare a DTD whose entities expand exponentially ("billion laughs") or point outside the file.
A password-protected OOXML file is not a zip at all but an OLE compound file holding an
`EncryptedPackage` stream.

The rule: nothing reaches an XML parser until this module has
1. refused OLE containers (`encrypted` when they hold an encrypted package, `unsupported` for a
   legacy binary Office file),
2. checked the zip's central directory (entry count, declared sizes, compression ratios,
   compression methods, encrypted entries),
3. inflated every entry itself in bounded steps, so a lying size header can never make it
   allocate more than the declared (and already capped) size, and verified each CRC,
4. refused any XML part that declares a DTD or an entity (OOXML never needs either), in
   whatever encoding the XML spec lets the part announce (UTF-8/16/32 with or without a byte
   order mark, EBCDIC), and any part in an encoding other than UTF-8 or UTF-16 (the only two
   OPC allows, ECMA-376 Part 2 §8.1.4),
and then hands the parser a fresh *stored* zip of exactly the bytes it verified, so the parser
inflates nothing. A part too large to hold that the caller reads as a stream (a spreadsheet's
worksheet, `verified_streaming_package`) is checked the same way while it is inflated step by
step and thrown away, then handed over as a stream of the same bytes, inflated again in the
same bounded steps: the checks and the bounds are the same, the memory is one step. External references (linked images, hyperlinks, external data) are never
resolved: the parser's network access stays off and relationship targets are only data.
"""

import codecs
import io
import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

# OLE_MAGIC and is_encrypted_ooxml are imported from here too (their home before `ole`)
from indx_assets.pipeline.ole import OLE_MAGIC, is_encrypted_ooxml, ole_status  # noqa: F401

_READ_STEP = 1 << 20
_DTD_MARKERS = ("<!DOCTYPE", "<!ENTITY")
#: The first bytes of an XML document and the codec family they announce (XML 1.0 Appendix F):
#: byte order marks first, then "<?xm" as each encoding writes it.
_ENCODING_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00?\x00", "utf-16-le"),
    (b"\x00<\x00?", "utf-16-be"),
    (b"\x4c\x6f\xa7\x94", "cp037"),  # "<?xm" in EBCDIC
)
#: Unit orders of UCS-4 Python has no codec for (2143 and 3412): refused outright.
_ODD_UCS4 = (b"\x00\x00\x3c\x00", b"\x00\x3c\x00\x00", b"\x00\x00\xff\xfe", b"\xfe\xff\x00\x00")
#: What OPC allows an XML part to be written in.
_OPC_ENCODINGS = {"utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be"}
_DOCTYPE = re.compile(r"<!DOCTYPE[^>]*>?")
_DECLARED_ENCODING = re.compile(r"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


@dataclass(frozen=True)
class PackageLimits:
    """What a package may declare before it is refused unread.

    The defaults sit far above real presentations (a 300-slide deck with video stays under
    them) and far below what exhausts a worker: the whole package is inflated in memory, so
    `max_total_bytes` bounds the memory an open can take.
    """

    max_entries: int = 10_000
    max_entry_bytes: int = 256 << 20
    max_total_bytes: int = 512 << 20
    #: inflated/compressed ratio past which an entry is a bomb, checked for entries above
    #: `ratio_floor_bytes` (tiny entries compress absurdly well and harmlessly)
    max_ratio: float = 200.0
    ratio_floor_bytes: int = 8 << 20
    #: a streamable part above this size is verified and read as a stream, never held
    stream_above_bytes: int = 4 << 20


DEFAULT_LIMITS = PackageLimits()


class PackageRefused(Exception):
    """The package was not opened; `status` is a document status, `reason` says why."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _declares_dtd(text: str, doctype_allowed: bool) -> bool:
    """Whether `text` declares a DTD or entities; with `doctype_allowed`, a document type
    declaration without an internal subset (`<!DOCTYPE html>`, XHTML's public identifier, as
    EPUB chapters carry) is none: it declares no entity, and nothing ever loads its DTD."""
    if not doctype_allowed:
        return any(marker in text for marker in _DTD_MARKERS)
    if "<!ENTITY" in text:
        return True
    return any("[" in declaration for declaration in _DOCTYPE.findall(text)) or text.count("<!DOCTYPE") > 1


def _family(data: bytes) -> str:
    """The codec family an XML document's first bytes announce (XML 1.0 Appendix F)."""
    return next((codec for signature, codec in _ENCODING_SIGNATURES if data.startswith(signature)), "utf-8")


def xml_refusal(data: bytes, doctype_allowed: bool = False) -> str | None:
    """Why an XML part must not reach a parser, or None.

    The part is decoded the way an XML parser would (its first bytes name the encoding
    family; XML 1.0 Appendix F) before it is searched for a DTD or an entity declaration, so
    the markers cannot hide in UTF-32 or EBCDIC. Any ASCII-compatible encoding keeps the
    markers' bytes, so the UTF-8 search covers those too. `doctype_allowed`: see `_declares_dtd`.
    """
    if data.startswith(_ODD_UCS4):
        return "is in an unusual UCS-4 byte order"
    family = _family(data)
    text = data.decode(family, errors="replace")
    if _declares_dtd(text, doctype_allowed):
        return "declares a DTD or entities (entity expansion risk)"
    declared = _DECLARED_ENCODING.match(text)
    name = codecs.lookup(family).name
    if declared:
        try:
            name = codecs.lookup(declared.group(1)).name
        except LookupError:
            return f"declares the unknown encoding {declared.group(1)!r}"
    if name not in {codecs.lookup(e).name for e in _OPC_ENCODINGS} or family not in _OPC_ENCODINGS:
        return f"is encoded in {declared.group(1) if declared else family} (OPC allows only UTF-8 and UTF-16)"
    return None


def _looks_like_xml(name: str, data: bytes) -> bool:
    if name.endswith((".xml", ".rels", ".vml")):
        return True
    head = data[:64].lstrip(b" \t\r\n")
    return head.startswith((b"<", *_ODD_UCS4)) or any(head.startswith(sig) for sig, _ in _ENCODING_SIGNATURES)


def _check_directory(infos: list[zipfile.ZipInfo], limits: PackageLimits) -> None:
    if len(infos) > limits.max_entries:
        raise PackageRefused("failed", f"refused: {len(infos)} zip entries (limit {limits.max_entries})")
    total = 0
    for info in infos:
        if info.flag_bits & 0x1:
            raise PackageRefused("encrypted", f"zip entry {info.filename} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            # OOXML allows only these two; others (bzip2, lzma) inflate unboundedly per read.
            raise PackageRefused("failed", f"refused: zip entry {info.filename} uses compression method {info.compress_type}")
        if info.file_size > limits.max_entry_bytes:
            raise PackageRefused(
                "failed", f"refused (zip bomb?): entry {info.filename} declares {info.file_size} bytes uncompressed"
            )
        if info.file_size > limits.ratio_floor_bytes and info.file_size > limits.max_ratio * max(info.compress_size, 1):
            raise PackageRefused(
                "failed",
                f"refused (zip bomb): entry {info.filename} inflates {info.compress_size} bytes to {info.file_size}",
            )
        total += info.file_size
    if total > limits.max_total_bytes:
        raise PackageRefused("failed", f"refused (zip bomb?): package declares {total} bytes uncompressed")


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The entry's bytes, read in bounded steps; zipfile stops at the declared size and checks
    the CRC. A corrupt deflate stream is the package's fault, reported like any bad zip."""
    parts: list[bytes] = []
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_READ_STEP):
                parts.append(chunk)
    except zlib.error as exc:
        raise zipfile.BadZipFile(f"entry {info.filename} is corrupt ({exc})") from exc
    data = b"".join(parts)
    if len(data) != info.file_size:
        raise zipfile.BadZipFile(f"entry {info.filename} is truncated")
    return data


def _verify_streamed(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Check a part without holding it: inflated in bounded steps (zipfile stops at the declared
    size and checks the CRC at the end), its head checked as `xml_refusal` checks a whole part,
    the rest searched for a DTD or an entity in the encoding the head announced."""
    size, head, tail = 0, b"", ""
    decoder = None
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_READ_STEP):
                size += len(chunk)
                if decoder is None:
                    head = chunk
                    refusal = xml_refusal(head) if _looks_like_xml(info.filename, head) else None
                    if refusal:
                        raise PackageRefused("failed", f"refused: XML part {info.filename} {refusal}")
                    decoder = codecs.getincrementaldecoder(_family(head))(errors="replace")
                text = tail + decoder.decode(chunk)
                if any(marker in text for marker in _DTD_MARKERS):
                    raise PackageRefused(
                        "failed", f"refused: XML part {info.filename} declares a DTD or entities (entity expansion risk)")
                tail = text[-len(max(_DTD_MARKERS, key=len)):]  # a marker cut by a step boundary
    except zlib.error as exc:
        raise zipfile.BadZipFile(f"entry {info.filename} is corrupt ({exc})") from exc
    if size != info.file_size:
        raise zipfile.BadZipFile(f"entry {info.filename} is truncated")


def _verified(content: bytes, limits: PackageLimits, streamable: Callable[[str], bool],
              doctype_allowed: bool = False) -> tuple[dict[str, bytes], frozenset[str]]:
    """The held parts (checked as the module docstring says; `doctype_allowed` as for
    `verified_parts`) and the names of the parts that were checked as streams (`streamable`
    and above `limits.stream_above_bytes`)."""
    ole = ole_status(content)
    if ole is not None:
        raise PackageRefused(*ole)
    if not content:
        raise PackageRefused("empty", "zero-byte file")
    streamed: set[str] = set()
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            infos = [i for i in archive.infolist() if not i.is_dir()]
            _check_directory(infos, limits)
            parts = {}
            for info in infos:
                if info.file_size > limits.stream_above_bytes and streamable(info.filename):
                    _verify_streamed(archive, info)
                    streamed.add(info.filename)
                else:
                    parts[info.filename] = _inflate(archive, info)
    except PackageRefused:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError) as exc:
        raise PackageRefused("failed", f"not a readable zip package (corrupt or truncated): {exc}") from exc
    for name, data in parts.items():
        refusal = xml_refusal(data, doctype_allowed) if _looks_like_xml(name, data) else None
        if refusal:
            raise PackageRefused("failed", f"refused: XML part {name} {refusal}")
    return parts, frozenset(streamed)


def verified_parts(content: bytes, limits: PackageLimits = DEFAULT_LIMITS, doctype_allowed: bool = False) -> dict[str, bytes]:
    """Every entry of the package, checked as the module docstring says; raises `PackageRefused`.

    The same guard opens the other zips of XML the readers take (EPUB, OpenDocument);
    `doctype_allowed` lets their XHTML parts declare a document type without an internal
    subset (`xml_refusal`)."""
    return _verified(content, limits, lambda name: False, doctype_allowed)[0]


def _stored(parts: dict[str, bytes]) -> io.BytesIO:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    out.seek(0)
    return out


def verified_package(content: bytes, limits: PackageLimits = DEFAULT_LIMITS) -> io.BytesIO:
    """A stored (uncompressed) zip of the verified parts, ready for an OOXML library to open."""
    return _stored(verified_parts(content, limits))


@dataclass(frozen=True)
class StreamingPackage:
    """A verified package whose large streamable parts are not held (`verified_streaming_package`)."""

    #: the stored zip of the held parts; each streamed part is in it as the caller's stand-in,
    #: so a library that opens the package still finds a part there
    package: io.BytesIO
    streamed: frozenset[str]
    content: bytes

    def open_streamed(self, name: str) -> IO[bytes]:
        """A streamed part's bytes, inflated again in bounded steps (the CRC checked at its end)."""
        return zipfile.ZipFile(io.BytesIO(self.content)).open(name)


def verified_streaming_package(content: bytes, streamable: Callable[[str], bool], stand_in: bytes,
                               limits: PackageLimits = DEFAULT_LIMITS) -> StreamingPackage:
    """Like `verified_package`, but the parts `streamable` names that are larger than
    `limits.stream_above_bytes` are verified as streams and left out of memory (`stand_in`
    takes their place in the package): read them with `StreamingPackage.open_streamed`."""
    parts, streamed = _verified(content, limits, streamable)
    return StreamingPackage(_stored({**parts, **dict.fromkeys(streamed, stand_in)}), streamed, content)
