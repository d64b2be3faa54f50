"""Running the pipeline outside the UI: the persistent instance, partitions, batched runs.

The CLI and the benchmarks go through here; so does anything else that launches runs
in-process against `INDX_HOME`.
"""

import logging
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

import dagster as dg

from indx_assets.app.abandoned_runs import launcher_tags, reclaim_abandoned_runs
from indx_assets.app.home_lock import instance_lock
from indx_assets.pipeline.roots import Root, parse_roots
from indx_assets.wiring.assets.ingest import ASSET_KEYS, BATCH_SIZE, FAILED_SOURCES, SOURCE_DOCUMENTS
from indx_assets.wiring.assets.partitions import RANGE_END, RANGE_START, SOURCES, ranges
from indx_assets.wiring.assets.provenance import EVENT_BATCH_SIZE, EVENTS_PER_WRITE, latest_records
from indx_assets.wiring.assets.removal import SourceStores, remove_sources
from indx_assets.wiring.assets.status import code_versions, corpus_status
from indx_assets.wiring.dagster_internals import uses_stock_sqlite_event_log
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.resources.storage import sha256_file
from indx_assets.wiring.settings import Settings, has_unlabelled_ids, record_roots, recorded_roots

log = logging.getLogger(__name__)

#: Dagster's switch for one "materialization planned" event per asset and run, not per partition.
#: Such an event names no partition, and Dagster's `in_progress()` reads each partition's latest
#: planned event: a run announced so is in flight for nobody. Set only where no automation is
#: evaluated while the runs are in flight (`materialize_partitions`, whose caller waits for its
#: runs); never in a daemon's environment (`daemon_environment`).
PLANNED_EVENTS_AS_SUBSETS = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"


