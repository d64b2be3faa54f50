"""Which single line breaks inside a paragraph are element boundaries.

Plain text and Markdown join the lines of a paragraph with single line breaks, and the
chunkers collapse whitespace, so a line break inside one element can never be a chunk
boundary. That is right for hard-wrapped prose (lines of at most ~80-100 characters that end
mid-sentence) but wrong for text that writes one paragraph, message or heading per line with
no blank line between them (Wikipedia dumps, chat logs, exported notes): there a whole
article is one "paragraph", and it is cut wherever the size limit lands instead of between
its paragraphs. The rule: a line break is a boundary when a line next to it is longer than
`WRAP_WIDTH` characters, which few hard-wrapped lines are; runs of short lines (hard-wrapped
prose, table rows, an author list) stay together. A sentence that runs on is never cut: a
line that ends without a sentence end followed by one that starts in lower case is the same
paragraph, however long (text dumped from PDFs wraps at 90 to 130 characters).
"""

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from indx_assets.pipeline.chunking.sentences import CLOSERS, ends_sentence
from indx_assets.pipeline.whitespace import WINDOW, collapse_whitespace

#: A line's key (`iter_line_runs`).
K = TypeVar("K")

#: Longer than any hard-wrapped line (editors wrap at 72-80, some at 100).
WRAP_WIDTH = 100


def line_runs(lines: Sequence[str]) -> list[tuple[int, int]]:
    """Half-open index ranges `[i, j)` of `lines` that stay one element, in order."""
    return [(first, last + 1) for first, last in iter_line_runs(enumerate(lines))]


def iter_line_runs(lines: Iterable[tuple[K, str]]) -> Iterator[tuple[K, K]]:
    """The runs of `lines` (each with a key: its index, its span) that stay one element, in
    order, as the keys of their first and last line: each given once the line after it is
    read, so a paragraph of a million lines is never held as its lines."""
    first: K | None = None
    previous: tuple[K, str] | None = None
    for key, line in lines:
        if previous is None:
            first = key
        elif (len(previous[1].strip()) > WRAP_WIDTH or len(line.strip()) > WRAP_WIDTH) and not _runs_on(previous[1], line):
            yield first, previous[0]  # type: ignore[misc]
            first = key
        previous = key, line
    if previous is not None:
        yield first, previous[0]  # type: ignore[misc]


def collapsed_run(text: str, start: int, end: int, clean: Callable[[str], str] | None = None) -> str | None:
    """The run `text[start:end]` as a chunker holds it when it is long: collapsed from the page
    (`collapse_whitespace`, then `clean`), as its chunks are cut from it; cut as it is and then
    collapsed, a long run was held twice beside the page. None when the run is held as the page
    has it: a run of at most `WINDOW` characters, or one that collapses short (mostly
    whitespace: short, it could pass for a title or a lead-in line, `chunkers.base`, which the
    page's lines are not)."""
    if end - start <= WINDOW:
        return None
    held = collapse_whitespace(text, start, end)
    if clean is not None:
        held = clean(held)
    return held if len(held) > WINDOW // 2 else None


#: A clause end at the end of a line (a list or a quote follows it, not more of the sentence).
_ENDS_CLAUSE = re.compile(rf"[:;：；][{CLOSERS}]*\s*$")


def _runs_on(line: str, after: str) -> bool:
    """Whether a sentence runs on from `line` into `after` (no sentence or clause end, then
    lower case)."""
    head = after.lstrip()[:1]
    return bool(head) and head.islower() and not ends_sentence(line) and _ENDS_CLAUSE.search(line) is None
