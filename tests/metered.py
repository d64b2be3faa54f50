"""A tokenizer that keeps count of the work it is given, for tests of how much text a
splitter measures (work, not wall time: these machines are too noisy to time)."""

from indx_assets.tokenizer import minilm_tokenizer


class MeteredCounter:
    """The MiniLM tokenizer, adding up how many characters it is asked to count."""

    whitespace_additive = True

    def __init__(self) -> None:
        self.inner, self.chars = minilm_tokenizer(), 0

    def count(self, text: str) -> int:
        self.chars += len(text)
        return self.inner.count(text)

    def count_batch(self, texts: list[str]) -> list[int]:
        self.chars += sum(map(len, texts))
        return self.inner.count_batch(texts)
