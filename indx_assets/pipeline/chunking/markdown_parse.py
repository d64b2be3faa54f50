"""The project's one Markdown parse: markdown-it-py's CommonMark (raw HTML on, as CommonMark
has it) with GFM tables, and the line offsets its block source maps refer to.

The `markdown` chunker maps the tokens to elements; `split_document` lifts code, tables and
images out of the same tokens, so both see the same blocks in the same places.
"""

from typing import Any


def parse_markdown(text: str) -> tuple[list[Any], int]:
    """The block tokens of `text`, and the parser's nesting limit (past it, markdown-it gives
    no token to the rest of the text)."""
    from markdown_it import MarkdownIt  # a chunker's module scope stays cheap

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    return md.parse(text), md.options["maxNesting"]


class LineOffsets:
    """Character offsets of a text's lines, for markdown-it's line-based source maps."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
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
