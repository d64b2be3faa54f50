"""The project's one Markdown parse: markdown-it-py's CommonMark (raw HTML on, as CommonMark
has it) with GFM tables, and the line offsets its block source maps refer to.

The `markdown` chunker maps the block tokens to elements (`parse_sections`, a run of blocks at
a time: a list longer than that a run of its items, a paragraph longer than that as its lines,
`LongParagraph`); `split_document` lifts code, tables and images out of the tokens of the same
parse (`parse_markdown`), so both see the same blocks in the same places.
"""

import bisect
import functools
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: Block tokens that hold text themselves (a container's source map spans its children).
LEAF_BLOCKS = frozenset({"paragraph_open", "heading_open", "fence", "code_block", "html_block", "table_open", "hr"})
#: Characters of source parsed at a time by `parse_sections` (more when one block is longer).
WINDOW_CHARS = 1 << 14

try:  #: What the parser trims from a paragraph's ends: CommonMark's whitespace from 4.3 on
    from markdown_it.common.utils import MD_TRIM_CHARS as PARAGRAPH_TRIM
except ImportError:  # pragma: no cover (the installed parser decides)
    PARAGRAPH_TRIM = None  # type: ignore[assignment]  # `str.strip`'s, before 4.3

#: A line break as markdown-it reads one (its `normalize`): CR LF, or a CR or LF alone.
_LINE_BREAK = re.compile(r"\r\n?|\n")


def _parser(*, inline: bool = True) -> Any:
    from markdown_it import MarkdownIt  # a chunker's module scope stays cheap

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    return md if inline else md.disable("inline")


def parse_markdown(text: str) -> tuple[list[Any], int]:
    """The tokens of `text`, inline ones with their children, and the parser's nesting limit
    (past it, markdown-it gives no token to the rest of the text)."""
    md = _parser()
    return md.parse(text), md.options["maxNesting"]


class LineOffsets:
    """Character offsets of a text's lines, broken where markdown-it breaks them (a carriage
    return alone too, as old Mac files end lines), for its line-based source maps (an array: a
    list of a long text's line starts costs a few times the text; of 4-byte offsets when they
    fit, a tenth of a text of 72-character lines)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = array("I" if len(text) < 1 << 32 else "q", [0])
        if "\r" in text:
            for m in _LINE_BREAK.finditer(text):
                self.starts.append(m.end())
            return
        at = text.find("\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = text.find("\n", at + 1)

    def source(self, first: int, end: int) -> str:
        """The text of lines `[first, end)`, line breaks and all."""
        starts = self.starts
        return self.text[starts[first] : starts[end] if end < len(starts) else len(self.text)]

    def span(self, line_map: list[int] | tuple[int, int] | None, *, trim: bool = True) -> tuple[int, int] | None:
        """The offsets of lines `[first, last)`: with `trim`, without whitespace at either end;
        without, all of them but the line break that ends the last (its line feed, or its
        carriage return alone)."""
        if not line_map:
            return None
        first, last = line_map
        start = self.starts[first] if first < len(self.starts) else len(self.text)
        end = self.starts[last] if last < len(self.starts) else len(self.text)
        if not trim:
            return start, end if end == len(self.text) or end == start else end - 1
        while end > start and self.text[end - 1].isspace():
            end -= 1
        while start < end and self.text[start].isspace():
            start += 1
        return start, end


@dataclass(frozen=True, slots=True)
class Section:
    """Whole top-level blocks of a text: their block tokens (no inline parse; source maps
    counted from the text's first line), the lines `[first, end)` they span, and the parser's
    nesting limit."""

    tokens: list[Any]
    first: int
    end: int
    max_nesting: int


@dataclass(frozen=True, slots=True)
class LongParagraph:
    """A top-level paragraph on lines `[first, end)` that runs past a window, or one of a
    top-level blockquote `quotes` deep (its lines hold the quotes' markers): its tokens are not
    made (markdown-it holds a paragraph some 7x over: its line arrays, a normalized copy, its
    lines joined); the chunker reads its lines from the text as the parser would join them
    (`chunkers.markdown`; a quoted line less its markers, `quote_content`)."""

    first: int
    end: int
    quotes: int = 0


def parse_sections(text: str, lines: LineOffsets) -> Iterator[Section | LongParagraph]:
    """The block tokens of `text` a section at a time, never the whole text's at once (they
    cost some 20x the text): as parsing it whole gives them.

    markdown-it decides where a top-level block ends from the lines up to the block that
    follows, and starts each top-level block afresh. So the blocks a window of the text holds
    are the whole text's, up to any top-level block that starts after a blank line; a window
    is kept up to the last such block that ends before the window does, and the next window
    starts there. (A block cut short by the window's end, or a link definition whose title it
    cuts, only ever changes the lines after its start with no blank line between.) That block
    must start on a line a leaf block holds, so the text no block holds (`_unstructured` in the
    chunker) lies within one section. Past the nesting limit markdown-it skips the rest of its
    container: in a list, that is the rest of the text, which a window's parse then skips to
    its end, and no block holds it; in a blockquote, the rest is parsed whole.

    A top-level paragraph that runs past the window (where a cut may be made, `_runs_past`) is
    followed to its end a window at a time (`_paragraph_end`) and given as a `LongParagraph`,
    unless a setext underline turns out to make it a heading, its last line is one the parser
    trims away, or it may be a link reference definition: those are parsed whole. So is a
    paragraph of a top-level blockquote, or of a quote within it (a mail quoted whole, no blank
    line in it); the quotes that go on after it the section after opens again, as at a cut of a
    quote (below).

    A top-level fenced code block, HTML block or indented code that runs past the window is
    followed to its end a window at a time (`_block_end`, `_code_end`), and the section ends
    with it: its token's map is made its whole span, its content is not (the chunker takes its
    text from the page, `code_text` for indented code).

    A top-level list that runs past the window is cut before its last item there
    (`_list_cut`): the items before it are the whole text's (each ends where the next one's
    marker is), and from that item on the text parses as a list that starts there, whose
    opening token is left out of the next section (the list goes on). A top-level blockquote
    is cut alike, before its last block that starts after a blank line of it (`_quote_cut`),
    or of a quote within it that runs past the window too (a reply quoting a reply); a parse
    that starts there opens the quotes around that block, whose opening tokens are left out.
    """
    md = _parser(inline=False)
    max_nesting = md.options["maxNesting"]
    count = len(lines.starts)
    first, size, follow, reopened = 0, WINDOW_CHARS, True, 0
    while first < count:
        start = lines.starts[first]
        end = max(first + 1, bisect.bisect_left(lines.starts, start + size, first))
        last = end >= count
        tokens = md.parse(text[start:] if last else text[start : lines.starts[end]])
        if not last and _deep(tokens, max_nesting):
            if not _skips_the_rest(tokens, max_nesting):
                tokens = md.parse(text[start:])
            last = True
        skip = reopened  # the openings of a list or of blockquotes an earlier section opened
        if last:  # the rest of the text, parsed whole
            yield Section(_shifted(tokens[skip:], first), first, count, max_nesting)
            return
        cut = _last_cut(tokens, lines, first, end - first)
        if cut is None and follow and (paragraph := _runs_past(tokens, lines, first, end - first)) is not None:
            keep, opens, depth = paragraph
            followed = _paragraph_end(md, lines, end - 1, depth)
            if followed is not None:
                paragraph_end, going_on = followed
                if opens > 0:
                    yield Section(_shifted(tokens[skip:keep], first), first, first + opens, max_nesting)
                yield LongParagraph(first + opens, paragraph_end, quotes=depth)
                first, size, reopened = paragraph_end, WINDOW_CHARS, going_on
                continue
            # a setext heading, a last line trimmed away, quotes that go on from a line no parse
            # starts them on: parsed whole, however long
            follow = False
        if cut is None and (block := _runs_past_block(tokens, lines, first, end - first)) is not None:
            token = tokens[block]
            opening = first + token.map[0]
            if token.type == "code_block":
                closed = _code_end(md, lines, opening, first + token.map[1])
            else:
                closed = _block_end(md, lines, opening, max(end - 1, opening + 1))
            token.map = [token.map[0], closed - first]
            yield Section(_shifted(tokens[skip : block + 1], first), first, closed, max_nesting)
            first, size, follow, reopened = closed, WINDOW_CHARS, True, 0
            continue
        if cut is None and (item := _list_cut(md, tokens, lines, first, end - first)
                            or _quote_cut(md, tokens, lines, first, end - first)) is not None:
            keep, line, depth = item
            yield Section(_shifted(tokens[skip:keep], first), first, first + line, max_nesting)
            first, size, follow, reopened = first + line, WINDOW_CHARS, True, depth
            continue
        if cut is None:  # one block fills the window
            size *= 2
            continue
        keep = next(i for i, t in enumerate(tokens) if t.level == 0 and t.map and t.map[0] >= cut)
        yield Section(_shifted(tokens[skip:keep], first), first, first + cut, max_nesting)
        first, size, follow, reopened = first + cut, WINDOW_CHARS, True, 0


def _deep(tokens: list[Any], max_nesting: int) -> bool:
    """Whether the parser reached its nesting limit (and skipped what followed)."""
    return any(t.nesting == 1 and t.level >= max_nesting - 1 for t in tokens)


_LIST_TOKENS = frozenset({"bullet_list_open", "ordered_list_open", "list_item_open"})


def _skips_the_rest(tokens: list[Any], max_nesting: int) -> bool:
    """Whether what the parser skips at its nesting limit is the rest of the text: a list item
    parses its content up to where its parent's ends, so in lists within lists that is the
    text's end (a window's parse skips to the window's end); a blockquote's content ends with
    it."""
    opened: list[str] = []
    for token in tokens:
        if token.nesting == 1 and token.level >= max_nesting - 1:
            return all(kind in _LIST_TOKENS for kind in (*opened, token.type))
        if token.nesting == 1:
            opened.append(token.type)
        elif token.nesting == -1 and opened:
            opened.pop()
    return False


def _last_cut(tokens: list[Any], lines: LineOffsets, first: int, window: int) -> int | None:
    """The last line of a window of `window` lines (counted from `first`, not its first) where
    a top-level block starts after a blank line, on a line a leaf block holds, and ends before
    the window does (see `parse_sections`): a block the window's end cuts short may be another
    kind of block in the whole text (a link definition whose destination is on the next line
    is a paragraph without it)."""
    leaves = {t.map[0] for t in tokens if t.type in LEAF_BLOCKS and t.map}
    text, starts = lines.text, lines.starts
    for token in reversed(tokens):
        if token.level != 0 or not token.map or token.nesting == -1 or token.map[1] >= window:
            continue
        line = token.map[0]
        if line > 0 and line in leaves and not text[starts[first + line - 1] : starts[first + line]].strip(" \t\r\n"):
            return line
    return None


def _last_block(tokens: list[Any]) -> int | None:
    """The index of the token that opens (or is) the last top-level block of `tokens`."""
    return next((i for i in range(len(tokens) - 1, -1, -1)
                 if tokens[i].level == 0 and tokens[i].nesting >= 0 and tokens[i].map), None)


#: Blocks that end where their own lines say (a heading's line or underline, a closing fence,
#: an HTML block's end condition): the line after one starts a block afresh, but after a setext
#: heading only where the heading does (`_starts_afresh`).
_CLOSED_BLOCKS = frozenset({"heading_open", "hr", "fence", "html_block"})


def _runs_past(tokens: list[Any], lines: LineOffsets, first: int, window: int) -> tuple[int, int, int] | None:
    """Where a paragraph starts that runs to the end of the window (`window` lines counted from
    `first`), the last top-level block or the last block of the innermost of the blockquotes,
    each its container's last block, that run past the window too: the index of its opening
    token, its line, and how many quotes deep it is. So long as it starts where a cut may be
    made or under a paragraph that does (`_starts_afresh`), the window holds its second line
    (with it, its first may open a table) and its first line cannot open a link reference
    definition (one that spans the window's end is a paragraph in the window, a definition in
    the whole text)."""
    quotes = _quotes_past(tokens, window)
    at = _last_within(tokens, quotes[-1]) if quotes else _last_block(tokens)
    if at is None:
        return None
    token = tokens[at]
    if token.type != "paragraph_open" or token.map[1] != window or window - token.map[0] < 2:
        return None
    if not _starts_afresh(tokens, at, quotes, lines, first, under=True):
        return None
    line, depth = token.map[0], len(quotes)
    opening = _content(lines, first + line, depth)
    if _may_define(opening) or not opening.strip(PARAGRAPH_TRIM):
        return None
    return at, line, depth


def _quotes_past(tokens: list[Any], window: int) -> list[int]:
    """The indices of the blockquotes, one within another, each its container's last block
    (the first the last top-level one), that run to the end of the window (`window` lines)."""
    quotes: list[int] = []
    at = _last_block(tokens)
    while at is not None and tokens[at].type == "blockquote_open" and tokens[at].map[1] == window:
        quotes.append(at)
        at = _last_within(tokens, at)
    return quotes


def _content(lines: LineOffsets, number: int, depth: int) -> str:
    """Line `number`, without its line break, as a block `depth` quotes deep reads it (less
    its markers, `quote_content`)."""
    start, end = lines.span([number, number + 1], trim=False)  # type: ignore[misc]  # a line given: a span
    return lines.text[quote_content(lines.text, start, end, depth) : end]


def _may_define(line: str) -> bool:
    """Whether `line`, a block's first, may open a link reference definition."""
    return line.lstrip(" \t").startswith("[")


