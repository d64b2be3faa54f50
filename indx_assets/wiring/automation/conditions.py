"""Declarative automation of the five ingestion assets.

A partition is requested when it becomes missing (a new source; the initial load is just
every partition being missing at the first evaluation) or stale by the one provenance rule
`indx status` and the ingest op use (`assets.freshness.judge`): made by another code version, from
another upstream data version, or — for `source_documents` — from bytes other than those the
corpus sensor last hashed. Each request is made once (since it was last handled): a partition whose
run failed is not re-requested every tick; run retries are the instance's job (dagster.yaml).

Requests ride along the graph: every asset below `source_documents` is requested with its
parent, so a re-read source, or a chain change's re-cut, is carried to the table in the same
run. That is safe where the work is not certain, too: a stage skips the partitions that are
fresh by the time it runs (`ingest._Batch.todo`, judged against the parent's record the run has
just logged), so after a chain change only the documents whose chunks came out different are
re-embedded and rewritten, the others' embeddings and rows are left as they were. Waiting
instead for the chunk map's new data version cost a run per re-cut run on a daemon, whose
sensor ticks while the re-cut runs go on (a small re-embedding run after each).
"""

import warnings
from collections import defaultdict
from typing import Any

import dagster as dg

from indx_assets.wiring.assets.freshness import PAGE_SIZE, page_status
from indx_assets.wiring.assets.ingest import BATCH_SIZE, CHUNK_EMBEDDINGS, CHUNK_MAP, CHUNKS_TABLE, PAGE_OUTPUTS, PARENT, SOURCE_DOCUMENTS
from indx_assets.wiring.assets.partitions import RANGE_END, RANGE_START, SOURCES, ranges, spans
from indx_assets.wiring.dagster_internals import AssetKeyPartitionKey, skipped_tick, with_run_requests
from indx_assets.wiring.resources.source_index import SourceIndex
from indx_assets.wiring.settings import DEFAULT_SENSOR_INTERVAL_S

#: Assets requested in the same tick as their parent.
CHAINED = {PAGE_OUTPUTS, CHUNK_MAP, CHUNK_EMBEDDINGS, CHUNKS_TABLE}


class ProvenanceStale(dg.AutomationCondition):
    """True for the partitions whose latest materialization no longer stands (see `status`),
    or was voided when their file left the corpus (`provenance.mark_removed`)."""

    index_path: str = ""

    def __init__(self, index_path: str = ""):
        self.index_path = index_path

    @property
    def name(self) -> str:
        return "provenance_stale"

    @property
    def description(self) -> str:
        return "made by another code version or from other upstream data than today's"

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:  # type: ignore[override]
        key = context.key
        candidates = sorted(context.candidate_subset.expensively_compute_partition_keys())
        code_version = context.asset_graph.get(key).code_version
        index = SourceIndex(self.index_path) if self.index_path and key == SOURCE_DOCUMENTS else None
        stale: set[AssetKeyPartitionKey] = set()
        for i in range(0, len(candidates), PAGE_SIZE):
            page = candidates[i:i + PAGE_SIZE]
            statuses = page_status(context.asset_graph_view.instance, {key: code_version}, page, PARENT, [key], index)[key]
            # "missing" by our records but not by Dagster's: a file that left and came back
            stale.update(AssetKeyPartitionKey(key, pk) for pk, s in statuses.items() if not s.fresh)
        subset = context.asset_graph_view.get_asset_subset_from_asset_partitions(key, stale)
        return dg.AutomationResult(context=context, true_subset=subset)


def ingest_condition(key: dg.AssetKey, index_path: str = "") -> dg.AutomationCondition:
    """The automation condition of one ingestion asset."""
    trigger = (
        dg.AutomationCondition.missing().newly_true().with_label("newly_missing")
        | ProvenanceStale(index_path).newly_true().with_label("newly_stale")
    )
    if key in CHAINED and key in PARENT:
        trigger = trigger | dg.AutomationCondition.any_deps_match(dg.AutomationCondition.will_be_requested()).with_label(
            "parent_requested")
    # Dagster's since_last_handled() also resets on the condition's first evaluation, which would
    # leave a corpus registered before automation was switched on unloaded: ours does not.
    handled = (dg.AutomationCondition.newly_requested() | dg.AutomationCondition.newly_updated()).with_label("handled")
    return (
        trigger.since(handled)
        & ~dg.AutomationCondition.any_deps_missing()
        & ~dg.AutomationCondition.any_deps_in_progress()
        & ~dg.AutomationCondition.in_progress()
    ).with_label(f"ingest {key.to_user_string()}")


