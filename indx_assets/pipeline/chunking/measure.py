"""How chunk sizes are measured: in characters, or in tokens of a caller's tokenizer.

A tokenizer is anything with `.count(text) -> int` (optionally `.count_batch(texts)`, and
`.count_words(words)` for many single words at once).
Token counting is the expensive part of token-limited chunking, so it is organised for speed:

- A tokenizer whose tokens never cross whitespace (BERT's WordPiece, the embedder's own, is
  one) is *whitespace-additive*: the count of a text is the sum of the counts of its
  whitespace-separated words. Such a tokenizer is asked for the count of a word once while the
  word is in use, and every element, join and split is summed from a cache of counts, exactly.
  The cache belongs to the tokenizer object, shared by every measure of it (a chunker measures
  page after page, and a document's pages share most of their words); it keeps the words of
  the last `WORD_CACHE_LIMIT` learnt and those met since (`WordCache`).
- Any other tokenizer is asked for whole texts (in batches where it offers `count_batch`), and
  joins are counted exactly where they are decided.

A tokenizer declares additivity with a `whitespace_additive` attribute; a `tokenizers`
tokenizer with BERT normalisation and pre-tokenization is recognised without it.
"""

import re
import weakref
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, filterfalse
from typing import Any, Protocol

from indx_assets.pipeline.tokenizer import TokenCounter
from indx_assets.pipeline.whitespace import WINDOW

#: Characters Python's `str.split()` treats as whitespace but BERT's normaliser deletes
#: (controls), so they must not separate words when counting per word.
_DELETED_CONTROLS = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"
_ODD = re.compile(f"[{_DELETED_CONTROLS}]")
_ODD_SPLIT = re.compile(rf"[^\S{_DELETED_CONTROLS}]+")
#: A word: a run of characters that are not whitespace (deleted controls belong to the word).
WORD = re.compile(rf"(?:[^\s]|[{_DELETED_CONTROLS}])+")


def words_of(text: str) -> list[str]:
    """The `WORD`s of `text`, in order: `str.split()` finds the same ones, three times faster,
    when no deleted control is in it."""
    return WORD.findall(text) if _ODD.search(text) else text.split()


class Measure(Protocol):
    """Sizes of texts in one unit. `additive`: size(a + whitespace + b) == size(a) + join + size(b)."""

    unit: str
    additive: bool

    def size(self, text: str) -> int: ...

    def sizes(self, texts: Sequence[str], bound: int | None = None) -> list[int]: ...

    def join_cost(self, separator: str) -> int: ...


class CharMeasure:
    """Sizes in characters (exact and additive by construction)."""

    unit = "characters"
    additive = True

    def size(self, text: str) -> int:
        return len(text)

    def sizes(self, texts: Sequence[str], bound: int | None = None) -> list[int]:
        return list(map(len, texts))

    def join_cost(self, separator: str) -> int:
        return len(separator)


def whitespace_additive(tokenizer: Any) -> bool:
    """True when `tokenizer` never forms a token across whitespace (see the module docstring)."""
    declared = getattr(tokenizer, "whitespace_additive", None)
    if declared is not None:
        return bool(declared)
    inner = getattr(tokenizer, "tokenizer", None)
    pre = getattr(inner, "pre_tokenizer", None)
    norm = getattr(inner, "normalizer", None)
    if type(pre).__name__ != "BertPreTokenizer" or type(norm).__name__ not in ("BertNormalizer", "NoneType"):
        return False
    # a cheap guard against a tokenizer that only looks like BERT from here
    probe = ("Chunk boundaries", "decide retrieval quality.")
    return tokenizer.count(" ".join(probe)) == sum(tokenizer.count(p) for p in probe)


_SPACE = re.compile(r"\s")
#: Words a generation of a tokenizer's shared cache holds (`WordCache`): some 4 MiB of a log's.
WORD_CACHE_LIMIT = 32_768
#: Characters of words a generation holds: long words (a blob, and its prefixes, which a cut
#: between characters measures) fill it before their number does.
WORD_CACHE_CHARS = 1 << 21


class _Generation(dict[str, int]):
    """The words learnt or met lately and their counts, and how many characters they have; a
    word only the generation before has is read from that one, and kept in this one."""

    def __init__(self) -> None:
        super().__init__()
        self.before: dict[str, int] = {}
        self.chars = 0

    def __missing__(self, word: str) -> int:
        count = self[word] = self.before[word]  # a KeyError when neither has it: not counted yet
        self.chars += len(word)
        return count


