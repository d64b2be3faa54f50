"""The `markdown` chunker: Markdown parsed with markdown-it-py, mapped to elements, cut by
`chunk_by_title`.

The page text of a Markdown source is the source itself, so each block's source map (its
line range) gives its offsets: headings are `Title`s at their level, paragraphs
`NarrativeText` (`ListItem` inside a list; a paragraph of long lines one element per line,
see `indx_assets.pipeline.chunking.paragraphs`; one that runs past a parse window read from the
page a line at a time, `LongParagraph`), fenced code (with its fences and info string) and
indented code `CodeSnippet`s, tables `Table`s (cells `|`-separated per line, with an HTML
table of the cells' source for row-wise splitting), and raw HTML blocks `NarrativeText` of
their source, tags and all (they are words of the page). A block's text is its inline source
(markers such as `#`, `>` or `-` gone, inline markup kept), except that inline data
(`data:image/png;base64,...`, see `indx_assets.pipeline.chunking.inline_data`) keeps only the data's
type: its payload is not text, and would fill hundreds of chunks. Text the parser gives no
block to (past its nesting limit, link reference definitions) is cut as plain text.
"""

import heapq
from collections.abc import Iterator
from itertools import chain
from typing import Any

from indx_interfaces import PageOutput

from indx_assets.pipeline.chunkers.base import Span, StructuredProvider, StructuredTextChunker
from indx_assets.pipeline.chunking.elements import CodeSnippet, Element, ListItem, NarrativeText, Table, Title
from indx_assets.pipeline.chunking.inline_data import elide_inline_data, inline_data_spans
from indx_assets.pipeline.chunking.markdown_parse import (
    LEAF_BLOCKS,
    PARAGRAPH_TRIM,
    LineOffsets,
    LongParagraph,
    Section,
    code_text,
    parse_sections,
    quote_content,
    unquoted,
)
from indx_assets.pipeline.chunking.paragraphs import (
    code_segments,
    collapsed_run,
    iter_line_runs,
    line_runs,
    run_segments,
)


def _place(element: Element, span: tuple[int, int] | None) -> Element:
    if span is not None:
        element.metadata.start, element.metadata.end = span
    return element


def _table(tokens: list[Any], i: int) -> tuple[Table, int]:
    """The table opening at `tokens[i]` and the index of its closing token. Its HTML, by which
    a long table is split into rows, holds each cell's source ("[site](https://...)", not
    the link's text alone): the rows of a split table keep the page's words."""
    import html as html_lib

    rows: list[list[tuple[str, str]]] = []  # (tag, source) of each cell
    j = i
    while tokens[j].type != "table_close":
        token = tokens[j]
        if token.type == "tr_open":
            rows.append([])
        elif token.type in ("th_open", "td_open") and rows:
            rows[-1].append((token.tag, ""))
        elif token.type == "inline" and rows and rows[-1]:
            rows[-1][-1] = (rows[-1][-1][0], " ".join(elide_inline_data(token.content).split()))
        j += 1
    text = "\n".join(" | ".join(cell for _, cell in cells) for cells in rows if any(cell for _, cell in cells))
    html = "<table>" + "".join(
        "<tr>" + "".join(f"<{tag}>{html_lib.escape(cell)}</{tag}>" for tag, cell in cells) + "</tr>" for cells in rows
    ) + "</table>"
    return Table(text, text_as_html=html), j


def _unstructured(text: str, section: Section, lines: LineOffsets) -> Iterator[Element]:
    """The text of `section` no leaf block covers, as plain-text elements (`text_elements`) with
    offsets, in order, as they are read (past a list's nesting limit, that is the rest of the
    text).

    markdown-it skips everything after a block nested `max_nesting` levels deep (a list nested
    10 deep, a blockquote 20 deep) and a link reference definition leaves no token: that text
    still belongs in chunks. What the parser skipped says so in `unstructured`. A blank line of
    a blockquote, its markers alone, holds no word of the page: it is no element.
    """
    from indx_assets.pipeline.chunkers.text import text_elements

    covered = bytearray(section.end - section.first)
    for token in section.tokens:
        if token.type in LEAF_BLOCKS and token.map:
            first, last = token.map
            covered[first - section.first : last - section.first] = b"\x01" * (last - first)
    max_nesting = section.max_nesting
    deep = next((t.map[0] for t in section.tokens if t.nesting == 1 and t.level >= max_nesting - 1 and t.map), None)
    _cover_quote_markers(covered, section.first, lines, len(covered) if deep is None else deep - section.first)
    line = covered.find(0)
    while line >= 0:
        first = line
        line = covered.find(1, first)
        span = lines.span([section.first + first, section.first + (len(covered) if line < 0 else line)])
        if span is not None and span[0] < span[1]:
            reason = (f"nested deeper than the Markdown parser's limit of {max_nesting} levels; kept as plain text"
                      if deep is not None and section.first + first >= deep else None)
            for element in text_elements(text, *span):
                element.metadata.unstructured = reason
                yield element
        if line >= 0:
            line = covered.find(0, line)


