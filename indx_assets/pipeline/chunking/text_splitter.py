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
_NOT_SPACE = re.compile(r"\S")


class TextSplitter:
    """`split(s) -> (piece, rest, tail_len)`: `piece` fits; `rest` starts with the overlap tail
    (`tail_len` characters of it, separator included) when there is one.

    The text still to cut is a stretch `s[base:end]` of the text given, not a copy of it: a
    cut reads the text in proportion to the piece it makes, so cutting a long text costs time
    in proportion to its length (a copy of the rest at each cut made a 16 MiB log file of
    one paragraph take 52 s to chunk, four times the time of half its size)."""

    def __init__(self, measure: Measure, maxlen: int, overlap: int = 0) -> None:
        self.measure = measure
        self.maxlen = maxlen
        self.overlap = overlap

    def split(self, s: str) -> tuple[str, str, int]:
        base, end = _stripped(s, 0, len(s))
        cut = self._cut(s, base, end)
        if cut is None:
            return s[base:end], "", 0
        piece_end, rest_start = _rstripped(s, base, cut), _lstripped(s, cut, end)
        piece, rest = s[base:piece_end], s[rest_start:end]
        # stripped as the next text is (a tokenizer may count a form feed into the tail's first word)
        tail = self.tail(piece, whole=False).lstrip() if self.overlap and rest else ""
        if tail and piece_end == rest_start:  # cut inside a word: the tail goes on into its rest
            return piece, s[piece_end - len(tail) : end], len(tail)
        if tail:
            return piece, f"{tail} {rest}", len(tail) + 1
        return piece, rest, 0

    def split_all(self, s: str) -> list[tuple[str, int]]:
        """Every piece of `s`, each with the length of the overlap prefix it starts with: the
        pieces `split` gives, one after another, of what each leaves."""
        pieces: list[tuple[str, int]] = []
        base, end = _stripped(s, 0, len(s))
        prefix = 0
        while base < end:
            cut = self._cut(s, base, end)
            if cut is None:
                pieces.append((s[base:end], prefix))
                break
            piece_end, rest = _rstripped(s, base, cut), _lstripped(s, cut, end)
            piece = s[base:piece_end]
            pieces.append((piece, prefix))
            tail = self.tail(piece, whole=False).lstrip() if self.overlap and rest < end else ""
            if not tail:
                base, prefix = rest, 0
                continue
            prefix = len(tail) + (piece_end < rest)
            # the next text is the tail, a space and the rest (no space where the cut fell
            # inside a word)
            if s[piece_end:rest] in ("", " "):  # it stands so in `s` already
                base = piece_end - len(tail)
            else:  # a line break or a run of spaces between: it is written out (a copy of the
                # rest, as every cut made before: an overlap on a long text of lines costs that)
                s = f"{tail} {s[rest:end]}"
                base, end = _stripped(s, 0, len(s))
        return pieces

    # -- where to cut: each takes the text `s[base:end]` (stripped) and says where in `s` the
    # first piece ends, reading `s` no further back than `base` (see `sentence_ends`) ----------

    def _cut(self, s: str, base: int, end: int) -> int | None:
        """Where to cut `s[base:end]`: the end of the first piece, or `None` when all of it fits."""
        m = self.measure
        if m.unit == "characters":
            return None if end - base <= self.maxlen else self._cut_chars(s, base, end)
        if m.additive:
            return self._cut_additive(s, base, end)
        return None if m.size(s[base:end]) <= self.maxlen else self._cut_counted(s, base, end)

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

    def _cut_chars(self, s: str, base: int, end: int) -> int:
        maxlen, floor = self.maxlen, self.overlap
        strong = self._strong_end(s, base, end, base + max(floor + 1, (maxlen + 1) // 2), base + maxlen)
        if strong is not None and strong - base > floor:
            return strong
        space = _LAST_SPACE.search(s, base, min(base + maxlen + 1, end))
        if space is not None and space.start(1) - base > floor and s[base : space.start(1)].strip():
            return space.start(1)
        return self._char_cut(s, base, end)

    def _cut_additive(self, s: str, base: int, end: int) -> int | None:
        """Token mode with whitespace-additive counts: sum word counts over a growing window."""
        m, maxlen, floor = self.measure, self.maxlen, self.overlap
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
                if i < fit and ends[i] == strong and sizes[i] > floor:
                    return strong
        if sizes[fit - 1] > floor:
            return ends[fit - 1]
        return self._char_cut(s, base, end)

    def _cut_counted(self, s: str, base: int, end: int) -> int:
        """Token mode with a tokenizer whose counts do not add up: bisect over word ends."""
        m, maxlen, floor = self.measure, self.maxlen, self.overlap
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
            if size * 2 >= maxlen and size > floor:
                return strong
        if m.size(s[base : ends[lo - 1]]) > floor:
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
