"""Whitespace: the one rule the HTML reader, the chunkers and the measure share for a text's
words (collapsed) and its lines."""

import re
from collections.abc import Iterator

_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\S+")
_NOT_SPACE = re.compile(r"\S")
#: Whitespace `collapse_whitespace` changes inside a text: any but a single space.
_UNCOLLAPSED = re.compile(r"[^\S ]|  ")
#: What ends a line for `str.splitlines`.
_LINE_END = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
#: A text longer than this is collapsed (`collapse_whitespace`), split into its words
#: (`iter_words`) and measured (`chunking.measure`) a window at a time: a string per word of a
#: window is held at once, some 17x the window for short words.
WINDOW = 1 << 16


def blank(text: str) -> bool:
    """Whether `text` is empty or all whitespace: `not text.strip()`, without the copy of a
    page that `strip` makes when the page ends with a line break."""
    return not text or text.isspace()


def iter_lines(text: str) -> Iterator[str]:
    """`text.splitlines()`, a line at a time (a string per line, all held at once, costs
    several times a text of short lines)."""
    start = 0
    for m in _LINE_END.finditer(text):
        yield text[start : m.start()]
        start = m.end()
    if start < len(text):
        yield text[start:]


def collapse_whitespace(text: str, start: int = 0, end: int | None = None) -> str:
    """`" ".join(text[start:end].split())`: whitespace runs made one space, none at the ends
    (`start` and `end` are offsets into `text`, not negative).

    A long text is collapsed a window at a time, each window ending before a non-space
    character (so no run spans two): `str.split` holds a string per word and `re.sub` one per
    match until they are joined, so one text of 64 MiB of words cost 14x its size collapsed
    whole. A stretch of a text is collapsed from the text itself, never sliced out whole first,
    and a whole text with nothing to collapse is given back as it is, not copied."""
    stop = len(text) if end is None else min(end, len(text))
    if not _UNCOLLAPSED.search(text, start, stop) and text[start : start + 1] != " " and text[stop - 1 : stop] != " ":
        return text if start == 0 and stop == len(text) else text[start:stop]
    if stop - start <= WINDOW:
        return _SPACE.sub(" ", text[start:stop]).strip()
    first = _NOT_SPACE.search(text, start, stop)
    if first is None:
        return ""
    while text[stop - 1].isspace():  # `\s` is `str.isspace`
        stop -= 1
    out = ""
    # `out` grows in place, as CPython extends a string only one name holds, but only in code
    # it has specialized: a `for` loop's jump back has it do so, a `while` test's does not in
    # 3.11 (each step then copied the text so far: twice the text at the last)
    for at, until in _windows(text, first.start(), stop):
        out += _SPACE.sub(" ", text[at:until])
    return out


def _windows(text: str, start: int, stop: int) -> Iterator[tuple[int, int]]:
    """`text[start:stop]` as stretches of about `WINDOW` characters, each ending before a
    non-space character (so no whitespace run spans two)."""
    while start < stop:
        cut = _NOT_SPACE.search(text, min(start + WINDOW, stop), stop)
        until = cut.start() if cut else stop
        yield start, until
        start = until


def iter_words(text: str) -> Iterator[str]:
    """`text.split()`, a word at a time for a long text (a string per word, all held at once,
    costs some 10x the text)."""
    if len(text) <= WINDOW:
        return iter(text.split())
    return (m.group() for m in _WORD.finditer(text))
