"""One dynamic partition per source; the key is the source id. And how requested partitions
become runs: a run covers a contiguous range of partitions in the order they were added."""

from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping, Sequence

import dagster as dg

SOURCES = dg.DynamicPartitionsDefinition(name="sources")
#: The run tags of a partition range (what Dagster's own backfills set).
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


def ranges(keys: Collection[str], order: Sequence[str], size: int) -> Iterator[list[str]]:
    """`keys` as runs of at most `size` partitions that are contiguous in partition order
    (a run covers a partition range, so a gap must start a new run)."""
    wanted = set(keys)
    run: list[str] = []
    for key in order:
        if key in wanted and len(run) < size:
            run.append(key)
            continue
        if run:
            yield run
        run = [key] if key in wanted else []
    if run:
        yield run


def spans(requested: Mapping[str, Collection[str]], order: Sequence[str]) -> list[tuple[tuple[str, ...], list[str]]]:
    """The partitions to run, per selection of assets: partitions wanting the same assets share
    runs, which cover the span from the first to the last of them.

    Scattered requests (every other document after a chain change) would otherwise make a run
    each, as Dagster's own backfills do; the stages skip the fresh partitions inside a span
    for the price of two queries per stage.
    """
    by_selection: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for pk in {pk for keys in requested.values() for pk in keys}:
        by_selection[tuple(sorted(asset for asset, keys in requested.items() if pk in keys))].add(pk)
    out = []
    for selection, keys in sorted(by_selection.items()):
        positions = [i for i, pk in enumerate(order) if pk in keys]
        if positions:
            out.append((selection, list(order[positions[0]:positions[-1] + 1])))
    return out
