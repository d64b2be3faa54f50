"""Forgetting sources: everything the pipeline holds of a source whose file left the corpus,
whose root was forgotten or whose id was re-keyed.

The corpus sensor removes the sources whose files are gone (its stores injected by Dagster);
the in-process runner removes them on `indx ingest`, `indx forget` and re-keying (its stores
built from the settings). Both go through `remove_sources`, so a source is forgotten one way.
"""

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from indx_assets.wiring.assets import stages
from indx_assets.wiring.assets.ingest import ASSET_KEYS
from indx_assets.wiring.assets.partitions import SOURCES
from indx_assets.wiring.assets.provenance import EVENT_BATCH_SIZE, EVENTS_PER_WRITE, mark_removed
from indx_assets.wiring.resources import CorpusResource, LanceDBResource, StorageResource
from indx_assets.wiring.resources.source_index import SourceIndex


@dataclass(frozen=True)
class SourceStores:
    """Where a source leaves traces besides the event log: the corpus (its source index), the
    stored asset outputs and the LanceDB table."""

    corpus: CorpusResource
    storage: StorageResource
    lancedb: LanceDBResource

    @classmethod
    def of(cls, resources: Mapping[str, Any]) -> "SourceStores":
        """The stores among a definitions' resources (`definitions.build_resources`)."""
        return cls(corpus=resources["corpus"], storage=resources["storage"], lancedb=resources["lancedb"])


def remove_sources(instance: dg.DagsterInstance, stores: SourceStores, source_ids: Sequence[str],
                   reason: str = "file gone") -> None:
    """Forget sources: their records (voided first, so a kill midway leaves them missing, never
    falsely fresh), their LanceDB rows, their stored outputs, what the sensor saw of them, and
    their partitions."""
    if not source_ids:
        return
    os.environ.setdefault(EVENT_BATCH_SIZE, str(EVENTS_PER_WRITE))  # the marks go in as batches
    mark_removed(instance, ASSET_KEYS, source_ids, reason)
    stores.lancedb.delete_sources(source_ids)
    for source_id in source_ids:
        for asset in (stages.SOURCE_DOCUMENTS, stages.PAGE_OUTPUTS, stages.CHUNK_MAP, stages.CHUNK_EMBEDDINGS, stages.CHUNKS_TABLE):
            stores.storage.delete(asset, source_id)
    SourceIndex(stores.corpus.index).delete(source_ids)
    for source_id in source_ids:
        instance.delete_dynamic_partition(SOURCES.name, source_id)
