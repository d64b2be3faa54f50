"""Which single line breaks inside a paragraph are element boundaries.

Plain text and Markdown join the lines of a paragraph with single line breaks, and the
chunkers collapse whitespace, so a line break inside one element can never be a chunk
boundary. That is right for hard-wrapped prose (lines of at most ~80-100 characters that end
mid-sentence) but wrong for text that writes one paragraph, message or heading per line with
no blank line between them (Wikipedia dumps, chat logs, exported notes): there a whole
article is one "paragraph", and it is cut wherever the size limit lands instead of between
its paragraphs. The rule: a line break is a boundary when a line next to it is longer than
`WRAP_WIDTH` characters, which no hard-wrapped line is; runs of short lines (hard-wrapped
prose, table rows, an author list) stay together.
"""

from collections.abc import Sequence

#: Longer than any hard-wrapped line (editors wrap at 72-80, some at 100).
WRAP_WIDTH = 100


def line_runs(lines: Sequence[str]) -> list[tuple[int, int]]:
    """Half-open index ranges `[i, j)` of `lines` that stay one element, in order."""
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(lines)):
        if len(lines[i - 1].strip()) > WRAP_WIDTH or len(lines[i].strip()) > WRAP_WIDTH:
            runs.append((start, i))
            start = i
    if lines:
        runs.append((start, len(lines)))
    return runs
