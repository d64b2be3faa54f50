"""Ingest benchmark: N generated Markdown documents end to end from an empty data directory.

    python bench/bench_ingest.py [--docs 200] [--batch-size 100] [--rounds 3] [--no-baseline] [--chain JSON]

Prints documents/s, chunks/s and the share of wall time spent outside reading + chunking +
embedding (orchestration: Dagster runs and event bookkeeping; storage: Parquet and LanceDB
writes). The work itself is measured in the same run by doing exactly that reading, chunking
and embedding directly, without Dagster or storage. The model is loaded before timing starts.
Target (issue 3): overhead below 25 % of wall time. The baseline, run in the same rounds
unless `--no-baseline`: the same pipeline on Dagster's stock SQLite event log (what an
instance gets without `indx`'s dagster.yaml).
"""

import argparse
import contextlib
import logging
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dagster as dg

from indx_assets.app.runner import materialize_partitions, open_instance, sync_partitions
from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.embedder import MiniLMEmbedder, piece_vectors
from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document
from indx_assets.wiring.settings import Settings

WORDS = (
    "lighthouse harbour keeper lens prism beam tide reef storm signal vessel coast granite tower lantern "
    "oil wick clockwork rotation flash interval chart buoy fog horn pilot current channel breakwater "
    "survey engineer masonry foundation erosion relocation museum heritage restoration volunteer"
).split()


def document(i: int, rng: random.Random) -> str:
    """A multi-section Markdown document of about 3 KB with a table and a list."""
    def sentence() -> str:
        words = rng.choices(WORDS, k=rng.randint(8, 18))
        return " ".join(words).capitalize() + "."

    parts = [f"# Report {i}: {' '.join(rng.choices(WORDS, k=3))}\n"]
    for s in range(4):
        parts.append(f"## Section {s + 1}\n")
        parts.append(" ".join(sentence() for _ in range(rng.randint(4, 8))) + "\n")
    parts.append("| item | count |\n| --- | --- |\n" + "".join(f"| {w} | {rng.randint(1, 99)} |\n" for w in rng.sample(WORDS, 4)))
    parts.append("".join(f"- {sentence()}\n" for _ in range(3)))
    return "\n".join(parts)


def write_corpus(root: Path, n: int) -> list[Path]:
    rng = random.Random(42)
    root.mkdir(parents=True)
    paths = []
    for i in range(n):
        path = root / f"doc-{i:04d}.md"
        path.write_text(document(i, rng), encoding="utf-8")
        paths.append(path)
    return paths


def direct_work(paths: list[Path], embedder: MiniLMEmbedder, chain_config: str = "") -> tuple[float, int]:
    """Read, chunk and embed every document with no orchestration or storage."""
    chain = load_chain(ChainConfig.parse(chain_config))
    started = time.perf_counter()
    texts: list[str] = []
    holders: list[int | None] = []
    for path in paths:
        document = to_document(encode_bytes(path.read_bytes(), source_id=path.name, chain=chain))
        chunks = [c for c in document.chunks if c.content]
        position = {c.id: len(texts) + i for i, c in enumerate(chunks)}
        texts.extend(c.content for c in chunks)
        holders.extend(position.get(c.metadata.get("chunk_id", "")) for c in chunks)
    piece_vectors(embedder.embed_texts, texts, holders)  # what the embed stage embeds: each text once
    return time.perf_counter() - started, len(texts)