def _starts_afresh(tokens: list[Any], at: int, quotes: list[int], lines: LineOffsets, first: int, *,
                   under: bool = False) -> bool:
    """Whether the block `tokens[at]` opens, within the blockquotes `tokens[quotes]` open (the
    outermost first), starts where a cut may be made: on the window's first line, after a blank
    line (of its quote), right after a block whose end its own lines tell, or first in its quote
    where that quote starts so; with `under`, under a paragraph it interrupts (a mail's "On
    Monday, … wrote:") that starts so and whose first line cannot open a link reference
    definition (it ends there in the whole text too). Elsewhere, what ended the block before it
    may lie past the window: a link reference definition leaves no token, and its title (or
    label) may run on for lines (cut short, the definition ends at its destination, and a
    paragraph starts on the title's first line), through a setext underline (`===`, which makes
    that paragraph a heading: one counts as a block that ends on its own lines only where it
    starts so too)."""
    line = tokens[at].map[0]
    if line == 0:
        return True
    if quotes and tokens[quotes[-1]].map[0] == line:
        return _starts_afresh(tokens, quotes[-1], quotes[:-1], lines, first, under=under)
    before = _block_before(tokens, at, quotes[-1] if quotes else -1)
    if before is not None and tokens[before].map[1] == line:
        kind = tokens[before].type
        setext = kind == "heading_open" and tokens[before].markup in ("=", "-")
        if kind in _CLOSED_BLOCKS and not setext:
            return True
        if setext or (under and kind == "paragraph_open"):  # lines that end here in the whole text if they start so
            return (not _may_define(_content(lines, first + tokens[before].map[0], len(quotes)))
                    and _starts_afresh(tokens, before, quotes, lines, first))
    previous, start = lines.starts[first + line - 1], lines.starts[first + line]
    if not quotes:
        return not lines.text[previous:start].strip(" \t\r\n")
    return _quote_blank(len(quotes)).fullmatch(lines.text, previous, start) is not None


