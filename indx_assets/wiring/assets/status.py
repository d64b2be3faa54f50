"""Which partitions of which asset are missing, stale or fresh, in one paged scan.

Dagster's stale-status resolver answers one partition at a time (several ms each), which does
not scale to tens of thousands of sources. This scan pages through the `sources` partitions
and, per page, reads every asset's latest materializations with two batched queries
(`provenance.latest_records`), then applies the same rule the ingest stages use to skip work
(`provenance.is_fresh`): a partition is fresh when its latest materialization was made by the
current code version from its parent's current data version. The root asset is also stale
when the corpus sensor saw bytes whose sha256 is not the stored one.

Each partition is judged on its own provenance: after a chain change `chunk_map` is stale
and `chunk_embeddings` is not (yet): whether it must be redone depends on the new chunk map.
"""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import dagster as dg

from indx_assets.wiring.assets.ingest import ASSET_KEYS, PARENT, SOURCE_DOCUMENTS
from indx_assets.wiring.assets.partitions import SOURCES
from indx_assets.wiring.assets.provenance import PartitionRecord, latest_records
from indx_assets.wiring.resources.source_index import SourceIndex

State = Literal["missing", "stale", "fresh"]
#: Why a partition is stale.
CODE_VERSION = "code version"
UPSTREAM_DATA = "upstream data"
UPSTREAM_MISSING = "upstream missing"
SOURCE_CHANGED = "source changed"

PAGE_SIZE = 1000


@dataclass(frozen=True)
class PartitionStatus:
    state: State
    cause: str | None = None


def judge(
    record: PartitionRecord | None,
    code_version: str | None,
    parent_record: PartitionRecord | None = None,
    parent: dg.AssetKey | None = None,
    seen_sha256: str | None = None,
) -> PartitionStatus:
    """The status of one asset partition from its latest record and its parent's."""
    if record is None:
        return PartitionStatus("missing")
    if record.code_version != code_version:
        return PartitionStatus("stale", CODE_VERSION)
    if parent is not None:
        if parent_record is None:
            return PartitionStatus("stale", UPSTREAM_MISSING)
        if record.input_data_version(parent) != parent_record.data_version:
            return PartitionStatus("stale", UPSTREAM_DATA)
    elif seen_sha256 is not None and seen_sha256 != record.data_version:
        return PartitionStatus("stale", SOURCE_CHANGED)
    return PartitionStatus("fresh")


def page_status(
    instance: dg.DagsterInstance,
    code_versions: Mapping[dg.AssetKey, str | None],
    partitions: Sequence[str],
    index: SourceIndex | None = None,
    assets: Sequence[dg.AssetKey] = ASSET_KEYS,
) -> dict[dg.AssetKey, dict[str, PartitionStatus]]:
    """Status of `partitions` for each of `assets`: two queries per asset (and its parent)."""
    records: dict[dg.AssetKey, dict[str, PartitionRecord]] = {}

    def of(key: dg.AssetKey) -> dict[str, PartitionRecord]:
        if key not in records:
            records[key] = latest_records(instance, key, partitions)
        return records[key]

    seen = index.get(partitions) if index is not None and SOURCE_DOCUMENTS in assets else {}
    result: dict[dg.AssetKey, dict[str, PartitionStatus]] = {}
    for key in assets:
        parent = PARENT.get(key)
        own, parents = of(key), of(parent) if parent else {}
        result[key] = {
            pk: judge(own.get(pk), code_versions.get(key), parents.get(pk), parent,
                      seen[pk].sha256 if pk in seen else None)
            for pk in partitions
        }
    return result


def iter_partition_pages(instance: dg.DagsterInstance, page_size: int = PAGE_SIZE) -> Iterator[list[str]]:
    """The `sources` partitions, a page at a time, in the order they were added."""
    cursor = None
    while True:
        page = instance.get_paginated_dynamic_partitions(SOURCES.name, limit=page_size, ascending=True, cursor=cursor)
        if page.results:
            yield list(page.results)
        if not page.has_more:
            return
        cursor = page.cursor


@dataclass
class AssetStatus:
    """Counts for one asset, and the partitions that need work."""

    missing: list[str] = field(default_factory=list)
    stale: dict[str, list[str]] = field(default_factory=dict)
    fresh: int = 0

    def to_json(self) -> dict:
        return {
            "missing": len(self.missing),
            "stale": sum(len(v) for v in self.stale.values()),
            "stale_by_cause": {cause: len(v) for cause, v in sorted(self.stale.items())},
            "fresh": self.fresh,
        }


@dataclass
class CorpusStatus:
    partitions: int = 0
    assets: dict[dg.AssetKey, AssetStatus] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def needing_work(self, assets: Sequence[dg.AssetKey] | None = None, missing: bool = True) -> list[str]:
        """Partitions (in partition order) where any of `assets` is stale (or missing)."""
        wanted: set[str] = set()
        for key, status in self.assets.items():
            if assets is None or key in assets:
                if missing:
                    wanted.update(status.missing)
                for keys in status.stale.values():
                    wanted.update(keys)
        return [pk for pk in self.order if pk in wanted]

    def to_json(self) -> dict:
        return {"partitions": self.partitions,
                "assets": {k.to_user_string(): s.to_json() for k, s in self.assets.items()}}


def corpus_status(
    instance: dg.DagsterInstance,
    code_versions: Mapping[dg.AssetKey, str | None],
    index: SourceIndex | None = None,
    page_size: int = PAGE_SIZE,
) -> CorpusStatus:
    """Every partition of every ingestion asset, in one paged scan."""
    status = CorpusStatus(assets={key: AssetStatus() for key in ASSET_KEYS})
    for page in iter_partition_pages(instance, page_size):
        status.partitions += len(page)
        status.order.extend(page)
        for key, by_partition in page_status(instance, code_versions, page, index).items():
            for pk, s in by_partition.items():
                if s.state == "missing":
                    status.assets[key].missing.append(pk)
                elif s.state == "stale":
                    status.assets[key].stale.setdefault(s.cause or "", []).append(pk)
                else:
                    status.assets[key].fresh += 1
    return status


def code_versions(defs: dg.Definitions) -> dict[dg.AssetKey, str | None]:
    graph = defs.resolve_asset_graph()
    return {key: graph.get(key).code_version for key in ASSET_KEYS}
