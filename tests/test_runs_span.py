"""Documents that changed here and there are re-done in one run that spans the fresh ones
between them (the stages skip those), not a run each: after a chain change or scattered edits,
a run's set-up and events cost about a second. A partition the caller did not ask about, or
every partition under `force`, ends a run instead."""

from dataclasses import replace
from pathlib import Path

import dagster as dg
import lancedb

from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.wiring.assets.partitions import SOURCES, ranges
from indx_assets.wiring.assets.stages import SOURCE_DOCUMENTS
from indx_assets.wiring.settings import Settings


def test_runs_span_fresh_partitions_but_no_other() -> None:
    order = list("abcdefgh")
    assert list(ranges("bdf", order, 10, between="ce")) == [list("bcdef")]  # trailing fresh not included
    assert list(ranges("bdf", order, 2, between="ce")) == [list("bcd"), ["f"]]  # at most 2 of the keys a run
    assert list(ranges("bdh", order, 10, between="c")) == [list("bcd"), ["h"]]  # `e`, `f`, `g` not asked about
    assert list(ranges("bdf", order, 10)) == [["b"], ["d"], ["f"]]  # nothing known fresh: contiguous only


def test_scattered_edits_are_redone_in_one_run(instance: dg.DagsterInstance, settings: Settings, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(8):
        (root / f"note-{i}.txt").write_text(f"Note {i}: the keeper logged the weather at dawn.\n")
    settings = replace(settings, corpus_roots=(str(root),))
    sync = sync_partitions(instance, settings)
    assert all(r.success for r in materialize_partitions(instance, settings, sync.current))

    order = instance.get_dynamic_partitions(SOURCES.name)
    edited = order[1::3]  # 1, 4, 7: fresh ones between
    for pk in edited:
        path = next(p for p in root.iterdir() if pk.endswith(p.name))
        path.write_text(path.read_text() + "Fog came in by noon.\n")
    results = materialize_partitions(instance, settings, sync_partitions(instance, settings).current)

    assert len(results) == 1 and results[0].success
    assert results[0].partitions == order[1:8]
    records = instance.get_records_for_run(results[0].run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    redone = {r.event_log_entry.asset_materialization.partition for r in records
              if r.event_log_entry.asset_materialization.asset_key == dg.AssetKey(SOURCE_DOCUMENTS)}
    assert redone == set(edited)  # the fresh ones inside the span were skipped
    table = lancedb.connect(settings.lancedb_uri).open_table("chunks").to_arrow()
    ids = table.column("id").to_pylist()
    assert len(ids) == len(set(ids))
    texts = {s: t for s, t in zip(table.column("source_id").to_pylist(), table.column("text").to_pylist())}
    assert all(("Fog came in" in texts[pk]) == (pk in edited) for pk in order)