def _block_before(tokens: list[Any], at: int, container: int) -> int | None:
    """The index of the token that opens (or is) the block before the one `tokens[at]` opens, in
    the container `tokens[container]` opens (-1: the text)."""
    level = tokens[at].level
    return next((i for i in range(at - 1, container, -1)
                 if tokens[i].level == level and tokens[i].nesting >= 0 and tokens[i].map), None)


#: Top-level blocks followed to their end when they run past a window: each ends where its own
#: lines say (a closing fence, an HTML block's end condition; indented code at a line that is
#: neither blank nor indented), whatever came before them.
_FOLLOWED = frozenset({"fence", "html_block", "code_block"})


def _runs_past_block(tokens: list[Any], lines: LineOffsets, first: int, window: int) -> int | None:
    """The index of a fenced code block, an HTML block or indented code, the last top-level
    block of `tokens`, if it runs to the end of the window (`window` lines counted from
    `first`): indented code does when only blank lines follow it there; a fence or an HTML
    block when the window holds its second line too (with it, its first may open a table)."""
    at = _last_block(tokens)
    if at is None or tokens[at].type not in _FOLLOWED:
        return None
    opening, end = tokens[at].map
    if tokens[at].type == "code_block":
        return at if end >= window or _blank(lines, first + end, first + window) else None
    return at if end == window and window - opening >= 2 else None


