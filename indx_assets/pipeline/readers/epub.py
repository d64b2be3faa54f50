"""The EPUB reader: one page per chapter (spine item), each through the HTML path.

An EPUB is a zip of XHTML. It opens through the OOXML guard (`ooxml_guard.verified_parts`: zip
bombs, lying sizes, corrupt entries and entity declarations refused before any XML is parsed;
a chapter may declare its document type, `<!DOCTYPE html>`, but nothing with an internal
subset). A book whose content is encrypted (`META-INF/encryption.xml` naming a resource with
an algorithm other than font obfuscation) or that carries rights (`META-INF/rights.xml`, a
DRM licence) is `encrypted`.

`META-INF/container.xml` names the package document; its spine gives the chapters in reading
order, its manifest their files. Each chapter's visible text is walked by the HTML reader's
`html_blocks` (headings, lists, tables, code), so its page text is the HTML reader's text of
that file. The navigation document (EPUB 3 `nav`, else the EPUB 2 NCX) names the chapters: a
chapter's title is the first navigation entry pointing into it (`metadata["title"]`), and the
`epub` chunker gives it as the section of the chapter's chunks that precede its own headings.
Images the chapter shows (`<img>`, SVG `<image>`) are handed to the chunker as image chunks;
external resources are never fetched.
"""

import posixpath
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.media import EPUB
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.ooxml_guard import PackageRefused, verified_parts

READER = "epub"
_CONTAINER = "META-INF/container.xml"
_OPF = "{http://www.idpf.org/2007/opf}"
_NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
_XHTML = "{http://www.w3.org/1999/xhtml}"
_OPS = "{http://www.idpf.org/2007/ops}"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
#: Algorithms that only obfuscate embedded fonts (IDPF, Adobe): the text is not encrypted.
_FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})


@dataclass(frozen=True, slots=True)
class Chapter:
    """One spine item: its file, the nav title, its XHTML (decoded) and the images it shows."""

    path: str
    title: str | None
    html: str
    text: str
    images: tuple[tuple[bytes, str], ...]  # (bytes, alt text)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Book:
    """The EPUB reader's parsed form of a book (`DocumentRead.parsed`): its chapters in order."""

    title: str | None
    chapters: tuple[Chapter, ...]


def _xml(data: bytes) -> Any:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, recover=False)
    return etree.fromstring(data, parser)


