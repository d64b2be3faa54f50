"""Which partitions of which asset are missing, stale or fresh, in one paged scan.

Dagster's stale-status resolver answers one partition at a time (several ms each), which does
not scale to tens of thousands of sources. This scan pages through the `sources` partitions
and judges each page with the rule the ingest op and the automation conditions use
(`assets.freshness.judge`, through `page_status`: two batched queries per asset and page). The
root asset is also stale when the corpus sensor saw bytes whose sha256 is not the stored one.

Each partition is judged on its own provenance: after a chain change `chunk_map` is stale
and `chunk_embeddings` is not (yet): whether it must be redone depends on the new chunk map.
"""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import dagster as dg

# CODE_VERSION and UPSTREAM_DATA are the causes `indx backfill` names where it reads status
from indx_assets.wiring.assets.freshness import CODE_VERSION, PAGE_SIZE, UPSTREAM_DATA, page_status  # noqa: F401
from indx_assets.wiring.assets.ingest import ASSET_KEYS, PARENT
from indx_assets.wiring.assets.partitions import SOURCES
from indx_assets.wiring.resources.source_index import SourceIndex


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
    hashes: Mapping[str, str] | None = None,
) -> CorpusStatus:
    """Every partition of every ingestion asset, in one paged scan (a root judged against
    `hashes`, the sha256 of the sources now, where given; else against `index`)."""
    status = CorpusStatus(assets={key: AssetStatus() for key in ASSET_KEYS})
    for page in iter_partition_pages(instance, page_size):
        status.partitions += len(page)
        status.order.extend(page)
        for key, by_partition in page_status(instance, code_versions, page, PARENT, ASSET_KEYS, index, hashes).items():
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