def _blank(lines: LineOffsets, first: int, end: int) -> bool:
    """Whether lines `[first, end)` are blank as the parser tells a blank line: spaces and tabs."""
    return not lines.source(first, end).strip(" \t\r\n")


def _head(lines: LineOffsets, opening: int) -> str:
    """Line `opening`, which opens a block, to parse in front of a later window of lines: its
    break a line feed (a carriage return alone before a window that opens with a blank line,
    its line feed, would read as one break, and the lines would count one short)."""
    return lines.source(opening, opening + 1).rstrip("\r\n") + "\n"


#: A line parsed between a block's opening line and a later window of its lines, so the opening
#: line opens the block it opens in the whole text: the window's first line, a table's
#: delimiter row, would make it a table's header row. No fence, HTML block or indented code
#: ends at it, and none is opened by a line behind it.
_SPACER = "x\n"


def _window(lines: LineOffsets, line: int, size: int = 0) -> tuple[str, int]:
    """Lines from `line` on, as many as `size` characters (`WINDOW_CHARS` by default) or two at
    least, or the rest of the text, and the line after them."""
    starts, count = lines.starts, len(lines.starts)
    end = min(count, max(line + 2, bisect.bisect_left(starts, starts[line] + (size or WINDOW_CHARS), line)))
    return lines.source(line, end), end