def _cover_quote_markers(covered: bytearray, first: int, lines: LineOffsets, parsed: int) -> None:
    """Marks as covered the lines of `covered` (line `first` on) that no block holds and that
    hold blockquote markers alone (`>`, and whitespace), up to line `parsed` of it (past the
    parser's nesting limit no line is known for a quote's: it is all kept as text)."""
    line = covered.find(0, 0, parsed)
    while line >= 0:
        end = covered.find(1, line, parsed)
        end = parsed if end < 0 else end
        if ">" in lines.source(first + line, first + end):
            for number in range(line, end):
                source = lines.source(first + number, first + number + 1)
                if ">" in source and not source.strip(" \t\r\n>"):
                    covered[number] = 1
        line = covered.find(0, end, parsed)


class _Blocks:
    """Maps block tokens to elements, section after section (an ordered list item's number
    waits for the item's first paragraph, in whichever section it comes)."""

    def __init__(self, text: str, lines: LineOffsets) -> None:
        self.text, self.lines = text, lines
        self.list_depth = 0
        self.marker: str | None = None  # the number of the ordered list item whose first paragraph is next

    def long_paragraph(self, paragraph: LongParagraph) -> Iterator[Element]:
        """The elements of a paragraph too long to parse whole: its lines as the parser joins
        them (`_paragraph_lines`), in runs (`iter_line_runs`) as a parsed paragraph's. A long
        run holds its text collapsed from the page (`paragraphs.collapsed_run`; a quoted one's
        less its markers, `markdown_parse.unquoted`), a segment at a time
        (`paragraphs.run_segments`), as the `text` chunker's do."""
        text, lines = self.text, self.lines
        cls = ListItem if self.list_depth else NarrativeText
        marker, self.marker = self.marker, None
        for first, last in iter_line_runs(_paragraph_lines(text, lines, paragraph, marker)):
            start, end = lines.span([first, last + 1])  # type: ignore[misc]  # lines given: a span
            for a, b in run_segments(text, start, end):
                held = unquoted(text, a, b, paragraph.quotes) if paragraph.quotes else None
                run = collapsed_run(*((text, a, b) if held is None else (held, 0, len(held))), _as_parsed)
                if run is None and (a, b) == (start, end):  # its lines, the marker on the first
                    run = "\n".join(line for _, line in _paragraph_lines(text, lines, paragraph, marker, first, last + 1))
                else:
                    if run is None:  # a segment mostly of whitespace (few words, long runs of spaces)
                        run = _as_parsed(text[a:b] if held is None else held)
                    if marker is not None and first == paragraph.first and a == start:
                        run = f"{marker} {run}"
                yield _place(cls(run), (a, b))

    def elements(self, tokens: list[Any]) -> Iterator[Element]:
        """The elements of a section's block tokens, in order, each made as it is asked for (a
        long block's segments are not all held at once)."""
        text, lines = self.text, self.lines
        i = 0
        while i < len(tokens):
            token = tokens[i]
            kind = token.type
            if kind in ("bullet_list_open", "ordered_list_open"):
                self.list_depth += 1
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.list_depth -= 1
            elif kind == "list_item_open" and token.info:
                self.marker = f"{token.info}{token.markup}"  # an ordered item's number is a word of the page
            elif kind == "heading_open":
                title = Title(elide_inline_data(tokens[i + 1].content))
                title.metadata.category_depth = int(token.tag[1:])
                yield _place(title, lines.span(token.map))
                i += 2
            elif kind == "paragraph_open":
                cls = ListItem if self.list_depth else NarrativeText
                content = elide_inline_data(tokens[i + 1].content).split("\n")
                if self.marker is not None:
                    content[0], self.marker = f"{self.marker} {content[0]}", None
                first, last = token.map or (0, 0)
                if len(content) != last - first:  # no line-for-line source map: keep it whole
                    yield _place(cls("\n".join(content)), lines.span(token.map))
                else:
                    for a, b in line_runs(content):
                        yield _place(cls("\n".join(content[a:b])), lines.span([first + a, first + b]))
                i += 2
            elif kind == "fence":  # its fences and info string too ("```html"): words of the page
                span = lines.span(token.map)
                if span is None:
                    yield CodeSnippet(elide_inline_data(token.content))
                else:  # a long one a segment at a time
                    for line, a, b in code_segments(text, *span):
                        yield _place(CodeSnippet(elide_inline_data(text[line:b])), (a, b))
            elif kind == "code_block":  # a long one's token holds its first window's content only: from the page
                span = lines.span(token.map)
                if span and not token.level:  # to its last line's end, whitespace and all (not its line break)
                    start, end = lines.span(token.map, trim=False)  # type: ignore[misc]
                    end = end - 1 if text.endswith("\r", start, end) else end
                    for line, a, b in code_segments(text, *span, start):
                        code = code_text(text, line, end if b == span[1] else b)
                        yield _place(CodeSnippet(elide_inline_data(code)), (a, b))
                else:
                    yield _place(CodeSnippet(elide_inline_data(token.content)), span)
            elif kind == "table_open":
                table, i = _table(tokens, i)
                yield _place(table, lines.span(token.map))
            elif kind == "html_block":  # its source, tags and all: they are words of the page
                span = lines.span(token.map)
                if span is None:
                    if token.content.strip():
                        yield NarrativeText(elide_inline_data(token.content))
                elif span[0] < span[1]:  # a long one a segment at a time
                    for a, b in run_segments(text, *span, sentences=False):
                        yield _place(NarrativeText(elide_inline_data(text[a:b])), (a, b))
            i += 1


