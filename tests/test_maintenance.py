"""The chunks-table maintenance asset on a real LanceDB table after a real ingest: it compacts
and indexes without losing, duplicating or changing a row, and keeps tagged versions."""

import dagster as dg
import numpy as np

from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.app.search import search_chunks
from indx_assets.wiring.assets.maintenance import chunks_table_maintenance
from indx_assets.wiring.definitions import build_resources
from indx_assets.wiring.resources import LanceDBResource
from indx_assets.wiring.settings import Settings

QUERY = "How long are old table versions kept before cleanup?"


def rows_by_id(lancedb: LanceDBResource) -> dict[str, tuple[str, str, list[float]]]:
    table = lancedb.table().to_arrow().select(["id", "source_id", "text", "vector"]).to_pylist()
    by_id = {r["id"]: (r["source_id"], r["text"], r["vector"]) for r in table}
    assert len(by_id) == len(table), "an id is in the table twice"
    return by_id


def test_maintenance_compacts_and_indexes_without_changing_a_row_and_keeps_tagged_versions(
    instance: dg.DagsterInstance, settings: Settings
) -> None:
    sync = sync_partitions(instance, settings)
    # one document per run: one table version and at least one fragment each, as a live corpus leaves them
    assert all(r.success for r in materialize_partitions(instance, settings, sync.current, batch_size=1))
    lancedb: LanceDBResource = build_resources(settings)["lancedb"]  # type: ignore[assignment]
    table = lancedb.table()
    table.tags.create("before-rechunk-test", table.version)
    tagged_rows = table.count_rows()
    before = rows_by_id(lancedb)
    fragments_before = table.stats()["fragment_stats"]["num_fragments"]
    hit_before = search_chunks(settings, QUERY, k=1)[0].id

    result = dg.materialize([chunks_table_maintenance], instance=instance,
                            resources={"lancedb": lancedb},
                            run_config={"ops": {"chunks_table_maintenance": {"config": {"keep_versions_days": 0.0}}}})
    assert result.success
    (materialization,) = result.asset_materializations_for_node("chunks_table_maintenance")
    meta = {k: v.value for k, v in materialization.metadata.items()}

    after = rows_by_id(lancedb)
    assert after.keys() == before.keys()
    for chunk_id, (source_id, text, vector) in before.items():
        assert after[chunk_id][:2] == (source_id, text)
        assert np.array_equal(after[chunk_id][2], vector)
    assert meta["rows"] == len(before) and meta["fragments"] < fragments_before
    assert meta["fragments_removed"] > 0
    assert {"text", "source_id", "id"} <= set(meta["indexes"])
    assert meta["vector_index"].startswith("not yet")  # the sample corpus is far below the threshold
    # old untagged versions went; the tagged one is still there to restore
    assert meta["old_versions_removed"] > 0 and meta["tags_kept"] == ["before-rechunk-test"]
    tagged = lancedb.table()
    tagged.checkout("before-rechunk-test")
    assert tagged.count_rows() == tagged_rows
    assert search_chunks(settings, QUERY, k=1)[0].id == hit_before