class EventStoreTimer:
    """Accumulates the time the instance spends writing events (instrumentation only: it
    wraps the storage's `store_event` and `store_event_batch`, so the breakdown names
    Dagster's own cost)."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        self.seconds, self.events, self.writes = 0.0, 0, 0
        self._inside = False  # a batch written event by event is timed once, as the batch
        storage = instance.event_log_storage
        storage.store_event = self._timed(storage.store_event, lambda _: 1)  # type: ignore[method-assign]
        storage.store_event_batch = self._timed(storage.store_event_batch, len)  # type: ignore[method-assign]

    def _timed(self, write: Callable[[Any], None], count: Callable[[Any], int]) -> Callable[[Any], None]:
        def wrapper(arg: Any) -> None:
            if self._inside:
                return write(arg)
            self._inside, started = True, time.perf_counter()
            try:
                write(arg)
            finally:
                self._inside = False
            self.seconds += time.perf_counter() - started
            self.events += count(arg)
            self.writes += 1
        return wrapper


@contextlib.contextmanager
def _without_logs(name: str) -> Iterator[None]:
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


#: An instance configured like `indx`'s but with Dagster's stock event log (the baseline).
STOCK_DAGSTER_YAML = "telemetry:\n  enabled: false\n"


def pipeline(corpus: Path, home: Path, batch_size: int, stock_event_log: bool = False,
             chain_config: str = "") -> tuple[float, int, EventStoreTimer]:
    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                        corpus_roots=(str(corpus),), chain_config=chain_config)
    quiet = contextlib.nullcontext()
    if stock_event_log:
        settings.dagster_home.mkdir(parents=True)
        (settings.dagster_home / "dagster.yaml").write_text(STOCK_DAGSTER_YAML)
        quiet = _without_logs("indx_assets.app.runner")  # its advice to switch event logs: the baseline means it
    with quiet, open_instance(settings) as instance:  # the instance `indx ingest` uses
        timer = EventStoreTimer(instance)
        started = time.perf_counter()
        sync = sync_partitions(instance, settings)
        results = materialize_partitions(instance, settings, sync.current, batch_size=batch_size)
        elapsed = time.perf_counter() - started
        assert all(r.success for r in results), "a run failed"
    from indx_assets.wiring.resources.lancedb import LanceDBResource

    rows = LanceDBResource(uri=settings.lancedb_uri).table().count_rows()
    return elapsed, rows, timer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the same pipeline on Dagster's stock SQLite event log")
    parser.add_argument("--chain", default="", metavar="JSON",
                        help='the chain config (INDX_CHAIN), e.g. \'{"options": {"markdown": {"sentences": true}}}\'')
    args = parser.parse_args()

    embedder = MiniLMEmbedder()
    embedder.embed_texts(["warm up"])  # model load is not part of either measurement
    walls, works, stock_walls, chunk_counts, event_seconds, event_counts, write_counts = [], [], [], [], [], [], []
    stock_event_seconds = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_corpus(Path(tmp) / "corpus", args.docs)
        for r in range(args.rounds):
            wall, rows, timer = pipeline(Path(tmp) / "corpus", Path(tmp) / f"home-{r}", args.batch_size,
                                         chain_config=args.chain)
            event_seconds.append(timer.seconds)
            event_counts.append(timer.events)
            write_counts.append(timer.writes)
            work, chunks = direct_work(paths, embedder, args.chain)
            assert rows == chunks, f"table has {rows} rows, direct chunking made {chunks}"
            walls.append(wall)
            works.append(work)
            chunk_counts.append(chunks)
            line = f"round {r + 1}: pipeline {wall:.2f} s, read+chunk+embed alone {work:.2f} s, {chunks} chunks"
            if not args.no_baseline:
                stock_wall, _, stock_timer = pipeline(Path(tmp) / "corpus", Path(tmp) / f"stock-{r}", args.batch_size,
                                                      stock_event_log=True, chain_config=args.chain)
                stock_walls.append(stock_wall)
                stock_event_seconds.append(stock_timer.seconds)
                line += f"; on Dagster's stock event log {stock_wall:.2f} s"
            print(line, file=sys.stderr)
    wall, work = statistics.median(walls), statistics.median(works)
    chunks = chunk_counts[0]
    overhead = max(wall - work, 0.0) / wall
    print(f"documents: {args.docs}, chunks: {chunks}, batch size: {args.batch_size}, rounds: {args.rounds}")
    print(f"pipeline wall (median):           {wall:8.2f} s  -> {args.docs / wall:7.1f} docs/s, {chunks / wall:7.1f} chunks/s")
    print(f"read + chunk + embed alone:        {work:8.2f} s  -> {args.docs / work:7.1f} docs/s")
    print(f"orchestration + storage overhead:  {overhead:8.1%} of wall time (target < 25 %)")
    events, event_time = event_counts[0], statistics.median(event_seconds)
    print(f"  of which Dagster event writes:   {event_time / wall:8.1%} ({events} events in {write_counts[0]} writes, "
          f"{1000 * event_time / max(events, 1):.2f} ms per event)")
    print(f"  of which the rest (runs, Parquet, LanceDB): {max(wall - work - event_time, 0.0) / wall:.1%}")
    print(f"pipeline / direct work ratio:      {wall / work:8.2f}x")
    if stock_walls:
        stock_wall = statistics.median(stock_walls)
        stock_events = statistics.median(stock_event_seconds)
        print(f"baseline, Dagster's stock SQLite event log: wall {stock_wall:.2f} s, overhead "
              f"{max(stock_wall - work, 0.0) / stock_wall:.1%}, event writes {stock_events:.2f} s; "
              f"indx event log / stock wall: {wall / stock_wall:.2f}x")


if __name__ == "__main__":
    main()