def _block_end(md: Any, lines: LineOffsets, opening: int, line: int) -> int:
    """The line after a top-level fenced code block or HTML block opened on line `opening` that
    runs on through `line` at least (a line after `opening`): the line after its closing fence
    or end condition, or the text's end.

    Its lines from `line` on are parsed a window at a time behind its opening line (and
    `_SPACER`), so the parser ends it where it ends in the whole text (a closing fence, an end
    condition, is told from its own line). A window's last line is read again as the next
    window's first: a block that ends there and one that does not both run to the window's
    end."""
    head, count = _head(lines, opening) + _SPACER, len(lines.starts)
    while True:
        window, end = _window(lines, line)
        block = md.parse(head + window)[0]
        after = line + block.map[1] - 2  # the parse's first two lines are the opening and the spacer
        if end >= count or after < end:
            return after
        line = end - 1


def _code_end(md: Any, lines: LineOffsets, opening: int, line: int) -> int:
    """The line after top-level indented code opened on line `opening` that runs on through
    `line` at least.

    Its lines from `line` on are parsed a window at a time behind its opening line: the parser
    tells each line of indented code from that line alone (and no table opens on one), and
    ends the block at its last code line before a line that is neither blank nor code. A
    window of blank lines alone tells nothing: the next is twice as long."""
    head, count, size = _head(lines, opening), len(lines.starts), WINDOW_CHARS
    while True:
        window, end = _window(lines, line, size)
        after = line + md.parse(head + window)[0].map[1] - 1  # the parse's first line is the opening line
        if end >= count or not _blank(lines, after, end):
            return after
        size = WINDOW_CHARS if after > line else size * 2
        line = after


