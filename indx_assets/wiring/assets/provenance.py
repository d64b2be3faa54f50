"""Per-partition data versions for batched runs.

Dagster records one data version per output, copied to every partition a run covers
(dagster-io/dagster#18649, #34013), so a run over fifty documents would give all fifty the
same version and break staleness. The ingest op therefore reports each partition's
materialization itself, with the provenance tags Dagster's own stale-status resolver reads:
its code version, its data version, and the data version and event id of the upstream
partition it was computed from. Everything here is the one place that knows those tags.

A stage's materializations are logged as one event batch (`log_batch`): with
`DAGSTER_EVENT_BATCH_SIZE` set, the instance hands them to its event log in one call, which
`indx_assets.app.event_log` writes in one transaction per database.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from indx_assets.wiring.dagster_internals import (
    CODE_VERSION_TAG,
    DATA_VERSION_IS_USER_PROVIDED_TAG,
    DATA_VERSION_TAG,
    get_input_data_version_tag,
    get_input_event_pointer_tag,
    index_event_tags,
    indexed_event_tags,
    materialization_batch,
    report_runless_batch,
)

#: Dagster's switch for handing event batches to the event log whole (its value: the most
#: events per write).
EVENT_BATCH_SIZE = "DAGSTER_EVENT_BATCH_SIZE"
#: The most events a batch hands the event log in one write.
EVENTS_PER_WRITE = 1000


@dataclass(frozen=True)
class PartitionRecord:
    """The latest materialization of one asset partition: its event id and version tags."""

    storage_id: int
    tags: Mapping[str, str]

    @classmethod
    def unlogged(cls, data_version: str) -> "PartitionRecord":
        """A materialization made in this run and not logged yet: its data version, no event."""
        return cls(-1, {DATA_VERSION_TAG: data_version})

    @property
    def data_version(self) -> str | None:
        return self.tags.get(DATA_VERSION_TAG)

    @property
    def code_version(self) -> str | None:
        return self.tags.get(CODE_VERSION_TAG)

    def input_data_version(self, parent: dg.AssetKey) -> str | None:
        return self.tags.get(get_input_data_version_tag(parent))


#: Metadata key of the observation that marks a partition's records void (`mark_removed`).
REMOVED = "indx/removed"


def mark_removed(instance: dg.DagsterInstance, keys: Sequence[dg.AssetKey], partitions: Sequence[str], reason: str) -> None:
    """Void every record `keys` hold for `partitions` (their files left the corpus): an
    observation later than all of them, so a file that comes back is missing again, not fresh.

    Dagster's SQLite and Postgres event logs cannot wipe single partitions, and the records
    must stay void for every reader (the stages, `indx status`, the sensor, automation), so
    the mark lives where they all look: the event log, read by `latest_records`. The marks
    are runless events (what `report_runless_asset_event` writes) handed over as one batch.
    """
    report_runless_batch(instance, [dg.AssetObservation(asset_key=key, partition=partition, metadata={REMOVED: reason})
                                    for partition in partitions for key in keys])


def latest_records(instance: dg.DagsterInstance, key: dg.AssetKey, partitions: Iterable[str]) -> dict[str, PartitionRecord]:
    """The latest materialization record of each partition, in two queries for the batch (a
    third for those that have one: a record older than the partition's removal mark does
    not count), and its provenance tags from the event log's tag index in one more.

    indx's event log indexes every provenance tag (`PooledSqliteEventLogStorage`); a record
    whose code version is not in the index (stored by Dagster's stock storage, or before
    indx indexed it) is read whole, the slow way (unpacking a stored event costs about a
    millisecond), and its tags are added to the index then, so each is read whole once."""
    storage = instance.event_log_storage
    ids = storage.get_latest_storage_id_by_partition(key, dg.DagsterEventType.ASSET_MATERIALIZATION, set(partitions))
    if ids:
        removed = storage.get_latest_storage_id_by_partition(key, dg.DagsterEventType.ASSET_OBSERVATION, set(ids))
        ids = {p: sid for p, sid in ids.items() if sid > removed.get(p, -1)}
    if not ids:
        return {}
    indexed = indexed_event_tags(instance, ids.values()) or {}
    tags_by_id = {sid: tags for sid, tags in indexed.items() if CODE_VERSION_TAG in tags}
    unindexed = [sid for sid in ids.values() if sid not in tags_by_id]
    if unindexed:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, storage_ids=unindexed), limit=len(unindexed)
        ).records
        read = {r.storage_id: dict(r.event_log_entry.tags or {}) for r in records}
        index_event_tags(instance, key, read, {r.storage_id: r.timestamp for r in records})
        tags_by_id.update(read)
    return {p: PartitionRecord(sid, tags_by_id.get(sid, {})) for p, sid in ids.items()}


def materialization(
    key: dg.AssetKey,
    partition: str,
    *,
    data_version: str,
    code_version: str,
    parent: dg.AssetKey | None = None,
    parent_record: PartitionRecord | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> dg.AssetMaterialization:
    """The materialization event of one partition, with its provenance."""
    tags = {
        CODE_VERSION_TAG: code_version,
        DATA_VERSION_TAG: data_version,
        DATA_VERSION_IS_USER_PROVIDED_TAG: "true",
    }
    if parent is not None and parent_record is not None:
        tags[get_input_data_version_tag(parent)] = parent_record.data_version or ""
        tags[get_input_event_pointer_tag(parent)] = str(parent_record.storage_id)
    return dg.AssetMaterialization(asset_key=key, partition=partition, metadata=dict(metadata or {}), tags=tags)


def log_batch(context: dg.AssetExecutionContext, events: Sequence[dg.AssetMaterialization]) -> list[dg.DagsterEvent]:
    """Log materializations as one event batch and return them for the op to yield (so they
    count in the run's result, as events from `context.log_event` would)."""
    return materialization_batch(context, events)