"""The `markdown` chunker: Markdown parsed with markdown-it-py, mapped to elements, cut by
`chunk_by_title`.

The page text of a Markdown source is the source itself, so each block's source map (its
line range) gives its offsets: headings are `Title`s at their level, paragraphs
`NarrativeText` (`ListItem` inside a list; a paragraph of long lines one element per line,
see `indx_assets.chunking.paragraphs`), fenced and indented code `CodeSnippet`s, tables
`Table`s (cells `|`-separated per line, with the rendered HTML for row-wise splitting), and
raw HTML blocks are read with the HTML reader's own block walk. A block's text is its inline
source (markers such as `#`, `>` or `-` gone, inline markup kept), except that an image or
link whose target is inline data (`data:image/png;base64,...`, as notebooks and some editors
export them) keeps only the data's type: its payload is not text, and would fill hundreds of
chunks. A page whose raw HTML nests too deep to parse (`readers.html.MAX_BLOCK_DEPTH`) is
declined, for the fallback to cut.
"""

import logging
import re
from typing import Any

from indx_assets.chunking.elements import CodeSnippet, Element, ListItem, NarrativeText, Table, Title
from indx_assets.chunking.paragraphs import line_runs
from indx_assets.chunking.pieces import Span, StructuredProvider, StructuredTextChunker
from indx_assets.port import PageOutput

log = logging.getLogger(__name__)
#: An inline-data URI's payload (what follows its media type and parameters), long enough not to be prose.
_DATA_PAYLOAD = re.compile(r"(\bdata:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+(?:=[\w.+-]+)?)*,)[\w+/=%-]{64,}")


def _readable(text: str) -> str:
    """`text` with every inline-data payload elided (see the module docstring)."""
    return _DATA_PAYLOAD.sub(r"\1…", text) if "data:" in text else text


class _Lines:
    """Character offsets of a text's lines, for markdown-it's line-based source maps."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        at = text.find("\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = text.find("\n", at + 1)

    def span(self, line_map: list[int] | None) -> tuple[int, int] | None:
        if not line_map:
            return None
        first, last = line_map
        start = self.starts[min(first, len(self.starts) - 1)]
        end = self.starts[last] if last < len(self.starts) else len(self.text)
        while end > start and self.text[end - 1].isspace():
            end -= 1
        while start < end and self.text[start].isspace():
            start += 1
        return start, end


def _place(element: Element, span: tuple[int, int] | None) -> Element:
    if span is not None:
        element.metadata.start, element.metadata.end = span
    return element


def _table(tokens: list[Any], i: int, md: Any) -> tuple[Table, int]:
    """The table opening at `tokens[i]` and the index of its closing token."""
    rows: list[list[str]] = []
    j = i
    while tokens[j].type != "table_close":
        token = tokens[j]
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(" ".join(_readable(token.content).split()))
        j += 1
    text = "\n".join(" | ".join(cells) for cells in rows if any(cells))
    html = md.renderer.render(tokens[i : j + 1], md.options, {})
    return Table(text, text_as_html=html), j


#: Block tokens that hold text themselves (a container's source map spans its children).
_LEAVES = frozenset({"paragraph_open", "heading_open", "fence", "code_block", "html_block", "table_open", "hr"})


def _unstructured(text: str, tokens: list[Any], lines: _Lines, max_nesting: int) -> list[Element]:
    """The text no leaf block covers, as plain-text elements (`text_elements`) with offsets.

    markdown-it skips everything after a block nested `max_nesting` levels deep (a list nested
    10 deep, a blockquote 20 deep) and a link reference definition leaves no token: that text
    still belongs in chunks. What the parser skipped says so in `unstructured`.
    """
    from indx_assets.chunkers.text import text_elements

    covered = bytearray(len(lines.starts))
    for token in tokens:
        if token.type in _LEAVES and token.map:
            first, last = token.map
            covered[first:last] = b"\x01" * (last - first)
    deep = next((t.map[0] for t in tokens if t.nesting == 1 and t.level >= max_nesting - 1 and t.map), None)
    out: list[Element] = []
    line = 0
    while line < len(covered):
        if covered[line]:
            line += 1
            continue
        first = line
        while line < len(covered) and not covered[line]:
            line += 1
        span = lines.span([first, line])
        if span is None or span[0] >= span[1]:
            continue
        reason = (f"nested deeper than the Markdown parser's limit of {max_nesting} levels; kept as plain text"
                  if deep is not None and first >= deep else None)
        for element in text_elements(text[span[0] : span[1]]):
            element.metadata.start += span[0]  # type: ignore[operator]
            element.metadata.end += span[0]  # type: ignore[operator]
            element.metadata.unstructured = reason
            out.append(element)
    return out


def markdown_elements(text: str) -> list[Element]:
    """Elements of a Markdown text, each with `start`/`end` offsets into it, in text order;
    text the parser gives no block to is plain text (`_unstructured`)."""
    from markdown_it import MarkdownIt

    from indx_assets.readers.html import html_blocks

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    tokens = md.parse(text)
    lines = _Lines(text)
    elements: list[Element] = []
    list_depth = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif kind == "heading_open":
            title = Title(_readable(tokens[i + 1].content))
            title.metadata.category_depth = int(token.tag[1:])
            elements.append(_place(title, lines.span(token.map)))
            i += 2
        elif kind == "paragraph_open":
            cls = ListItem if list_depth else NarrativeText
            content = _readable(tokens[i + 1].content).split("\n")
            first, last = token.map or (0, 0)
            if len(content) != last - first:  # no line-for-line source map: keep it whole
                elements.append(_place(cls("\n".join(content)), lines.span(token.map)))
            else:
                for a, b in line_runs(content):
                    elements.append(_place(cls("\n".join(content[a:b])), lines.span([first + a, first + b])))
            i += 2
        elif kind in ("fence", "code_block"):
            elements.append(_place(CodeSnippet(token.content), lines.span(token.map)))
        elif kind == "table_open":
            table, i = _table(tokens, i, md)
            elements.append(_place(table, lines.span(token.map)))
        elif kind == "html_block":
            span = lines.span(token.map)
            for block in html_blocks(token.content):
                cls = {"title": Title, "list_item": ListItem, "code": CodeSnippet}.get(block.kind, NarrativeText)
                if block.kind == "table":
                    element: Element = Table(block.text, text_as_html=block.html)
                else:
                    element = cls(block.text)
                if cls is Title:
                    element.metadata.category_depth = block.level or 1
                elements.append(_place(element, span))
        i += 1
    extra = _unstructured(text, tokens, lines, md.options["maxNesting"])
    if not extra:
        return elements
    # sorted by start (stable): the span search walks the page forward
    return sorted(elements + extra, key=lambda e: e.metadata.start if e.metadata.start is not None else -1)


class MarkdownChunker(StructuredTextChunker):
    media_types = frozenset({"text/markdown"})

    def left_out(self, page_text: str) -> list[Span]:
        """The inline-data payloads, which the elements elide (see the module docstring)."""
        return [(m.end(1), m.end()) for m in _DATA_PAYLOAD.finditer(page_text)] if "data:" in page_text else []

    def page_elements(self, content: bytes, page: PageOutput) -> list[Element] | None:
        from indx_assets.readers.html import HtmlTooDeep

        try:
            return markdown_elements(page.text)
        except HtmlTooDeep as exc:
            log.warning("markdown page %d declined: its raw HTML %s", page.page, exc)
            return None


class MarkdownProvider(StructuredProvider):
    chunker_class = MarkdownChunker