#: Four columns of indent, of spaces or up to a tab stop: what each line of indented code loses
#: in its text (`_CODE_INDENT`: at the start of a line after the first).
_FOUR_COLUMNS = re.compile(r" {4}| {0,3}\t")
_CODE_INDENT = re.compile(rf"(?<=[\r\n])(?:{_FOUR_COLUMNS.pattern})")
#: An indent that a tab ends, which a plain replace of four spaces cannot take.
_TAB_INDENT = re.compile(r"(?<=[\r\n]) {0,3}\t")
#: A line break that is a carriage return alone.
_LONE_CR = re.compile(r"\r(?!\n)")


def code_text(text: str, start: int, end: int) -> str:
    """The text of top-level indented code whose lines run from `start` (a line's start) to `end`
    in `text`, as the parser's content has it: each line less four columns of indent, a NUL read
    as U+FFFD; but for the spaces of a blank line (under four columns, kept).

    Made by `str.replace` from a slice of the page, its line breaks as the page has them: two
    copies of the code at most while it is made, one kept. Unless a carriage return alone ends a
    line, or a tab indents one: then its line breaks are made line feeds first, as the parser
    reads them (a blank line's indent taken from between a carriage return and a line feed would
    join two line breaks into one). Only where a tab indents a line are the indents taken by a
    regular expression, which holds each line apart while it joins them (a log pasted as code,
    its lines cut and joined again, cost some 4x the block)."""
    first = _FOUR_COLUMNS.match(text, start)
    source = text[first.end() if first else start : end]
    if "\0" in source:
        source = source.replace("\0", "\ufffd")
    tabbed = "\t" in source and _TAB_INDENT.search(source) is not None
    if "\r" in source and (tabbed or _LONE_CR.search(source)):
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    if tabbed:
        return _CODE_INDENT.sub("", source)
    return source.replace("\n    ", "\n")


_LISTS = frozenset({"bullet_list_open", "ordered_list_open"})


def _list_cut(md: Any, tokens: list[Any], lines: LineOffsets, first: int,
              window: int) -> tuple[int, int, int] | None:
    """Where to cut a window whose last top-level block is a list that runs past its end: the
    index of the token that opens the list's last item there that can start a section, its
    line (counted from `first`) and the one list a parse from there opens again. Such an item
    is not the list's first; a leaf block starts on its line (so the text no block holds lies
    within one section, as at a cut of `parse_sections`); and a parse that starts at its line
    opens a list of the same kind with it (the parser tells its first block from that line and
    the next)."""
    at = _last_block(tokens)
    if at is None or tokens[at].type not in _LISTS or tokens[at].map[1] != window:
        return None
    leaves = {t.map[0] for t in tokens if t.type in LEAF_BLOCKS and t.map}
    text, starts, count = lines.text, lines.starts, len(lines.starts)
    opening = tokens[at].map[0]
    for i in range(len(tokens) - 1, at, -1):
        item = tokens[i]
        if item.type != "list_item_open" or item.level != 1 or not item.map:
            continue
        line = item.map[0]
        if line <= opening:
            return None
        if line not in leaves:
            continue
        after = first + line + 2
        probe = md.parse(text[starts[first + line] : starts[after] if after < count else len(text)])
        if (len(probe) > 1 and probe[0].type == tokens[at].type and probe[1].type == "list_item_open"
                and probe[1].map and probe[1].map[0] == 0 and probe[1].markup == item.markup):
            return i, line, 1
    return None


#: A line that opens a blockquote where a block may start: its marker after at most three spaces.
_QUOTE_OPENING = re.compile(r" {0,3}>")


@functools.cache
def _quote_blank(depth: int) -> re.Pattern[str]:
    """A blank line of a blockquote `depth` quotes deep: their markers alone (the first after
    at most three spaces)."""
    return re.compile(rf" {{0,3}}>(?:[ \t]*>){{{depth - 1}}}[ \t]*(?:\r\n?|\n)?")


