"""The project's one Markdown parse: markdown-it-py's CommonMark (raw HTML on, as CommonMark
has it) with GFM tables, and the line offsets its block source maps refer to.

The `markdown` chunker maps the block tokens to elements (`parse_sections`, a run of blocks at
a time); `split_document` lifts code, tables and images out of the tokens of the same parse
(`parse_markdown`), so both see the same blocks in the same places.
"""

import bisect
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: Block tokens that hold text themselves (a container's source map spans its children).
LEAF_BLOCKS = frozenset({"paragraph_open", "heading_open", "fence", "code_block", "html_block", "table_open", "hr"})
#: Characters of source parsed at a time by `parse_sections` (more when one block is longer).
WINDOW_CHARS = 1 << 14

#: A carriage return on its own: markdown-it breaks a line there, `LineOffsets` does not.
_LONE_CR = re.compile(r"\r(?!\n)")


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
    """Character offsets of a text's lines, for markdown-it's line-based source maps (an
    array: a list of a long text's line starts costs a few times the text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = array("q", [0])
        at = text.find("\n")
        while at >= 0:
            self.starts.append(at + 1)
            at = text.find("\n", at + 1)

    def span(self, line_map: list[int] | tuple[int, int] | None, *, trim: bool = True) -> tuple[int, int] | None:
        """The offsets of lines `[first, last)`: with `trim`, without whitespace at either end;
        without, all of them but the line break that ends the last."""
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


def parse_sections(text: str, lines: LineOffsets) -> Iterator[Section]:
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
    container, the rest of the text in a list: from the window where that happens, the rest is
    parsed whole.
    """
    md = _parser(inline=False)
    max_nesting = md.options["maxNesting"]
    count = len(lines.starts)
    if _LONE_CR.search(text):  # line numbers would disagree between the parser and the offsets
        yield Section(md.parse(text), 0, count, max_nesting)
        return
    first, size = 0, WINDOW_CHARS
    while first < count:
        start = lines.starts[first]
        end = max(first + 1, bisect.bisect_left(lines.starts, start + size, first))
        last = end >= count
        tokens = md.parse(text[start:] if last else text[start : lines.starts[end]])
        if not last and _deep(tokens, max_nesting):
            tokens, last = md.parse(text[start:]), True
        if last:  # the rest of the text, parsed whole
            yield Section(_shifted(tokens, first), first, count, max_nesting)
            return
        cut = _last_cut(tokens, lines, first, end - first)
        if cut is None:  # one block fills the window
            size *= 2
            continue
        keep = next(i for i, t in enumerate(tokens) if t.level == 0 and t.map and t.map[0] >= cut)
        yield Section(_shifted(tokens[:keep], first), first, first + cut, max_nesting)
        first, size = first + cut, WINDOW_CHARS


def _deep(tokens: list[Any], max_nesting: int) -> bool:
    """Whether the parser reached its nesting limit (and skipped what followed)."""
    return any(t.nesting == 1 and t.level >= max_nesting - 1 for t in tokens)


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


def _shifted(tokens: list[Any], lines: int) -> list[Any]:
    """`tokens` with their source maps moved down by `lines`."""
    if lines:
        for token in tokens:
            if token.map:
                token.map = [token.map[0] + lines, token.map[1] + lines]
    return tokens
