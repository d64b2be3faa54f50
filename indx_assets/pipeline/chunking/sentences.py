"""Where sentences end: the one rule that packing, sentence pieces and `split_document` share.

A sentence ends after a run of terminal punctuation, together with the closing quotes and
brackets and the reference markers ("[7]", "[citation needed]") right after it, which stay with
the sentence they close:

- CJK terminators (`。！？｡`, and the fullwidth full stop `．` unless a digit follows it, as in
  "３．１４") end a sentence wherever they stand: CJK text puts no space after them.
- ASCII `.`, `!`, `?` and `…` end a sentence when whitespace or the end of the text follows,
  and `!`, `?` and `…` also when CJK text follows. So "3.14", "1.2.3" and "example.com" are
  never cut.
- A single `.` does not end a sentence after an abbreviation: a title ("Mr.", "Dr.", "Prof.",
  "St.", ...), a Latin or reference shorthand ("vs.", "cf.", "approx.", "ca."), an initialism
  of single letters ("U.S.", "e.g.", "i.e.", "a.m."), a one-letter initial ("John F. Kennedy"),
  the "al." of "et al.", or a word that stands before a number ("Fig. 3", "No. 5", "pp. 12").
  What case the next word starts in decides nothing: lower-cased text (the 10-K filings of
  Chroma's benchmark) starts its sentences in lower case.

Every function returns offsets into the text it is given, so callers slice the source text
itself and keep it byte-exact. Sentence ends are judged against the whole text (what follows a
range's end and the word before its start count), so a range gets the same ends as the text.

Libraries were measured first, on the shared corpus's text and Markdown (3.6 MB): `blingfire`
0.1.8 (a trained FSM, last released 2021) takes 3.9 s against this rule's 1.1 s, fails an
assertion on some inputs and has no place for reference markers; `syntok` 1.4.4 takes ~85x
this rule's time and does not cut Chinese at all.
"""

import re
from collections.abc import Iterator

#: A span of text: start and end offsets.
Span = tuple[int, int]

#: A reference marker right after a sentence's full stop, as encyclopedic and news text writes
#: them ("...in 1862.[7] Next", "[12, 13]", "[a]", "[citation needed]").
CITATION = r"\[\w{1,10}(?:[ ,–-]{1,2}\w{1,10}){0,4}\]"
#: Closing quotes and brackets that stay with the sentence they close.
CLOSERS = "\"'”’»›」』）)】》\\]"
#: CJK scripts and fullwidth forms (text that puts no space after its sentence ends).
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
_TAIL = rf"[{CLOSERS}]*(?:{CITATION}[{CLOSERS}]*)*"
_END = re.compile(
    rf"(?:[。！？｡]|．(?![0-9０-９]))+{_TAIL}"
    rf"|(?P<ascii>[.!?…]+){_TAIL}(?=\s|\Z|(?P<cjk>[{CJK}]))"
)
#: The characters every sentence end starts with. Searching for them first and matching `_END`
#: only there finds the same ends as `_END.finditer`, 2.5x faster: `re` scans a pattern that
#: starts with one character set by a fast prefix search, and `_END` starts with an alternation.
_TERMINATOR = re.compile(r"[。！？｡．.!?…]")
#: A run of the ASCII-style terminators. Where `_END` finds no end at a run's first character
#: it finds none inside the run either (the same run endings are tried from there, with the
#: same text after them), so the search goes on after the run: a dot leader ("Abomination
#: ........ 12", a contents page) is one failed match, not one per dot, each rescanning the
#: rest of the run.
_ASCII_RUN = re.compile(r"[.!?…]+")
#: Titles written before a name: never the end of a sentence.
_TITLES = frozenset("Mr Mrs Ms Mx Dr Prof Rev Hon St Mt Gen Col Lt Sgt Capt Gov Sen Messrs".split())
#: Shorthands that a sentence goes on after.
_SHORTHANDS = frozenset("vs cf viz approx ca incl esp resp".split())
#: Words that stand before a number ("Fig. 3", "No. 5").
_BEFORE_NUMBERS = frozenset("Fig Figs fig figs Eq Eqs eq eqs No Nos no nos Vol vol pp p Ch ch Sec sec Art art Ref Refs ref refs".split())
#: The word before a full stop (letters, digits and the dots of an initialism).
_WORD_BEFORE = re.compile(r"[\w.]{1,20}\Z")
#: An initialism of single letters ("U.S", "e.g", "a.m"), or a one-letter capital initial.
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]|[A-Z]")
_NEXT = re.compile(r"\s*(\S?)")


