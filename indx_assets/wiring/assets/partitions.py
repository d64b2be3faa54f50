"""One dynamic partition per source; the key is the source id. And how requested partitions
become runs: a run covers a contiguous range of partitions in the order they were added."""

from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping, Sequence

import dagster as dg

SOURCES = dg.DynamicPartitionsDefinition(name="sources")
#: The run tags of a partition range (what Dagster's own backfills set).
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


def ranges(keys: Collection[str], order: Sequence[str], size: int, between: Collection[str] = ()) -> Iterator[list[str]]:
    """`keys` as runs of at most `size` of them, each a contiguous range in partition order (a
    run covers a partition range). Partitions of `between`, known to need nothing, may stand
    inside a run: the stages skip them for two queries a stage, where a run per gap costs about
    a second (after a chain change, every other document). Any other partition ends a run."""
    wanted, fillers = set(keys), set(between)
    run: list[str] = []
    taken = gap = 0  # keys in the run; fillers after its last key
    for key in order:
        if key in wanted:
            if taken == size:
                yield run[: len(run) - gap]
                run, taken = [], 0
            run.append(key)
            taken, gap = taken + 1, 0
        elif run and key in fillers:
            run.append(key)
            gap += 1
        elif run:
            yield run[: len(run) - gap]
            run, taken, gap = [], 0, 0
    if run:
        yield run[: len(run) - gap]


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
