"""Splitting one oversized text into pieces that fit, preferring the best boundary in reach.

The rule, per piece: cut at the right-most sentence end (as `chunking/sentences.py` finds them)
or line break (which survives only in code) that keeps the piece within the limit and at least
half full; failing that at the right-most space; failing that between characters. With
`overlap`, the next piece starts with the tail of this one, as the text has it: the tail always
starts at a word (it is left out rather than started mid-word) and leaves room for the next word
(its first words are left out rather than that word cut apart). `unstructured` prefers a line
break, then any space, so prose splits mid-sentence, and its overlap tail starts wherever the
character count lands.
"""

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from itertools import accumulate, islice

from indx_assets.pipeline.chunking.measure import WORD, Measure
from indx_assets.pipeline.chunking.sentences import sentence_ends

#: The right-most whitespace run in a range (greedy prefix pushes the match right).
_LAST_SPACE = re.compile(r"(?s).*\S(\s+)")
_NOT_SPACE = re.compile(r"\S")


class TextSplitter:
    """`split(s) -> (piece, rest, tail_len)`: `piece` fits; `rest` starts with the overlap tail
    (`tail_len` characters of it, with the whitespace after it) when there is one.

    The text still to cut is a stretch `s[base:end]` of the text given, not a copy of it: a
    cut reads the text in proportion to the piece it makes, so cutting a long text costs time
    in proportion to its length (a copy of the rest at each cut made a 16 MiB log file of
    one paragraph take 52 s to chunk, four times the time of half its size)."""

    def __init__(self, measure: Measure, maxlen: int, overlap: int = 0) -> None:
        self.measure = measure
        self.maxlen = maxlen
        self.overlap = overlap

    def split(self, s: str, prefix: int = 0) -> tuple[str, str, int]:
        """The first piece of `s`, the text left for the next one, and that text's prefix;
        `s` starts with `prefix` characters of overlap repeated from the piece before."""
        base, end, prefix = self._start(s, prefix)
        cut = self._cut(s, base, end, past=base + prefix)
        if cut is None:
            return s[base:end], "", 0
        piece_end, rest = _rstripped(s, base, cut), _lstripped(s, cut, end)
        start = self._next_start(s, base, piece_end, rest, end)
        return s[base:piece_end], s[start:end], rest - start

    def split_all(self, s: str, prefix: int = 0) -> list[tuple[str, int]]:
        """`iter_split`, all at once."""
        return list(self.iter_split(s, prefix))

    def iter_split(self, s: str, prefix: int = 0) -> Iterator[tuple[str, int]]:
        """Every piece of `s`, each with the length of the overlap prefix it starts with, cut as
        it is asked for: the pieces `split` gives, one after another, of what each leaves (`s`
        itself starts with `prefix` characters of overlap). Each cut reads `maxlen` when it is
        made: set between pieces, it sizes the pieces after (a table's continuations are narrower
        by the header they repeat)."""
        base, end, prefix = self._start(s, prefix)
        while base < end:
            cut = self._cut(s, base, end, past=base + prefix)
            if cut is None:
                yield s[base:end], prefix
                return
            piece_end, rest = _rstripped(s, base, cut), _lstripped(s, cut, end)
            yield s[base:piece_end], prefix
            base = self._next_start(s, base, piece_end, rest, end)
            prefix = rest - base

    def _start(self, s: str, prefix: int) -> tuple[int, int, int]:
        """The stretch of `s` to cut (`s` stripped) and the overlap it starts with: `prefix`
        characters (the caller's), less its first words where they leave no room for a word."""
        base, end = _stripped(s, 0, len(s))
        if not prefix:
            return base, end, 0
        rest = base + prefix
        base = self._room_for_a_word(s, base, rest, end)
        return base, end, rest - base

    def _next_start(self, s: str, base: int, piece_end: int, rest: int, end: int) -> int:
        """Where the text after the piece `s[base:piece_end]` starts: at `rest`, or earlier by
        its overlap tail. The next text is a stretch of `s` (the tail, what stands between it
        and the rest, and the rest), so a long text is cut in time in proportion to it.

        The tail is `tail` (never the whole piece), stripped as the next text is (a tokenizer
        may count a form feed into the tail's first word), with room for a word after it."""
        if not self.overlap or rest >= end:
            return rest
        tail = self.tail(s[base:piece_end], whole=False).lstrip()
        return self._room_for_a_word(s, piece_end - len(tail), rest, end) if tail else rest

    def _room_for_a_word(self, s: str, start: int, rest: int, end: int) -> int:
        """`start`, the start of the overlap `s[start:rest]` that a text repeats before its new
        text at `rest`, moved past the overlap's first words until the first new word fits
        beside it (to `rest` when none can). A piece ends past the overlap it starts with, so
        an overlap that left no room for a whole word would have one cut apart; a cut inside
        a word leaves the rest of that word as the first new one."""
        word = WORD.search(s, rest, end)
        following = word.end() if word else rest
        while start < rest and self.measure.size(s[start:following]) > self.maxlen:
            first = WORD.match(s, start)
            start = _lstripped(s, first.end(), rest) if first else rest
        return start

    # -- where to cut: each takes the text `s[base:end]` (stripped) and says where in `s` the
    # first piece ends, reading `s` no further back than `base` (see `sentence_ends`); a cut
    # at a boundary falls after `past`, where the overlap the text starts with ends, so a piece
    # holds more than it repeats, and (in tokens) after a counted token ----------------------

    def _cut(self, s: str, base: int, end: int, past: int) -> int | None:
        """Where to cut `s[base:end]`: the end of the first piece, or `None` when all of it fits."""
        m = self.measure
        if m.unit == "characters":
            return None if end - base <= self.maxlen else self._cut_chars(s, base, end, past)
        if m.additive:
            return self._cut_additive(s, base, end, past)
        return None if m.size(s[base:end]) <= self.maxlen else self._cut_counted(s, base, end, past)

    def _strong_end(self, s: str, base: int, end: int, lo: int, hi: int) -> int | None:
        """The right-most end of a sentence or of a line in `s[lo:hi]` (where a piece would end)."""
        best = None
        for best in sentence_ends(s, lo, hi, floor=base):  # noqa: B007 (the last one is wanted)
            pass
        newline = s.rfind("\n", lo, min(hi + 1, end))
        if newline > base:
            line_end = newline
            while line_end > base and s[line_end - 1] in " \t\r\n":
                line_end -= 1
            if line_end >= lo and (best is None or line_end > best):
                best = line_end
        return best

    def _cut_chars(self, s: str, base: int, end: int, past: int) -> int:
        maxlen = self.maxlen
        strong = self._strong_end(s, base, end, max(past + 1, base + (maxlen + 1) // 2), base + maxlen)
        if strong is not None and strong > past:
            return strong
        space = _LAST_SPACE.search(s, base, min(base + maxlen + 1, end))
        if space is not None and space.start(1) > past and s[base : space.start(1)].strip():
            return space.start(1)
        return self._char_cut(s, base, end)

    def _cut_additive(self, s: str, base: int, end: int, past: int) -> int | None:
        """Token mode with whitespace-additive counts: sum word counts over a growing window."""
        m, maxlen = self.measure, self.maxlen
        window = min(end - base, maxlen * 8)
        while True:
            words = WORD.findall(s, base, min(base + window, end))
            sizes = list(accumulate(m.word_counts(words)))  # type: ignore[attr-defined]
            fit = bisect_right(sizes, maxlen)  # words[:fit] fit
            if fit < len(words):
                break
            if window >= end - base:
                return None  # every word fits
            window *= 2
        if fit == 0:
            return self._char_cut(s, base, end)
        ends = [w.end() for w in islice(WORD.finditer(s, base, min(base + window, end)), fit)]
        half = bisect_left(sizes, (maxlen + 1) // 2)
        if half < fit:
            strong = self._strong_end(s, base, end, ends[half] - 1, ends[fit - 1])
            if strong is not None:
                i = bisect_left(ends, strong)
                if i < fit and ends[i] == strong and strong > past and sizes[i] > 0:
                    return strong
        if ends[fit - 1] > past and sizes[fit - 1] > 0:
            return ends[fit - 1]
        return self._char_cut(s, base, end)

    def _cut_counted(self, s: str, base: int, end: int, past: int) -> int:
        """Token mode with a tokenizer whose counts do not add up: bisect over word ends."""
        m, maxlen = self.measure, self.maxlen
        window = min(end - base, maxlen * 8)
        while window < end - base and m.size(s[base : base + window]) <= maxlen:
            window *= 2
        ends = [w.end() for w in WORD.finditer(s, base, min(base + window, end))]
        lo, hi = 0, len(ends)  # ends[:lo] fit
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if m.size(s[base : ends[mid - 1]]) <= maxlen:
                lo = mid
            else:
                hi = mid - 1
        if lo == 0:
            return self._char_cut(s, base, end)
        strong = self._strong_end(s, base, end, base, ends[lo - 1])
        if strong is not None:
            size = m.size(s[base:strong])
            if size * 2 >= maxlen and strong > past and size > 0:
                return strong
        if ends[lo - 1] > past and m.size(s[base : ends[lo - 1]]) > 0:
            return ends[lo - 1]
        return self._char_cut(s, base, end)

    def _char_cut(self, s: str, base: int, end: int) -> int:
        """The end of the longest prefix that fits, cut between characters (at least one character)."""
        m = self.measure
        if m.unit == "characters":
            return base + max(1, self.maxlen)
        # what fits is short: bound it by doubling from the limit before bisecting, so a cut
        # measures text in proportion to the limit, not to the rest of a 100 kB run of symbols
        lo, bound = 1, max(1, self.maxlen)
        while bound < end - base and m.size(s[base : base + bound]) <= self.maxlen:
            lo, bound = bound, bound * 2
        hi = min(bound, end - base)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if m.size(s[base : base + mid]) <= self.maxlen:
                lo = mid
            else:
                hi = mid - 1
        return base + lo

    def tail(self, piece: str, *, whole: bool = True) -> str:
        """The longest suffix of `piece` that starts at a word and fits in `overlap`; not all
        of `piece` unless `whole` (the walk through one text asks for less: a piece repeated
        whole as the next one's start would be cut again and again, and an overlap close to the
        limit looped forever; a whole short chunk may open the next chunk)."""
        m = self.measure
        if m.unit == "characters":
            if whole and len(piece) <= self.overlap:
                return piece
            start = max(1, len(piece) - self.overlap)
            if start >= len(piece):
                return ""
            if piece[start - 1].isspace():
                return piece[start:].lstrip()
            gap = re.search(r"\s+", piece[start:])
            return piece[start + gap.end() :] if gap else ""
        best = ""
        for word in reversed(list(WORD.finditer(piece))):
            if word.start() == 0 and not whole:
                break
            candidate = piece[word.start() :]
            if m.size(candidate) > self.overlap:
                break
            best = candidate
        return best


def _stripped(s: str, start: int, end: int) -> tuple[int, int]:
    """`s[start:end].strip()` as the offsets of what it keeps."""
    return _lstripped(s, start, end), _rstripped(s, start, end)


def _lstripped(s: str, start: int, end: int) -> int:
    """Where `s[start:end].lstrip()` starts in `s`."""
    word = _NOT_SPACE.search(s, start, end)
    return word.start() if word else end


def _rstripped(s: str, start: int, end: int) -> int:
    """Where `s[start:end].rstrip()` ends in `s`."""
    while end > start and s[end - 1].isspace():
        end -= 1
    return end