def _resolve(base: str, href: str) -> str | None:
    """The zip entry `href` (relative to the file `base`) points at; None for an external URL."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(base), unquote(parts.path))).lstrip("/")


def _drm(parts: dict[str, bytes]) -> str | None:
    if "META-INF/rights.xml" in parts:
        return "the book carries a DRM licence (META-INF/rights.xml)"
    data = parts.get("META-INF/encryption.xml")
    if data is None:
        return None
    try:
        root = _xml(data)
    except Exception:
        return "META-INF/encryption.xml cannot be read: the book's content may be encrypted"
    for encrypted in root.iter(f"{_ENC}EncryptedData"):
        method = encrypted.find(f"{_ENC}EncryptionMethod")
        algorithm = method.get("Algorithm", "") if method is not None else ""
        if algorithm not in _FONT_OBFUSCATION:
            reference = encrypted.find(f".//{_ENC}CipherReference")
            target = reference.get("URI", "?") if reference is not None else "?"
            return f"the book's content is encrypted (DRM): {target} ({algorithm or 'no algorithm named'})"
    return None


def _text(el: Any) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def _nav_titles(parts: dict[str, bytes], manifest: dict[str, tuple[str, str, str]], toc_id: str | None) -> dict[str, str]:
    """Chapter file -> the first navigation title pointing into it (EPUB 3 nav, else NCX)."""
    titles: dict[str, str] = {}
    nav = next((href for href, _, props in manifest.values() if "nav" in props.split()), None)
    if nav is not None and nav in parts:
        root = _xml(parts[nav])
        navs = [n for n in root.iter(f"{_XHTML}nav") if n.get(f"{_OPS}type", "toc") == "toc"]
        for anchor in (a for n in navs[:1] for a in n.iter(f"{_XHTML}a")):
            target = _resolve(nav, anchor.get("href", ""))
            title = _text(anchor)
            if target and title:
                titles.setdefault(target, title)
        if titles:
            return titles
    ncx = manifest.get(toc_id or "", (None, "", ""))[0] or next(
        (href for href, kind, _ in manifest.values() if kind == "application/x-dtbncx+xml"), None)
    if ncx is not None and ncx in parts:
        root = _xml(parts[ncx])
        for point in root.iter(f"{_NCX}navPoint"):
            content = point.find(f"{_NCX}content")
            target = _resolve(ncx, content.get("src", "")) if content is not None else None
            title = _text(point.find(f"{_NCX}navLabel"))
            if target and title:
                titles.setdefault(target, title)
    return titles


def _images(html: str, path: str, parts: dict[str, bytes]) -> tuple[tuple[bytes, str], ...]:
    from indx_assets.pipeline.readers.html import parse_html

    tree = parse_html(html)
    found: list[tuple[bytes, str]] = []
    for node in tree.css("img, image"):
        attrs = node.attributes
        href = attrs.get("src") or attrs.get("xlink:href") or attrs.get("href") or ""
        target = _resolve(path, href)
        if target and parts.get(target):
            found.append((parts[target], attrs.get("alt") or ""))
    return tuple(found)


def _chapter(path: str, title: str | None, parts: dict[str, bytes]) -> Chapter:
    from indx_assets.pipeline.readers.html import BLOCK_SEPARATOR, HtmlTooDeep, html_blocks
    from indx_assets.pipeline.readers.text import NotText, decode_text

    data = parts.get(path)
    if data is None:
        return Chapter(path, title, "", "", (), error=f"the spine names {path}, which the book does not hold")
    try:
        html = decode_text(data).text
        text = BLOCK_SEPARATOR.join(b.text for b in html_blocks(html))
        return Chapter(path, title, html, text, _images(html, path, parts))
    except (NotText, HtmlTooDeep) as exc:
        return Chapter(path, title, "", "", (), error=f"{path}: {exc}")


def load_book(content: bytes) -> Book:
    """The book in `content`; raises `PackageRefused` (status + reason) when it cannot be opened."""
    parts = verified_parts(content, doctype_allowed=True)
    drm = _drm(parts)
    if drm:
        raise PackageRefused("encrypted", drm)
    try:
        rootfile = next(_xml(parts[_CONTAINER]).iter("{urn:oasis:names:tc:opendocument:xmlns:container}rootfile"))
        opf_path = rootfile.get("full-path", "")
        package = _xml(parts[opf_path])
        manifest = {
            item.get("id", ""): (_resolve(opf_path, item.get("href", "")) or "", item.get("media-type", ""),
                                 item.get("properties", ""))
            for item in package.iter(f"{_OPF}item")
        }
        spine = package.find(f"{_OPF}spine")
        if spine is None:
            raise ValueError("the package document has no spine")
        order = [manifest[ref.get("idref", "")][0] for ref in spine.iter(f"{_OPF}itemref") if ref.get("idref") in manifest]
        titles = _nav_titles(parts, manifest, spine.get("toc"))
        title = _text(package.find(f".//{{http://purl.org/dc/elements/1.1/}}title")) or None
    except PackageRefused:
        raise
    except (KeyError, StopIteration, ValueError, SyntaxError) as exc:  # lxml's errors are SyntaxErrors
        raise PackageRefused("failed", f"not a readable EPUB: {type(exc).__name__}: {exc}") from exc
    return Book(title, tuple(_chapter(path, titles.get(path), parts) for path in order))


def read_epub(content: bytes, config: ReaderConfig) -> DocumentRead:
    """One page per chapter, in spine order; refused books become a document status."""
    try:
        book = load_book(content)
    except PackageRefused as exc:
        return DocumentRead.failure(EPUB, exc.status, exc.reason)
    pages = []
    for number, chapter in enumerate(book.chapters, start=1):
        metadata: dict[str, Any] = {"chapter": chapter.path, **({"title": chapter.title} if chapter.title else {})}
        if chapter.error:
            pages.append(PageOutput(number, "", "failed", READER, reason=chapter.error, metadata=metadata))
        else:
            pages.append(PageOutput(number, chapter.text, "ok" if chapter.text else "empty", READER, metadata=metadata))
    read = DocumentRead.from_pages(EPUB, tuple(pages), **({"title": book.title} if book.title else {}))
    return read.with_parsed(book)