class WordCache:
    """A tokenizer's word counts, shared by every measure of it, in two generations: the words
    learnt or met lately (`counts`, which measures sum from) and those of the generation before.
    When the new one is full (of words, or of characters) it becomes the old one, and a word of
    the old one met again comes back into the new one: a document's common words stay, counted
    once, and its words met only once (a log's ids and times, a list's links, a blob's prefixes
    as it is cut) go. A single cache of 200,000 words held some 30 MiB of them, about as much as
    the 32 MiB log or list that brought them; one bound by words alone, 26 MB of the prefixes of
    the blobs of a 2.9 MB log."""

    def __init__(self) -> None:
        self.counts = _Generation()

    def learn(self, words: set[str], count: Callable[[list[str]], list[int]]) -> None:
        """Make `counts` give every word of `words`, counting with `count` those neither generation has."""
        counts = self.counts
        # looked up in C: most words are known already (not by `words.difference(counts)`, which
        # for a dict that is a subclass goes through all of the dict's words)
        missing = set(filterfalse(counts.__contains__, words))
        if not missing:
            return
        if len(counts) + len(missing) > WORD_CACHE_LIMIT or counts.chars + sum(map(len, missing)) > WORD_CACHE_CHARS:
            # a new generation, empty: what is met again of this one comes back as it is read
            counts.before = dict(counts)
            counts.clear()
            counts.chars = 0
        missing = missing.difference(counts.before)
        if missing:
            new = list(missing)
            counts.update(zip(new, count(new)))
            counts.chars += sum(map(len, new))


#: Per tokenizer object: whether it is whitespace-additive, and its shared word counts.
_SHARED: "weakref.WeakKeyDictionary[Any, tuple[bool, WordCache]]" = weakref.WeakKeyDictionary()


def _shared(tokenizer: Any) -> tuple[bool, WordCache]:
    """`tokenizer`'s additivity (probed once) and the word counts every measure of it shares;
    a fresh probe and a private cache for a tokenizer that cannot be weakly keyed."""
    try:
        found = _SHARED.get(tokenizer)
        if found is None:
            found = _SHARED[tokenizer] = (whitespace_additive(tokenizer), WordCache())
        return found
    except TypeError:
        return whitespace_additive(tokenizer), WordCache()


class TokenMeasure:
    """Sizes in tokens of `tokenizer`; one instance per chunking call (word counts are cached per tokenizer)."""

    unit = "tokens"

    def __init__(self, tokenizer: TokenCounter) -> None:
        self.tokenizer = tokenizer
        self.additive, self._cache = _shared(tokenizer)
        self._words = self._cache.counts
        self._batch = getattr(tokenizer, "count_batch", None)
        # a whitespace-additive tokenizer may count many single words in one go
        self._words_at_once = getattr(tokenizer, "count_words", None) if self.additive else None

    def _count_many(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        if self._batch is not None:
            return list(self._batch(texts))
        return [self.tokenizer.count(t) for t in texts]

    @staticmethod
    def _split(text: str) -> list[str]:
        return _ODD_SPLIT.split(text.strip()) if _ODD.search(text) else text.split()

    def _learn(self, words: Iterable[str] | set[str]) -> None:
        self._cache.learn(words if isinstance(words, set) else set(words),
                          self._words_at_once if self._words_at_once is not None else self._count_many)

    def size(self, text: str) -> int:
        if not self.additive:
            return self.tokenizer.count(text)
        return self.sizes([text])[0]

    def sizes(self, texts: Sequence[str], bound: int | None = None) -> list[int]:
        """Each text's size, summed from the word counts; the words no text before brought are
        counted in one go. Most words of a long document are known after its first pages, so
        a text is summed straight from the cache, and only texts with a new word wait for it.

        With `bound`, a long text's size past `bound` is any size past it (`_long_size`): what
        packs a chunk only asks whether a text fits, and a log of 32 MiB was counted whole to
        say it does not, then counted again as it was cut."""
        if not self.additive:
            return self._count_many(list(texts))
        split = self._split if any(map(_ODD.search, texts)) else str.split
        get = self._words.__getitem__
        out: list[int] = []
        waiting: list[tuple[int, list[str]]] = []
        for i, text in enumerate(texts):
            if len(text) > WINDOW and split is str.split:
                out.append(self._long_size(text, bound))
                continue
            words = split(text)
            try:
                out.append(sum(map(get, words)))
            except KeyError:  # a word not counted yet
                out.append(0)
                waiting.append((i, words))
        if waiting:
            self._learn(set(chain.from_iterable(words for _, words in waiting)))
            for i, words in waiting:
                out[i] = sum(map(get, words))
        return out

    def _long_size(self, text: str, bound: int | None = None) -> int:
        """The size of a long text, summed a window at a time, each window ending at whitespace
        (so no word spans two): the words of a 16 MiB paragraph held at once cost some 10x its
        size; or, once past `bound`, the size summed so far. (A text with controls the
        normaliser deletes splits otherwise: it is measured whole.)"""
        total, at = 0, 0
        while at < len(text) and (bound is None or total <= bound):
            space = _SPACE.search(text, at + WINDOW)
            stop = space.end() if space else len(text)
            total += self._words_size(text[at:stop].split())
            at = stop
        return total

    def _words_size(self, words: list[str]) -> int:
        """The size of `words` (whitespace-additive tokenizers only), each counted first if new;
        a helper so that a window's words are let go of before the next window's are made."""
        self._learn(words)
        return sum(map(self._words.__getitem__, words))

    def join_cost(self, separator: str) -> int:
        if self.additive and not separator.strip():
            return 0
        return self.tokenizer.count(separator)

    def word_counts(self, words: list[str]) -> list[int]:
        """The count of each word (whitespace-additive tokenizers only), from the cache."""
        self._learn(words)
        return list(map(self._words.__getitem__, words))
