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

from indx_assets.pipeline.chunking.sentences import CLOSERS, ends_sentence, sentence_ends
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


#: The most characters of the page one element of a run holds (`run_segments`).
SEGMENT = 1 << 20


def run_segments(text: str, start: int, end: int, *, sentences: bool = True) -> Iterator[tuple[int, int]]:
    """The run `text[start:end]` as the spans of its elements: one, unless it is longer than
    `SEGMENT`. A longer run (a log, a word list, a book with no blank line) is cut into elements
    of about `SEGMENT` characters, each at the last sentence end in its second half (with
    `sentences`; code has none), else line break, else space: a chunk never spans two, which
    costs a chunk boundary a MiB, where a chunk may end anyway, and spares the chunker a copy of
    the whole run beside the page (`collapsed_run`). Only a sentence end that no space follows
    (CJK text) falls inside a word: a word longer than half a segment ends its segment, whole
    (an inline image's data, cut in two, would leave its second half in the chunks). No segment
    is shorter than half of one (the last takes what would be left): a short one would pass for
    a heading or a lead-in line (`chunkers.base`), which a stretch of a paragraph is not. A
    segment has no whitespace at its ends, but where the run has (code may): a stretch of only
    whitespace is no segment (so one that fills a segment's second half leaves it short)."""
    while end - start > SEGMENT:
        half, limit = start + SEGMENT // 2, start + SEGMENT
        cut = None
        for cut in sentence_ends(text, half, limit, floor=start) if sentences else ():  # noqa: B007 (the last one is wanted)
            pass
        if cut is None:  # (a break at `half` itself would make a segment of only its first half)
            cut = max(text.rfind("\n", half + 1, limit), text.rfind("\r", half + 1, limit))  # a Mac's lines end in "\r"
            cut = cut if cut >= 0 else _last_space(text, half + 1, limit)
        if cut <= half:  # no boundary in the second half: the segment ends with the word it is in
            found = _SPACE.search(text, limit, end)
            if found is None:
                break
            cut = found.start()
        following = _NOT_SPACE.search(text, cut, end)
        if following is None or end - following.start() < SEGMENT // 2:
            break  # (a code block may end in whitespace: then the last segment takes it)
        while cut > start and text[cut - 1].isspace():
            cut -= 1
        if cut > start:  # (a stretch of a code block only whitespace is no segment)
            yield start, cut
        start = following.start()
    yield start, end


def code_segments(text: str, start: int, end: int, first_line: int | None = None) -> Iterator[tuple[int, int, int]]:
    """The segments of the code or markup `text[start:end]` (`run_segments` at line ends: code
    has no sentences), each as where its text starts and its span. The first's text starts at
    `first_line` (by default `start`); a later one's at its first line's start, so that line
    keeps its indent, which is the code's (at its span, where a line too long for a segment was
    cut at a space)."""
    floor = None  # where the segment before ended
    for a, b in run_segments(text, start, end, sentences=False):
        if floor is None:
            yield (start if first_line is None else first_line), a, b
        else:
            found = max(text.rfind("\n", floor, a), text.rfind("\r", floor, a))
            yield (found + 1 if found >= 0 else a), a, b
        floor = b


def _last_space(text: str, start: int, end: int) -> int:
    """Where the last whitespace of `text[start:end]` is (-1 for none)."""
    found = _LAST_SPACE.match(text, start, end)
    return found.start(1) if found else -1


_NOT_SPACE = re.compile(r"\S")
_SPACE = re.compile(r"\s")
#: The right-most whitespace character in a range, matched at its start (a greedy prefix pushes
#: the match right; searched, a range with none would be tried again from each character).
_LAST_SPACE = re.compile(r"(?s).*(\s)")
#: A clause end at the end of a line (a list or a quote follows it, not more of the sentence).
_ENDS_CLAUSE = re.compile(rf"[:;：；][{CLOSERS}]*\s*$")


def _runs_on(line: str, after: str) -> bool:
    """Whether a sentence runs on from `line` into `after` (no sentence or clause end, then
    lower case)."""
    head = after.lstrip()[:1]
    return bool(head) and head.islower() and not ends_sentence(line) and _ENDS_CLAUSE.search(line) is None