def _paragraph_lines(text: str, lines: LineOffsets, paragraph: LongParagraph, marker: str | None,
                     first: int | None = None, end: int | None = None) -> Iterator[tuple[int, str]]:
    """Lines `[first, end)` (by default all) of `paragraph` and their numbers, as its parsed
    text has them (`elide_inline_data(content).split("\n")`): the parser trims the paragraph's
    ends, ends lines with a bare line feed, reads NUL as U+FFFD and a quoted line from past its
    markers (`quote_content`)."""
    starts = lines.starts
    for number in range(paragraph.first if first is None else first, paragraph.end if end is None else end):
        stop = starts[number + 1] - 1 if number + 1 < len(starts) else len(text)
        line = text[quote_content(text, starts[number], stop, paragraph.quotes) : stop]
        if line.endswith("\r"):
            line = line[:-1]
        if number == paragraph.first:
            line = line.lstrip(PARAGRAPH_TRIM)
        if number == paragraph.end - 1:
            line = line.rstrip(PARAGRAPH_TRIM)
        line = _as_parsed(line)
        yield number, f"{marker} {line}" if marker is not None and number == paragraph.first else line


def _as_parsed(text: str) -> str:
    """`text` as the parser's inline content and the elements have it: NUL read as U+FFFD,
    inline data elided."""
    return elide_inline_data(text.replace("\0", "\ufffd"))


def markdown_elements(text: str) -> Iterator[Element]:
    """Elements of a Markdown text, each with `start`/`end` offsets into it, in text order;
    text the parser gives no block to is plain text (`_unstructured`). Parsed a section at a
    time (`parse_sections`)."""
    lines = LineOffsets(text)
    blocks = _Blocks(text, lines)
    for section in parse_sections(text, lines):
        if isinstance(section, LongParagraph):
            yield from blocks.long_paragraph(section)
            continue
        extra = _unstructured(text, section, lines)
        if (head := next(extra, None)) is None:
            yield from blocks.elements(section.tokens)
        else:  # by start (stable): the span search walks the page forward
            yield from heapq.merge(sorted(blocks.elements(section.tokens), key=_start), chain((head,), extra), key=_start)


def _start(element: Element) -> int:
    return element.metadata.start if element.metadata.start is not None else -1


class MarkdownChunker(StructuredTextChunker):
    media_types = frozenset({"text/markdown"})
    page_local = True  # each page is cut from its own text (`chain_runner.cuts_page_by_page`)
    reads_content = False  # cut from the page text alone (`chain_runner.reads_content`)

    def left_out(self, page_text: str) -> list[Span]:
        """The inline-data payloads, which the elements elide (see the module docstring)."""
        return inline_data_spans(page_text)

    def page_elements(self, content: bytes, page: PageOutput) -> Iterator[Element]:
        return markdown_elements(page.text)


class MarkdownProvider(StructuredProvider):
    chunker_class = MarkdownChunker