def _abbreviation(text: str, dot: int, floor: int) -> bool:
    """Whether the `.` at `dot` closes an abbreviation (see the module docstring); the text
    starts at `floor`."""
    found = _WORD_BEFORE.search(text, max(floor, dot - 20), dot)
    if found is None:
        return False
    word = found.group()
    if word in _TITLES or word in _SHORTHANDS or _INITIALS.fullmatch(word):
        return True
    if word == "al":
        return text.endswith("et ", floor, found.start())
    return word in _BEFORE_NUMBERS and _NEXT.match(text, dot + 1).group(1).isdigit()  # type: ignore[union-attr]


def _ends(text: str, m: re.Match[str], floor: int) -> bool:
    """Whether the candidate `m` ends a sentence (the rules a pattern cannot say)."""
    run = m.group("ascii")
    if run is None:
        return True
    if m.group("cjk") is not None:
        return run.strip(".") != ""  # "!", "?" or "…" before CJK text; a "." before it is not an end
    return run != "." or not _abbreviation(text, m.start("ascii"), floor)


def sentence_ends(text: str, start: int = 0, end: int | None = None, floor: int = 0) -> Iterator[int]:
    """Offsets in `text[start:end]` where a sentence ends (after its closing punctuation,
    before the whitespace that follows), in order. The end of `text` counts when punctuation
    ends it; `text[floor:]` is the text whose sentences these are (what stands before `floor`
    is not looked at), so a caller walking a long text need not slice it."""
    stop = len(text) if end is None else end
    pos = start
    # the search ends at `stop`: a long run with no terminator is scanned once, not to the text's end
    while (candidate := _TERMINATOR.search(text, pos, stop)) is not None:
        m = _END.match(text, candidate.start())
        if m is None:
            run = _ASCII_RUN.match(text, candidate.start())
            pos = run.end() if run is not None else candidate.start() + 1
            continue
        if m.end() > stop:
            return
        if _ends(text, m, floor):
            yield m.end()
        pos = m.end()


def ends_sentence(text: str) -> bool:
    """Whether `text` (trailing whitespace aside) ends with a sentence end."""
    body = text.rstrip()
    tail = max(0, len(body) - 80)  # closers and markers are short: the end lies in the tail
    last = None
    for last in sentence_ends(body, tail):  # noqa: B007 (the last one is wanted)
        pass
    return bool(body) and last == len(body)


def trim_span(text: str, span: Span) -> Span:
    """`span` without the whitespace at its ends."""
    s, e = span
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


_LINE_BREAK = re.compile(r"\s*\n\s*")


def sentence_spans(text: str, span: Span | None = None, *, lines: bool = True) -> list[Span]:
    """The sentences of `text[span]` (all of `text` by default), whitespace-trimmed, non-empty.

    With `lines`, a sentence never runs across a line break (in plain text a heading or a list
    item is not part of the next line); without, for a span already known to be one paragraph,
    a line break is just a space."""
    start, end = (0, len(text)) if span is None else span
    if lines:
        pieces, pos = [], start
        for m in _LINE_BREAK.finditer(text, start, end):
            pieces.append((pos, m.start()))
            pos = m.end()
        pieces.append((pos, end))
        return [s for piece in pieces for s in sentence_spans(text, piece, lines=False)]
    return list(iter_sentence_spans(text, start, end))


def iter_sentence_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[Span]:
    """The sentences of `text[start:end]`, whitespace-trimmed, non-empty, one at a time (a line
    break is just a space: `sentence_spans` without `lines`)."""
    stop = len(text) if end is None else end
    for e in sentence_ends(text, start, stop):
        sentence = trim_span(text, (start, e))
        if sentence[0] < sentence[1]:
            yield sentence
        start = e
    last = trim_span(text, (start, stop))
    if last[0] < last[1]:
        yield last