def daemon_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` as the environment of a deployment's processes whose daemon evaluates
    automation while the runs it launched are in flight (`indx ui`, the local cluster): each
    stage's materializations handed to the event log as one batch (unless `environ` says
    otherwise), and each run's planned materializations announced per partition (Dagster's
    default; `PLANNED_EVENTS_AS_SUBSETS` is dropped, whoever set it: `materialize_partitions` sets
    it in its own process, whose children a bench or a test starts), so that the automation sees
    a run's partitions in progress and does not ask for them again. With the runs announced by
    range, a chain change's re-cut run was followed by a run that re-embedded what the first was
    about to re-embed, once its chunk maps were written (6 of 10 runs at 400 documents)."""
    env = {k: v for k, v in environ.items() if k != PLANNED_EVENTS_AS_SUBSETS}
    env.setdefault(EVENT_BATCH_SIZE, str(EVENTS_PER_WRITE))
    return env


#: The instance's event log: Dagster's SQLite files, with connections kept open (see `event_log`).
EVENT_LOG_STORAGE = {"module": "indx_assets.event_log", "class": "PooledSqliteEventLogStorage"}

#: The dagster.yaml block that selects it.
EVENT_LOG_BLOCK = f"""\
event_log_storage:
  module: {EVENT_LOG_STORAGE["module"]}
  class: {EVENT_LOG_STORAGE["class"]}
"""
#: Written on first use; an existing dagster.yaml is never touched.
DEFAULT_DAGSTER_YAML = f"""\
# The Dagster instance of indx-assets (created by `indx`; edit freely).
telemetry:
  enabled: false
{EVENT_LOG_BLOCK}"""


def open_instance(settings: Settings) -> dg.DagsterInstance:
    """The persistent Dagster instance under `INDX_HOME` (the one `dagster dev` shows when
    DAGSTER_HOME points at `$INDX_HOME/dagster`).

    Created and opened under `instance_lock`, one process at a time (two processes creating
    the SQLite storage at once stamp its schema twice); runs that a killed `indx` left
    unfinished are marked failed and their concurrency slots freed (`abandoned_runs`); a data
    directory from before labelled source ids is re-keyed on this first use (`rekey_unlabelled`)."""
    settings.dagster_home.mkdir(parents=True, exist_ok=True)
    config = settings.dagster_home / "dagster.yaml"
    with instance_lock(settings.home):
        if not config.exists():
            config.write_text(DEFAULT_DAGSTER_YAML)
        os.environ["DAGSTER_HOME"] = str(settings.dagster_home)
        instance = dg.DagsterInstance.get()
        reclaim_abandoned_runs(instance)
        rekey_unlabelled(instance, settings)
    if uses_stock_sqlite_event_log(instance):  # an INDX_HOME from before the pooled log
        log.warning("%s uses Dagster's stock SQLite event log, which takes about 10 ms per materialization "
                    "where indx's takes 0.5 ms; to switch, add:\n%s", config, EVENT_LOG_BLOCK)
    return instance


@dataclass
class PartitionSync:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    current: list[str] = field(default_factory=list)
    #: sources not found that were kept: their root is missing, their folder unreadable, or
    #: their label is no configured root's
    kept: list[str] = field(default_factory=list)
    missing_roots: list[str] = field(default_factory=list)
    #: folders that could not be listed (entry prefix: reason)
    unlisted: dict[str, str] = field(default_factory=dict)


def sync_partitions(instance: dg.DagsterInstance, settings: Settings) -> PartitionSync:
    """Register a partition for every source under the corpus roots; remove those whose file
    is known to be gone (`CorpusResource.vanished`), and keep the rest."""
    corpus = build_resources(settings)["corpus"]
    sync = PartitionSync(missing_roots=[r.spec for r in corpus.missing_roots()])  # type: ignore[attr-defined]
    found = [listed.source_id for listed in corpus.iter_files(unlisted=sync.unlisted)]  # type: ignore[attr-defined]
    known = set(instance.get_dynamic_partitions(SOURCES.name))
    sync.added = [s for s in found if s not in known]
    for source_id in sorted(known - set(found)):
        (sync.removed if corpus.vanished(source_id) else sync.kept).append(source_id)  # type: ignore[attr-defined]
    if sync.added:
        instance.add_dynamic_partitions(SOURCES.name, sync.added)
    remove_sources(instance, SourceStores.of(build_resources(settings)), sync.removed)
    kept = set(sync.kept)
    sync.current = [s for s in instance.get_dynamic_partitions(SOURCES.name) if s not in kept]
    return sync


def root_sources(instance: dg.DagsterInstance, root: Root) -> list[str]:
    """The partitions of one root: ids start with its label (a mapped key keeps that prefix,
    since a label is short and printable)."""
    return [s for s in instance.get_dynamic_partitions(SOURCES.name) if s == root.label or s.startswith(root.prefix)]


def forget_root(instance: dg.DagsterInstance, settings: Settings, root: Root) -> list[str]:
    """Remove a root's sources from every asset and the table, and the root from the
    recorded ones; the removed source ids."""
    gone = root_sources(instance, root)
    remove_sources(instance, SourceStores.of(build_resources(settings)), gone, reason=f"root {root.label} forgotten")
    record_roots(settings.home, [r.spec for r in parse_roots(recorded_roots(settings.home), overlapping=True)
                                 if r.label != root.label])
    return gone


def rekey_unlabelled(instance: dg.DagsterInstance, settings: Settings) -> int:
    """Once, in a data directory written when a source id was its bare relative path: remove
    every source (records voided, rows, outputs, partition) so the next sync ingests them
    again as `{label}/{path}`; the roots are recorded with their labels. Returns the number
    of sources removed (0 when the directory is already labelled)."""
    if not has_unlabelled_ids(settings.home):
        return 0
    old = instance.get_dynamic_partitions(SOURCES.name)
    remove_sources(instance, SourceStores.of(build_resources(settings)), old, reason="re-keyed: source ids are now {label}/{path}")
    record_roots(settings.home, list(recorded_roots(settings.home)))
    if old:
        log.warning("%s: re-keyed %d source(s) to {label}/{path} ids; they are ingested again", settings.home, len(old))
    return len(old)


def needing_work(instance: dg.DagsterInstance, settings: Settings, defs: dg.Definitions, keys: Sequence[str],
                 selection: Sequence[str] | None = None) -> list[str]:
    """The partitions among `keys` that a run would do anything for: those where any selected
    asset is missing or stale by `freshness.judge` (what the op's stages skip by), a root
    judged against the sha256 of its file now. A source that cannot be located or hashed, or
    that is refused (a link out of its root, too large: the op records that each time), needs
    its run too. With nothing changed no run is built at all: a run's set-up, launch and
    events cost about a second even when every stage skips every partition. A source never
    stored needs its run whatever its bytes: it is not read here (the run hashes it as it
    copies it)."""
    corpus = build_resources(settings)["corpus"]
    hashes, unhashed = {}, set()
    stored = latest_records(instance, SOURCE_DOCUMENTS, keys)
    for pk in keys:
        if pk not in stored:
            continue  # missing: `corpus_status` says so without its hash
        try:
            path = corpus.locate(pk)  # type: ignore[attr-defined]
            if corpus.refusal(path):  # type: ignore[attr-defined]
                unhashed.add(pk)
            else:
                hashes[pk] = sha256_file(path)
        except OSError:
            unhashed.add(pk)
    found = corpus_status(instance, code_versions(defs), hashes=hashes)
    stale = set(found.needing_work([dg.AssetKey(s) for s in selection] if selection else None)) | unhashed
    return [pk for pk in keys if pk in stale]


@dataclass
class BatchResult:
    partitions: list[str]
    success: bool
    run_id: str
    materialized: int
    #: the sources that failed, and why (the stage and the error), as the op recorded them
    failed: dict[str, str] = field(default_factory=dict)


def failed_sources(result: dg.ExecuteInProcessResult) -> dict[str, str]:
    """Each failed source of a run and why, from the op's failure (`ingest.FAILED_SOURCES`)."""
    failed: dict[str, str] = {}
    for event in result.get_step_failure_events():
        data = event.step_failure_data.user_failure_data
        entry = data.metadata.get(FAILED_SOURCES) if data is not None else None
        if entry is not None:
            failed.update(entry.value)
    return failed


def materialize_partitions(
    instance: dg.DagsterInstance,
    settings: Settings,
    keys: Sequence[str],
    *,
    batch_size: int = BATCH_SIZE,
    selection: Sequence[str] | None = None,
    on_batch: Callable[[BatchResult], None] | None = None,
    log_level: str = "WARNING",
    force: bool = False,
) -> list[BatchResult]:
    """Materialize `keys` in batched runs (each stage skips partitions that are fresh, unless
    `force`: then every selected stage redoes every partition). The runs span the fresh ones
    among `keys` between those that need work, rather than stopping at each."""
    # A batched run announces each asset once with its partition range instead of once per
    # partition: half of all event writes otherwise. The op reports every partition's
    # materialization (or records its failure) itself, so nothing is lost; it logs each
    # stage's reports as one batch, which the event log then writes at once.
    os.environ.setdefault(PLANNED_EVENTS_AS_SUBSETS, "true")
    os.environ.setdefault(EVENT_BATCH_SIZE, str(EVENTS_PER_WRITE))
    defs = build_definitions(settings)
    fresh: Collection[str] = ()
    if not force:
        needed = needing_work(instance, settings, defs, keys, selection)
        fresh, keys = set(keys).difference(needed), needed
    job = defs.resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={dg.AssetKey(s) for s in selection} if selection else set(ASSET_KEYS)
    )
    order = instance.get_dynamic_partitions(SOURCES.name)
    results = []
    for run in ranges(keys, order, batch_size, between=fresh):
        result = job.execute_in_process(
            instance=instance,
            tags={RANGE_START: run[0], RANGE_END: run[-1], **launcher_tags()},
            run_config={"loggers": {"console": {"config": {"log_level": log_level}}},
                        **({"ops": {"ingest_documents": {"config": {"force": True}}}} if force else {})},
            raise_on_error=False,
        )
        materialized = len(result.get_asset_materialization_events())
        batch = BatchResult(run, result.success, result.run_id, materialized, failed_sources(result))
        results.append(batch)
        if on_batch:
            on_batch(batch)
    return results
