"""One freshness judgement: the ingest op, `indx status` and the automation conditions agree on
which partitions are missing, stale or fresh, asset by asset, after a real ingest, an edited
file and a new one (a real Dagster instance, the corpus sensor's real scan, Dagster's own
automation evaluator)."""

from pathlib import Path

import dagster as dg

from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.wiring.assets.ingest import ASSET_KEYS, CHUNK_EMBEDDINGS, CHUNK_MAP, PAGE_OUTPUTS, build_ingest_assets
from indx_assets.wiring.assets.status import code_versions, corpus_status
from indx_assets.wiring.automation.conditions import ProvenanceStale
from indx_assets.wiring.assets.removal import SourceStores
from indx_assets.wiring.automation.sensor import Cursor, scan
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.resources.source_index import INDEX_FILE, SourceIndex
from indx_assets.wiring.settings import Settings


def _judged_by_status(instance: dg.DagsterInstance, settings: Settings, key: dg.AssetKey) -> tuple[set[str], set[str]]:
    """`indx status`'s missing and stale partitions of `key` (with the sensor's index, as the CLI)."""
    index = SourceIndex(settings.home / INDEX_FILE)
    status = corpus_status(instance, code_versions(build_definitions(settings)), index).assets[key]
    return set(status.missing), {pk for keys in status.stale.values() for pk in keys}


def _judged_by_automation(instance: dg.DagsterInstance, settings: Settings, key: dg.AssetKey) -> set[str]:
    """The partitions the automation's provenance condition holds true for, evaluated by Dagster
    on the project's assets with that condition alone (the full condition adds `newly_true` and
    request bookkeeping around it)."""
    versions = code_versions(build_definitions(settings))
    condition = ProvenanceStale(str(settings.home / INDEX_FILE))
    assets = build_ingest_assets(versions[CHUNK_MAP] or "", versions[CHUNK_EMBEDDINGS] or "",
                                 dict.fromkeys(ASSET_KEYS, condition), versions[PAGE_OUTPUTS] or "")
    defs = dg.Definitions(assets=[assets], resources=build_resources(settings))
    result = dg.evaluate_automation_conditions(defs=defs, instance=instance, asset_selection=dg.AssetSelection.assets(key))
    return {pk for pk in result.get_requested_partitions(key) if pk is not None}


def _done_by_the_op(instance: dg.DagsterInstance, settings: Settings, key: dg.AssetKey) -> set[str]:
    """The partitions the ingest op materializes when asked for `key` on every partition."""
    results = materialize_partitions(instance, settings, instance.get_dynamic_partitions("sources"),
                                     selection=[key.to_user_string()])
    assert all(r.success for r in results), results
    return {
        rec.event_log_entry.asset_materialization.partition
        for r in results
        for rec in instance.get_records_for_run(r.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
        if rec.event_log_entry.asset_materialization.asset_key == key
    }


def test_the_op_status_and_automation_judge_each_partition_alike(instance, settings: Settings) -> None:
    sync = sync_partitions(instance, settings)
    assert all(r.success for r in materialize_partitions(instance, settings, sync.current))
    cursor = scan(instance, SourceStores.of(build_resources(settings)), Cursor()).cursor  # the sensor's index: what each file's bytes are
    root = Path(settings.corpus_roots[0])
    edited = root / "notes" / "tea-harvest.txt"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nOolong is bruised, then fired.\n", encoding="utf-8")
    (root / "notes" / "new.txt").write_text("A new note about the harbour lantern.\n", encoding="utf-8")
    found = scan(instance, SourceStores.of(build_resources(settings)), cursor)
    instance.add_dynamic_partitions("sources", found.added)
    changed, added = "corpus/notes/tea-harvest.txt", "corpus/notes/new.txt"
    assert found.changed == [changed] and found.added == [added]

    # asset by asset down the graph, as a run would go: the three name the same partitions
    for key in ASSET_KEYS:
        missing, stale = _judged_by_status(instance, settings, key)
        assert (missing, stale) == ({added}, {changed}), key  # and every other partition fresh
        assert _judged_by_automation(instance, settings, key) == missing | stale, key
        assert _done_by_the_op(instance, settings, key) == missing | stale, key
    # once the op has run, all three call everything fresh
    for key in ASSET_KEYS:
        assert _judged_by_status(instance, settings, key) == (set(), set()), key
        assert _judged_by_automation(instance, settings, key) == set(), key
