"""The corpus sensor: new files become partitions, changed files stale their source, vanished
files are forgotten.

Each tick looks at one page of the corpus listing (files in path order, after the cursor,
listed only as far as the page reaches) and one page of the `sources` partitions, so no
tick handles tens of thousands of either; a full sweep takes `ceil(n / page_size)` ticks and
then starts over.

- Files: size and mtime are a cheap pre-filter against the source index; a file whose size or
  mtime moved is hashed, and the sha256 decides. A new key becomes a partition (automation
  materializes missing partitions); a changed sha256 is recorded in the index, which makes
  `source_documents` stale for that partition (automation re-reads it, batched with any
  other changed files, instead of one run per file).
- Partitions: a partition whose file is gone is removed with its LanceDB rows and stored
  outputs (`assets.removal.remove_sources`). A source of a missing corpus root (an unmounted disk, an
  unreachable bucket) or below a folder that cannot be listed is kept
  (`CorpusResource.vanished`).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import islice

import dagster as dg
from upath import UPath

from indx_assets.wiring.assets.ingest import SOURCE_DOCUMENTS
from indx_assets.wiring.assets.partitions import SOURCES
from indx_assets.wiring.assets.provenance import latest_records
from indx_assets.wiring.assets.removal import SourceStores, remove_sources
from indx_assets.wiring.assets.stages import refusal_version
from indx_assets.wiring.resources import CorpusResource, LanceDBResource, StorageResource
from indx_assets.wiring.resources.source_index import SeenSource, SourceIndex
from indx_assets.wiring.resources.storage import sha256_file
from indx_assets.wiring.settings import DEFAULT_SENSOR_INTERVAL_S, Settings

PAGE_SIZE = 500


@dataclass
class Cursor:
    """Where the sweep is: the last file path looked at and Dagster's partition page cursor."""

    after_file: str = ""
    partitions: str | None = None
    sweeps: int = 0
    #: whether each listing has come round since the last completed sweep: the two are paged
    #: separately (partitions lag the files they come from), so they rarely end on one tick
    files_swept: bool = False
    partitions_swept: bool = False

    @classmethod
    def parse(cls, raw: str | None) -> "Cursor":
        return cls(**json.loads(raw)) if raw else cls()

    def dump(self) -> str:
        # ensure_ascii keeps undecodable names (lone surrogates) round-trippable
        return json.dumps(self.__dict__, ensure_ascii=True)


@dataclass
class Tick:
    """What one tick found (`added`: keys with no materialization yet, registered again on every
    sweep until they have one, so a lost partition request heals)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    hashed: int = 0
    cursor: Cursor = field(default_factory=Cursor)


def _scan_files(instance: dg.DagsterInstance, corpus: CorpusResource, index: SourceIndex, cursor: Cursor,
                page_size: int, tick: Tick) -> None:
    # One file past the page says whether the sweep goes on; the listing stops there.
    unlisted: dict[str, str] = {}
    files = list(islice(corpus.iter_files(after=cursor.after_file, unlisted=unlisted), page_size + 1))
    for folder, reason in unlisted.items():
        dg.get_dagster_logger().warning(f"corpus sensor: {folder}: {reason}; its sources are kept as they are")
    page = files[:page_size]
    tick.cursor.after_file = page[-1].entry if len(files) > page_size else ""
    if not page:
        return
    keys = [f.source_id for f in page]
    seen = index.get(keys)
    stored = latest_records(instance, SOURCE_DOCUMENTS, keys)
    updates: list[SeenSource] = []
    for key, root, relative, path, _ in page:
        before = seen.get(key)
        if key not in stored:  # never materialized: (re)register it; adding a partition is idempotent
            tick.added.append(key)
        try:
            info = path.stat()
            size, mtime_ns = info.st_size, int(getattr(info, "st_mtime_ns", info.st_mtime * 1e9))
            if before and (before.size, before.mtime_ns, before.root, before.relative) == (size, mtime_ns, root, relative):
                continue
            refused = corpus.refusal(path)  # a link out of its root is not read, not even to hash it
            sha = refusal_version(*refused) if refused else sha256_file(path)
        except OSError as exc:  # vanished or unreadable since the listing: the next sweep decides
            dg.get_dagster_logger().warning(f"corpus sensor: cannot read {path}: {exc}")
            continue
        tick.hashed += 1
        known = before.sha256 if before else (stored[key].data_version if key in stored else None)
        if key in stored and known != sha:
            tick.changed.append(key)
        updates.append(SeenSource(key, root, relative, size, mtime_ns, sha))
    index.put(updates)


def _scan_partitions(instance: dg.DagsterInstance, corpus: CorpusResource, index: SourceIndex, cursor: Cursor,
                     page_size: int, tick: Tick) -> list[str]:
    page = instance.get_paginated_dynamic_partitions(SOURCES.name, limit=page_size, ascending=True,
                                                     cursor=cursor.partitions)
    tick.cursor.partitions = page.cursor if page.has_more else None
    missing = corpus.missing_roots()
    if missing:
        dg.get_dagster_logger().warning(
            f"corpus sensor: corpus root(s) missing: {', '.join(r.spec for r in missing)}; their sources are kept")
    return [key for key in page.results if corpus.vanished(key)]


def scan(instance: dg.DagsterInstance, stores: SourceStores, cursor: Cursor, page_size: int = PAGE_SIZE) -> Tick:
    """One tick of the sweep: look at a page of files and a page of partitions, and remove the
    partitions whose files are gone (returns what it found; new keys are not added here)."""
    corpus = stores.corpus
    index = SourceIndex(corpus.index)
    tick = Tick(cursor=replace(cursor))
    _scan_files(instance, corpus, index, cursor, page_size, tick)
    tick.removed = _scan_partitions(instance, corpus, index, cursor, page_size, tick)
    remove_sources(instance, stores, tick.removed)
    done = tick.cursor
    done.files_swept = done.files_swept or not done.after_file
    done.partitions_swept = done.partitions_swept or done.partitions is None
    if done.files_swept and done.partitions_swept:
        done.sweeps += 1
        done.files_swept = done.partitions_swept = False
    return tick


def corpus_sensor(settings: Settings, page_size: int = PAGE_SIZE,
                  minimum_interval_seconds: int = DEFAULT_SENSOR_INTERVAL_S) -> dg.SensorDefinition:
    """The sensor over `settings`' corpus roots; Dagster hands it the definitions' `corpus`,
    `storage` and `lancedb` resources (the ones the assets use)."""

    @dg.sensor(
        name="corpus_sensor",
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Sweeps the corpus roots ({', '.join(settings.corpus_roots)}), {page_size} files and "
                    f"{page_size} partitions per tick: adds, re-hashes and removes sources.",
    )
    def _sensor(context: dg.SensorEvaluationContext, corpus: CorpusResource, storage: StorageResource,
                lancedb: LanceDBResource) -> dg.SensorResult:
        stores = SourceStores(corpus=corpus, storage=storage, lancedb=lancedb)
        tick = scan(context.instance, stores, Cursor.parse(context.cursor), page_size)
        if tick.added or tick.changed or tick.removed:
            context.log.info(f"{len(tick.added)} new, {len(tick.changed)} changed, {len(tick.removed)} removed "
                             f"({tick.hashed} hashed)")
        requests: Sequence[dg.AddDynamicPartitionsRequest] = [SOURCES.build_add_request(tick.added)] if tick.added else []
        return dg.SensorResult(dynamic_partitions_requests=requests, cursor=tick.cursor.dump())

    return _sensor