class SpanningAutomationSensor(dg.AutomationConditionSensorDefinition):
    """Dagster's automation sensor, whose requests run over spans of at most `BATCH_SIZE` documents.

    Dagster evaluates the conditions and records the evaluations the UI shows. What it would
    launch, a backfill whose runs each cover a contiguous range of requested partitions, makes
    a run per document when the requests are scattered (after a chain change, every document
    whose chunks came out different is re-embedded): 1,000 runs for 2,000 documents. The same
    requests become runs over spans (`partitions.spans`), in which the stages skip the fresh
    partitions; the in-process path (`app.daemon_tick`) runs the same spans.

    While runs it asked for are still queued it does not evaluate: an evaluation reads the
    provenance of every partition of every asset (a few CPU-seconds at thousands of documents,
    each tick, taken from the steps on a small machine), and what it could ask for meanwhile
    would only queue behind them. A file that changes in that time is read when its run starts,
    or seen by the first evaluation after the queue has emptied, while the last runs go on.
    """

    def evaluate_tick(self, context: dg.SensorEvaluationContext) -> Any:
        queued = context.instance.get_runs_count(dg.RunsFilter(
            statuses=[dg.DagsterRunStatus.QUEUED], tags=dg.DagsterRun.tags_for_sensor(self)))
        if queued:
            return skipped_tick(context.cursor, f"{queued} runs it asked for are still queued")
        result = super().evaluate_tick(context)
        requested: dict[str, set[str]] = defaultdict(set)
        others = []
        for run_request in result.run_requests or ():
            if not _add_requested(run_request, requested, context.instance):
                others.append(run_request)
        if not requested:
            return result
        order = context.instance.get_dynamic_partitions(SOURCES.name)
        runs = [
            dg.RunRequest(asset_selection=[dg.AssetKey(a) for a in selection],
                          tags={**self.run_tags, RANGE_START: run[0], RANGE_END: run[-1]})
            for selection, span in spans(requested, order)
            for run in ranges(span, order, BATCH_SIZE)
        ]
        return with_run_requests(result, [*others, *runs])

    def with_attributes(self, *, jobs: Any = None, metadata: Any = None) -> "SpanningAutomationSensor":
        return SpanningAutomationSensor(
            self.name, target=self.asset_selection, run_tags=self.run_tags, tags=self.tags,
            default_status=self.default_status, minimum_interval_seconds=self.minimum_interval_seconds,
            description=self.description, metadata=metadata if metadata is not None else self.metadata,
            use_user_code_server=True,
        )


def _add_requested(run_request: dg.RunRequest, requested: dict[str, set[str]], instance: dg.DagsterInstance) -> bool:
    """Add what `run_request` asks for (a backfill's subset, a partition, or a partition range of
    the sources) to `requested`; False when it asks for something else."""
    subset = run_request.asset_graph_subset
    if subset is not None:
        if subset.non_partitioned_asset_keys:
            return False
        for key, partitions in subset.partitions_subsets_by_asset_key.items():
            requested[key.to_user_string()].update(partitions.get_partition_keys())
        return True
    if not run_request.asset_selection or run_request.asset_check_keys:
        return False
    start = run_request.tags.get(RANGE_START, run_request.partition_key)
    end = run_request.tags.get(RANGE_END, run_request.partition_key)
    if start is None or end is None:
        return False
    order = instance.get_dynamic_partitions(SOURCES.name)
    if start not in order or end not in order:
        return False
    keys = order[order.index(start):order.index(end) + 1]
    for key in run_request.asset_selection:
        requested[key.to_user_string()].update(keys)
    return True


def automation_sensor(minimum_interval_seconds: int = DEFAULT_SENSOR_INTERVAL_S) -> dg.AutomationConditionSensorDefinition:
    """Evaluates the ingestion conditions (their custom part runs in the code server) and runs
    what they request over spans."""
    with warnings.catch_warnings():  # use_user_code_server is beta; our conditions need it
        warnings.simplefilter("ignore", dg.BetaWarning)
        return SpanningAutomationSensor(
            "ingest_automation",
            target=dg.AssetSelection.groups("ingestion"),
            use_user_code_server=True,
            minimum_interval_seconds=minimum_interval_seconds,
            default_status=dg.DefaultSensorStatus.RUNNING,
            description="Materializes missing and stale ingestion partitions (the corpus sensor adds them).",
        )