def _quote_cut(md: Any, tokens: list[Any], lines: LineOffsets, first: int,
               window: int) -> tuple[int, int, int] | None:
    """Where to cut a window whose last top-level block is a blockquote that runs past its end:
    the index of the token that opens the last block there, of that quote or of the innermost
    quote within it that runs past the window too (each its quote's last block), that starts
    after a blank line of its quote, on a line a leaf block holds, and ends before the window
    does; its line (counted from `first`); and how many quotes deep it is.

    Inside a blockquote markdown-it parses the lines less their markers as a text of their own,
    so a block there that starts after a blank line starts afresh, as a top-level one does (see
    `parse_sections`); and a line after a blank line of a blockquote is in it only with its
    marker (not as a lazy continuation). Whether each later line is a quote's, markdown-it tells
    from that line and the last marked one. So a parse that starts at the block's line opens
    the quotes around it, whose lines and blocks from there are the whole text's, if it opens
    them all there: a marker may be indented four columns (in the quote, a line is only not
    outdented), and with the line after it (a lazy delimiter row) the line may open a table,
    which the parser tries first."""
    quotes = _quotes_past(tokens, window)
    if not quotes:
        return None
    leaves = {t.map[0] for t in tokens if t.type in LEAF_BLOCKS and t.map}
    text, starts = lines.text, lines.starts
    for depth in range(len(quotes), 0, -1):  # (the innermost quote's blocks come last)
        at, blank = quotes[depth - 1], _quote_blank(depth)
        opening = tokens[at].map[0]
        for i in range(len(tokens) - 1, at, -1):
            block = tokens[i]
            if block.level != depth or not block.map or block.nesting == -1 or block.map[1] >= window:
                continue
            line = block.map[0]
            if line <= opening:
                break
            if (line in leaves and blank.fullmatch(text, starts[first + line - 1], starts[first + line])
                    and _opens_quotes(md, lines, first + line, depth)):
                return i, line, depth
    return None


def _last_within(tokens: list[Any], at: int) -> int | None:
    """The index of the token that opens (or is) the last block of the container `tokens[at]`
    opens, which is the last of its own container (as far as `tokens` hold: the search runs
    from their end)."""
    level = tokens[at].level + 1
    return next((i for i in range(len(tokens) - 1, at, -1)
                 if tokens[i].level == level and tokens[i].nesting >= 0 and tokens[i].map), None)


def _opens_quotes(md: Any, lines: LineOffsets, line: int, depth: int) -> bool:
    """Whether a parse of line `line` and the next opens `depth` blockquotes, one in another,
    at that line (its first marker at most three spaces in, told before a parse)."""
    if not _QUOTE_OPENING.match(lines.text, lines.starts[line]):
        return False
    probe = md.parse(lines.source(line, line + 2))
    return len(probe) > depth and all(token.type == "blockquote_open" and token.level == level and token.map[0] == 0
                                      for level, token in enumerate(probe[:depth]))


def quote_content(text: str, start: int, end: int, depth: int = 1) -> int:
    """Where the parser reads the content of the line `text[start:end]` of a paragraph `depth`
    blockquotes deep from: past the markers of as many of them as the line is marked in
    (however indented: after a quote's first line, a line of it is only not outdented; a line
    marked in fewer is a lazy line of the rest), each with the one space after it, or a tab
    there that reaches a tab stop, as markdown-it counts columns from the quotes around it."""
    if not depth:  # (a top-level paragraph's line, read as it is)
        return start
    at = start
    while at < end and text[at] in " \t":
        at += 1
    columns, spaced = _columns(text, start, at, 0, 0), 0  # (the parser's `sCount` and `bsCount`)
    content = start
    for _ in range(depth):
        if at >= end or text[at] != ">":
            break
        at += 1
        initial = offset = columns + 1
        space, adjust = at < end and text[at] in " \t", False
        if at < end and (text[at] == " " or (text[at] == "\t" and (spaced + offset) % 4 == 3)):
            at, initial, offset = at + 1, initial + 1, offset + 1
        elif at < end and text[at] == "\t":
            adjust = True
        content = at
        while at < end and text[at] in " \t":
            offset = _columns(text, at, at + 1, offset, spaced + adjust)
            at += 1
        spaced, columns = columns + 1 + space, offset - initial
    return content


