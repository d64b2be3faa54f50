"""Whether an asset partition's latest materialization still stands: the one judgement.

The ingest op (which partitions a stage skips), `indx status` (what it counts and backfills)
and the automation conditions (what they request) all ask `judge`, through `page_status` when
they judge many partitions at once. The rule: a partition is

- `missing` when it has no materialization (or only ones voided when its file left the corpus);
- `stale` when it was made by another code version (`code version`), when its parent has no
  materialization (`upstream missing`) or another data version than the one it was made from
  (`upstream data`), or, for the root asset, when the bytes last seen have another sha256 than
  the stored one (`source changed`: the op hashes the file, status and automation ask the
  corpus sensor's index);
- `fresh` otherwise.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import dagster as dg

from indx_assets.wiring.assets.provenance import PartitionRecord, latest_records

if TYPE_CHECKING:
    from indx_assets.wiring.resources.source_index import SourceIndex

State = Literal["missing", "stale", "fresh"]
#: Why a partition is stale.
CODE_VERSION = "code version"
UPSTREAM_DATA = "upstream data"
UPSTREAM_MISSING = "upstream missing"
SOURCE_CHANGED = "source changed"

#: Partitions judged per batch of queries (`indx status`'s pages, the conditions' slices).
PAGE_SIZE = 1000


@dataclass(frozen=True)
class PartitionStatus:
    state: State
    cause: str | None = None

    @property
    def fresh(self) -> bool:
        return self.state == "fresh"


def judge(
    record: PartitionRecord | None,
    code_version: str | None,
    parent: dg.AssetKey | None = None,
    parent_record: PartitionRecord | None = None,
    seen_data_version: str | None = None,
) -> PartitionStatus:
    """The status of one asset partition from its latest record and its parent's (see the
    module docstring); `seen_data_version` is, for a root asset, the data version its source
    has now (None: nothing newer is known)."""
    if record is None:
        return PartitionStatus("missing")
    if record.code_version != code_version:
        return PartitionStatus("stale", CODE_VERSION)
    if parent is not None:
        if parent_record is None:
            return PartitionStatus("stale", UPSTREAM_MISSING)
        if record.input_data_version(parent) != parent_record.data_version:
            return PartitionStatus("stale", UPSTREAM_DATA)
    elif seen_data_version is not None and seen_data_version != record.data_version:
        return PartitionStatus("stale", SOURCE_CHANGED)
    return PartitionStatus("fresh")


def page_status(
    instance: dg.DagsterInstance,
    code_versions: Mapping[dg.AssetKey, str | None],
    partitions: Sequence[str],
    parents: Mapping[dg.AssetKey, dg.AssetKey],
    assets: Sequence[dg.AssetKey],
    index: "SourceIndex | None" = None,
    hashes: Mapping[str, str] | None = None,
) -> dict[dg.AssetKey, dict[str, PartitionStatus]]:
    """`judge` for `partitions` of each of `assets` (`parents` maps an asset to its parent; a
    root asset has none and is compared with the sha256 its source has now: from `hashes`
    where given (the ingest hashes the files), else the one `index` last saw): a few batched
    queries per asset and parent."""
    records: dict[dg.AssetKey, dict[str, PartitionRecord]] = {}

    def of(key: dg.AssetKey) -> dict[str, PartitionRecord]:
        if key not in records:
            records[key] = latest_records(instance, key, partitions)
        return records[key]

    roots = [key for key in assets if key not in parents]
    seen = {pk: s.sha256 for pk, s in index.get(partitions).items()} if index is not None and roots else {}
    seen.update(hashes or {})
    result: dict[dg.AssetKey, dict[str, PartitionStatus]] = {}
    for key in assets:
        parent = parents.get(key)
        own, upstream = of(key), of(parent) if parent else {}
        result[key] = {
            pk: judge(own.get(pk), code_versions.get(key), parent, upstream.get(pk),
                      seen.get(pk))
            for pk in partitions
        }
    return result
