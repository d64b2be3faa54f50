"""The HTML reader: visible text only, as a sequence of blocks.

One walk over the parsed tree (Lexbor, via selectolax) yields the page's blocks: headings,
paragraphs, list items, tables, code. The reader's page text is those blocks joined by a
blank line, and structure-aware chunkers reuse the same blocks, so their offsets agree with
the text the reader reported. Scripts, styles, templates and hidden nodes are dropped.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from indx_assets.port import PageOutput
from indx_assets.readers import DocumentRead, ReaderConfig
from indx_assets.readers.text import NotText, decode_text

BLOCK_SEPARATOR = "\n\n"

_SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object", "embed", "canvas",
     "select", "button", "-comment"}
)
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "blockquote", "dl", "dt", "dd",
     "figure", "figcaption", "form", "fieldset", "address", "details", "summary", "ul", "ol", "li", "hr", "body",
     "caption", "center", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table"}
)
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class HtmlBlock:
    """One block of visible text. `kind`: title, text, list_item, table or code."""

    kind: str
    text: str
    level: int = 0
    html: str | None = None


def _hidden(node: LexborNode) -> bool:
    attrs = node.attributes
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    if node.tag == "input" and (attrs.get("type") or "").lower() == "hidden":
        return True
    style = attrs.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def _children(node: LexborNode) -> Iterator[LexborNode]:
    child = node.child
    while child is not None:
        yield child
        child = child.next


def _visible_text(node: LexborNode) -> str:
    """Inline text under `node`, hidden parts dropped, whitespace left as found."""
    parts: list[str] = []
    for child in _children(node):
        if child.tag == "-text":
            parts.append(child.text_content or "")
        elif child.tag == "br":
            parts.append("\n")
        elif child.tag not in _SKIPPED and not _hidden(child):
            parts.append(_visible_text(child))
    return "".join(parts)


def _table_block(table: LexborNode) -> HtmlBlock | None:
    rows: list[str] = []
    for tr in table.css("tr"):
        cells = [_SPACE.sub(" ", _visible_text(td)).strip() for td in tr.css("th, td") if not _hidden(td)]
        if any(cells):
            rows.append(" | ".join(cells))
    if not rows:
        return None
    return HtmlBlock("table", "\n".join(rows), html=table.html)


class _Walker:
    def __init__(self) -> None:
        self.blocks: list[HtmlBlock] = []
        self.inline: list[str] = []

    def flush(self, kind: str = "text", level: int = 0) -> None:
        text = _SPACE.sub(" ", "".join(self.inline)).strip()
        self.inline.clear()
        if text:
            self.blocks.append(HtmlBlock(kind, text, level))

    def walk(self, node: LexborNode) -> None:
        for child in _children(node):
            tag = child.tag
            if tag == "-text":
                self.inline.append(child.text_content or "")
            elif tag == "br":
                self.inline.append(" ")
            elif tag in _SKIPPED or _hidden(child):
                continue
            elif tag == "table":
                self.flush()
                block = _table_block(child)
                if block:
                    self.blocks.append(block)
            elif tag == "pre":
                self.flush()
                code = _visible_text(child).strip("\n")
                if code.strip():
                    self.blocks.append(HtmlBlock("code", code))
            elif tag in _HEADINGS:
                self.flush()
                self.walk(child)
                self.flush("title", _HEADINGS[tag])
            elif tag == "li":
                self.flush()
                self.walk(child)
                self.flush("list_item")
            elif tag in _BLOCKS:
                self.flush()
                self.walk(child)
                self.flush()
            else:
                self.walk(child)


def html_blocks(html: str) -> tuple[HtmlBlock, ...]:
    """The visible blocks of an HTML document, in document order."""
    tree = LexborHTMLParser(html)
    root = tree.body or tree.root
    if root is None:
        return ()
    walker = _Walker()
    walker.walk(root)
    walker.flush()
    return tuple(walker.blocks)


def read_html(content: bytes, config: ReaderConfig) -> DocumentRead:
    media_type = "text/html"
    if not content.strip():
        return DocumentRead.from_pages(media_type, (PageOutput(page=1, status="empty", reader="html"),))
    try:
        decoded = decode_text(content)
    except NotText as exc:
        return DocumentRead.from_pages(media_type, (PageOutput(page=1, status="failed", reader="html", reason=str(exc)),))
    blocks = html_blocks(decoded.text)
    text = BLOCK_SEPARATOR.join(b.text for b in blocks)
    if not text:
        page = PageOutput(page=1, status="empty", reader="html", reason="no visible text")
    else:
        page = PageOutput(page=1, text=text, status="ok", reader="html")
    return DocumentRead.from_pages(media_type, (page,), encoding=decoded.encoding)
