"""Meters for tests: a tokenizer that keeps count of the work it is given, for tests of how
much text a splitter measures (work, not wall time: these machines are too noisy to time), and
the time and memory bounds a refusal must stay within."""

from collections.abc import Callable
from types import MappingProxyType
from typing import Any, TypeVar

from indx_assets.pipeline.tokenizer import minilm_tokenizer

T = TypeVar("T")
#: How long `cost` waits for its fork's first word before it kills it.
FORK_TIMEOUT_SECONDS = 300


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
    tests that a hostile file is refused before it costs much (bounds, not benchmarks).

    `fn` runs in a fork of this process, so the peak is `fn`'s own. In one process tracemalloc
    counts every thread's allocations and whatever a garbage collection sets off: late in the
    suite, a refusal that costs 2 MiB alone was once charged 16.9 MB. A fork has one thread,
    and the garbage it inherits is frozen out of its collections. `fn`'s result comes back
    pickled; an exception it raises is raised here."""
    import copyreg
    import gc
    import os
    import pickle
    import select
    import signal
    import time
    import tracemalloc
    import warnings

    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # the fork reads and cuts a file: it never touches LanceDB
        warnings.filterwarnings("ignore", "lance is not fork-safe", UserWarning)
        child = os.fork()
    if child == 0:  # pragma: no cover - the fork
        os.close(read_end)
        try:
            gc.freeze()
            tracemalloc.start()
            started = time.perf_counter()
            try:
                outcome: object = (fn(), time.perf_counter() - started, tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
            copyreg.pickle(MappingProxyType, lambda proxy: (_mapping_proxy, (dict(proxy),)))  # a read's metadata
            report = pickle.dumps(("ok", outcome))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
            try:
                report = pickle.dumps(("raised", exc))
            except Exception:  # noqa: BLE001 - an exception that does not pickle
                report = pickle.dumps(("raised", RuntimeError(repr(exc))))
        with os.fdopen(write_end, "wb") as out:
            out.write(report)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reports:
        # a fork that hangs (a lock another thread held as it forked) fails its test, not the suite
        if not select.select([reports], [], [], FORK_TIMEOUT_SECONDS)[0]:
            os.kill(child, signal.SIGKILL)
        report = reports.read()
    _, status = os.waitpid(child, 0)
    if not report:
        raise RuntimeError(f"the measured call's process ended without a result (wait status {status})")
    kind, outcome = pickle.loads(report)
    if kind == "raised":
        raise outcome
    return outcome  # type: ignore[no-any-return]


def _mapping_proxy(items: dict[str, Any]) -> MappingProxyType[str, Any]:
    """A read-only mapping remade from its items (a measured result's, pickled by `cost`)."""
    return MappingProxyType(items)
