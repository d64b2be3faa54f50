"""The automation path driven in-process: what the Dagster daemon does, one tick at a time.

A tick runs the corpus sensor's scan, registers the partitions it found, evaluates the
ingestion assets' automation conditions, and executes exactly the requested asset partitions
in batched runs (partitions that requested the same assets share runs). Tests and the load
test use it; in production `dagster-daemon` does the same with the sensors in `definitions`.
"""

from dataclasses import dataclass, field

import dagster as dg

from indx_assets.app.runner import BatchResult, materialize_partitions
from indx_assets.wiring.assets.ingest import ASSET_KEYS, BATCH_SIZE
from indx_assets.wiring.assets.partitions import SOURCES, spans
from indx_assets.wiring.assets.removal import SourceStores
from indx_assets.wiring.automation.sensor import PAGE_SIZE, Cursor, Tick, scan
from indx_assets.wiring.dagster_internals import AssetDaemonCursor
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.settings import Settings


@dataclass
class AutomationState:
    """The cursors a daemon would keep between ticks."""

    sensor: Cursor = field(default_factory=Cursor)
    automation: AssetDaemonCursor | None = None


@dataclass
class TickResult:
    sensor: Tick
    requested: dict[str, set[str]]
    runs: list[BatchResult]


def requested_by_asset(result: dg.EvaluateAutomationConditionsResult) -> dict[str, set[str]]:
    return {key.to_user_string(): {pk for pk in result.get_requested_partitions(key) if pk is not None}
            for key in ASSET_KEYS}


def evaluate(instance: dg.DagsterInstance, settings: Settings, state: AutomationState,
             defs: dg.Definitions | None = None) -> dict[str, set[str]]:
    """Evaluate the automation conditions once; the requested partitions per asset."""
    result = dg.evaluate_automation_conditions(
        defs=defs or build_definitions(settings), instance=instance, cursor=state.automation,
        asset_selection=dg.AssetSelection.assets(*ASSET_KEYS),
    )
    state.automation = result.cursor
    return requested_by_asset(result)


def run_requested(instance: dg.DagsterInstance, settings: Settings, requested: dict[str, set[str]],
                  batch_size: int = BATCH_SIZE) -> list[BatchResult]:
    """Execute the requested asset partitions in runs over spans (`partitions.spans`), as the
    daemon's automation sensor asks for them."""
    order = instance.get_dynamic_partitions(SOURCES.name)
    results = []
    for selection, span in spans(requested, order):
        results.extend(materialize_partitions(instance, settings, span, batch_size=batch_size, selection=selection))
    return results


def tick(instance: dg.DagsterInstance, settings: Settings, state: AutomationState,
         page_size: int = PAGE_SIZE, batch_size: int = BATCH_SIZE) -> TickResult:
    """One sensor tick, one automation evaluation, and the runs it asked for."""
    found = scan(instance, SourceStores.of(build_resources(settings)), state.sensor, page_size)
    state.sensor = found.cursor
    if found.added:
        instance.add_dynamic_partitions(SOURCES.name, found.added)
    requested = evaluate(instance, settings, state)
    runs = run_requested(instance, settings, requested, batch_size)
    return TickResult(found, requested, runs)
