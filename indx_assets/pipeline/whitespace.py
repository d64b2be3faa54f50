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
#: A text longer than this is collapsed a window at a time (see `collapse_whitespace`): `re.sub`
#: holds a string per word of a window until it joins them, some 17x the window for short words.
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


def collapse_whitespace(text: str) -> str:
    """`" ".join(text.split())`: whitespace runs made one space, none at the ends.

    A long text is collapsed a window at a time, each window ending before a non-space
    character (so no run spans two): `str.split` holds a string per word and `re.sub` one per
    match until they are joined, so one text of 64 MiB of words cost 14x its size collapsed
    whole. A text with nothing to collapse is given back as it is, not copied."""
    if not _UNCOLLAPSED.search(text) and text[:1] != " " and text[-1:] != " ":
        return text
    if len(text) <= WINDOW:
        return _SPACE.sub(" ", text).strip()
    first = _NOT_SPACE.search(text)
    if first is None:
        return ""
    end = len(text)
    while text[end - 1].isspace():  # `\s` is `str.isspace`
        end -= 1
    out, at = "", first.start()
    while at < end:
        cut = _NOT_SPACE.search(text, min(at + WINDOW, end), end)
        stop = cut.start() if cut else end
        out += _SPACE.sub(" ", text[at:stop])  # grows in place: CPython extends a string only this name holds
        at = stop
    return out


def iter_words(text: str) -> Iterator[str]:
    """`text.split()`, a word at a time for a long text (a string per word, all held at once,
    costs some 10x the text)."""
    if len(text) <= WINDOW:
        return iter(text.split())
    return (m.group() for m in _WORD.finditer(text))