def _columns(text: str, start: int, end: int, offset: int, shift: int) -> int:
    """`offset` past the spaces and tabs `text[start:end]`, a tab to the next stop of four
    columns counted with `shift` more (as markdown-it counts a quote's line)."""
    for ch in text[start:end]:
        offset += 4 - (offset + shift) % 4 if ch == "\t" else 1
    return offset


def unquoted(text: str, start: int, end: int, depth: int = 1) -> str:
    """The stretch `text[start:end]` of a paragraph `depth` quotes deep less its lines' markers
    (as many as `depth`) and the space or tab after each, to be collapsed (where the parser reads
    a tab as content, it is whitespace all the same); its first line's too if the stretch starts
    at that line's markers. A lazy line has no marker to take: a line of a quote that starts
    with one is no lazy line of it.

    Made a window of lines at a time, each window from a line break on (so the markers after it
    are the window's): sliced whole and then made anew, the stretch was held twice at once."""
    leading, later = _quote_markers(depth)
    line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    if not text[line_start:start].strip(" \t") and (found := leading.match(text, start, end)) is not None:
        start = found.end()
    out = ""
    for at, until in _line_windows(text, start, end):  # (`out` grows in place, see `collapse_whitespace`)
        out += later.sub("", text[at:until])
    return out


@functools.cache
def _quote_markers(depth: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Up to `depth` blockquote markers at a line's start, after any spaces and tabs, each with
    the space or tab after it: at a stretch's start, and at each line's start after it."""
    markers = rf"(?:[ \t]*>[ \t]?){{1,{depth}}}"
    return re.compile(markers), re.compile(rf"(?<=[\r\n]){markers}")


def _line_windows(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """`text[start:end]` as stretches of about `WINDOW_CHARS` characters, each after the first
    starting at a line break."""
    while start < end:
        found = _LINE_BREAK.search(text, min(start + WINDOW_CHARS, end), end)
        until = found.start() if found else end
        yield start, until
        start = until


def _paragraph_end(md: Any, lines: LineOffsets, line: int, depth: int = 0) -> tuple[int, int] | None:
    """The line after a paragraph `depth` blockquotes deep (0: a top-level one) that runs on
    through `line` at least, and how many of the quotes around it go on after it; None if a
    setext underline ends it (then it is a heading), if its last line is all whitespace the
    parser trims (then its text has fewer lines than its source: the chunker keeps it whole),
    or if the quotes go on from a line a parse cannot start them on as the whole text has them.

    The paragraph's lines from `line` on are parsed a window at a time behind a line of their
    own ("x", "> > x"), which opens the quotes and a paragraph they continue, so the parser
    ends it where it ends in the whole text: a blank line, or a line that may interrupt a
    paragraph, which the parser tells from that line and the next (a table's delimiter row),
    and whether a line is a quote's from its marker, or as a lazy line after one that is not
    blank. So a window's last line is read again as the next window's first. Quotes that go
    on after the paragraph go on with a blank line of the innermost of them or a block that
    interrupts the paragraph: a parse that starts there opens them with it (not as a table's
    header row), and their lines and blocks are the whole text's (see `_quote_cut`)."""
    count = len(lines.starts)
    while True:
        window, end = _window(lines, line)
        last = end >= count
        tokens = md.parse("> " * depth + "x\n" + window)
        head = tokens[depth]
        if head.type != "paragraph_open":
            return None
        after = line + head.map[1] - 1  # the parse's first line is not the text's
        if last or after < end:
            if not _content(lines, after - 1, depth).strip(PARAGRAPH_TRIM):
                return None
            going_on = sum(1 for quote in tokens[:depth] if quote.map[1] > head.map[1])
            if going_on and not _opens_quotes(md, lines, after, going_on):
                return None
            return after, going_on
        line = end - 1


def _shifted(tokens: list[Any], lines: int) -> list[Any]:
    """`tokens` with their source maps moved down by `lines`."""
    if lines:
        for token in tokens:
            if token.map:
                token.map = [token.map[0] + lines, token.map[1] + lines]
    return tokens
