"""Meters for tests: a tokenizer that keeps count of the work it is given, for tests of how
much text a splitter measures (work, not wall time: these machines are too noisy to time), and
the time and memory bounds a refusal must stay within."""

from collections.abc import Callable
from typing import TypeVar

from indx_assets.pipeline.tokenizer import minilm_tokenizer

T = TypeVar("T")


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


def cost(fn: Callable[[], T]) -> tuple[T, float, int]:
    """`fn()`'s result, the seconds it took and the peak bytes it allocated (tracemalloc): for
    tests that a hostile file is refused before it costs much (bounds, not benchmarks)."""
    import time
    import tracemalloc

    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = fn()
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, elapsed, peak
