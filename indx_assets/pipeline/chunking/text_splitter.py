"""Splitting one oversized text into pieces that fit, preferring the best boundary in reach.

The rule, per piece: cut at the right-most sentence end (as `chunking/sentences.py` finds them)
or line break (which survives only in code) that keeps the piece within the limit and at least
half full; failing that at the
right-most space; failing that between characters. With `overlap`, the next piece starts with
the tail of this one, and that tail always starts at a word (it is left out rather than
started mid-word). `unstructured` prefers a line break, then any space, so prose splits
mid-sentence, and its overlap tail starts wherever the character count lands.
"""

import re
from bisect import bisect_left, bisect_right
from itertools import accumulate, islice

from indx_assets.pipeline.chunking.measure import WORD, Measure
from indx_assets.pipeline.chunking.sentences import sentence_ends

#: The right-most whitespace run in a range (greedy prefix pushes the match right).
_LAST_SPACE = re.compile(r"(?s).*\S(\s+)")


class TextSplitter:
    """`split(s) -> (piece, rest, tail_len)`: `piece` fits; `rest` starts with the overlap tail
    (`tail_len` characters of it, separator included) when there is one."""

    def __init__(self, measure: Measure, maxlen: int, overlap: int = 0) -> None:
        self.measure = measure
        self.maxlen = maxlen
        self.overlap = overlap

    def split(self, s: str) -> tuple[str, str, int]:
        s = s.strip()
        end = self._cut(s)
        if end is None:
            return s, "", 0
        piece, rest = s[:end].rstrip(), s[end:].lstrip()
        tail = self.tail(piece) if self.overlap and rest else ""
        if tail:
            return piece, f"{tail} {rest}", len(tail) + 1
        return piece, rest, 0

    def split_all(self, s: str) -> list[tuple[str, int]]:
        """Every piece of `s`, each with the length of the overlap prefix it starts with."""
        pieces: list[tuple[str, int]] = []
        rest, prefix = s, 0
        while rest:
            piece, rest, next_prefix = self.split(rest)
            if piece:
                pieces.append((piece, prefix))
            prefix = next_prefix
        return pieces

    # -- where to cut -------------------------------------------------------------------------

    def _cut(self, s: str) -> int | None:
        """Where to cut `s`: the end of the first piece, or `None` when all of `s` fits."""
        m = self.measure
        if m.unit == "characters":
            return None if len(s) <= self.maxlen else self._cut_chars(s)
        if m.additive:
            return self._cut_additive(s)
        return None if m.size(s) <= self.maxlen else self._cut_counted(s)

    def _strong_end(self, s: str, lo: int, hi: int) -> int | None:
        """The right-most end of a sentence or of a line in `s[lo:hi]` (where a piece would end)."""
        best = None
        for best in sentence_ends(s, lo, hi):  # noqa: B007 (the last one is wanted)
            pass
        newline = s.rfind("\n", lo, hi + 1)
        if newline > 0:
            end = newline
            while end > 0 and s[end - 1] in " \t\r\n":
                end -= 1
            if end >= lo and (best is None or end > best):
                best = end
        return best

    def _cut_chars(self, s: str) -> int:
        maxlen, floor = self.maxlen, self.overlap
        strong = self._strong_end(s, max(floor + 1, (maxlen + 1) // 2), maxlen)
        if strong is not None and strong > floor:
            return strong
        space = _LAST_SPACE.search(s, 0, maxlen + 1)
        if space is not None and space.start(1) > floor and s[: space.start(1)].strip():
            return space.start(1)
        return self._char_cut(s)

    def _cut_additive(self, s: str) -> int | None:
        """Token mode with whitespace-additive counts: sum word counts over a growing window."""
        m, maxlen, floor = self.measure, self.maxlen, self.overlap
        window = min(len(s), maxlen * 8)
        while True:
            words = WORD.findall(s, 0, window)
            sizes = list(accumulate(m.word_counts(words)))  # type: ignore[attr-defined]
            fit = bisect_right(sizes, maxlen)  # words[:fit] fit
            if fit < len(words):
                break
            if window >= len(s):
                return None  # every word fits
            window *= 2
        if fit == 0:
            return self._char_cut(s)
        ends = [w.end() for w in islice(WORD.finditer(s, 0, window), fit)]
        half = bisect_left(sizes, (maxlen + 1) // 2)
        if half < fit:
            strong = self._strong_end(s, ends[half] - 1, ends[fit - 1])
            if strong is not None:
                i = bisect_left(ends, strong)
                if i < fit and ends[i] == strong and sizes[i] > floor:
                    return strong
        if sizes[fit - 1] > floor:
            return ends[fit - 1]
        return self._char_cut(s)

    def _cut_counted(self, s: str) -> int:
        """Token mode with a tokenizer whose counts do not add up: bisect over word ends."""
        m, maxlen, floor = self.measure, self.maxlen, self.overlap
        window = min(len(s), maxlen * 8)
        while window < len(s) and m.size(s[:window]) <= maxlen:
            window *= 2
        ends = [w.end() for w in WORD.finditer(s, 0, min(window, len(s)))]
        lo, hi = 0, len(ends)  # ends[:lo] fit
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if m.size(s[: ends[mid - 1]]) <= maxlen:
                lo = mid
            else:
                hi = mid - 1
        if lo == 0:
            return self._char_cut(s)
        strong = self._strong_end(s, 0, ends[lo - 1])
        if strong is not None:
            size = m.size(s[:strong])
            if size * 2 >= maxlen and size > floor:
                return strong
        if m.size(s[: ends[lo - 1]]) > floor:
            return ends[lo - 1]
        return self._char_cut(s)

    def _char_cut(self, s: str) -> int:
        """The longest prefix that fits, cut between characters (at least one character)."""
        m = self.measure
        if m.unit == "characters":
            return max(1, self.maxlen)
        # what fits is short: bound it by doubling from the limit before bisecting, so a cut
        # measures text in proportion to the limit, not to the rest of a 100 kB run of symbols
        lo, bound = 1, max(1, self.maxlen)
        while bound < len(s) and m.size(s[:bound]) <= self.maxlen:
            lo, bound = bound, bound * 2
        hi = min(bound, len(s))
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if m.size(s[:mid]) <= self.maxlen:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def tail(self, piece: str) -> str:
        """The longest suffix of `piece` that starts at a word and fits in `overlap`."""
        m = self.measure
        if m.unit == "characters":
            if len(piece) <= self.overlap:
                return piece
            start = len(piece) - self.overlap
            if piece[start - 1].isspace():
                return piece[start:].lstrip()
            gap = re.search(r"\s+", piece[start:])
            return piece[start + gap.end() :] if gap else ""
        best = ""
        for word in reversed(list(WORD.finditer(piece))):
            candidate = piece[word.start() :]
            if m.size(candidate) > self.overlap:
                break
            best = candidate
        return best
