"""LanceDB maintenance as its own non-partitioned asset, on a daily schedule.

Writers upsert one source per commit, which leaves many small fragments and versions behind
and leaves new rows outside the indexes until `optimize()`. Maintenance, not every write:

- `optimize()`: compacts fragments and brings the full-text and scalar indexes up to date;
- a vector index (IVF-PQ, cosine) once the table holds `VECTOR_INDEX_MIN_ROWS` embedded rows:
  below that a flat scan of 384-d vectors takes a few milliseconds and is exact, so an
  approximate index buys nothing and costs recall;
- old versions older than `keep_versions_days` are cleaned up, except tagged ones (the
  versions `indx backfill` tags before a re-chunk stay restorable).
"""

from datetime import timedelta

import dagster as dg

from indx_assets.wiring.resources import LanceDBResource

MAINTENANCE = dg.AssetKey("chunks_table_maintenance")
#: Rows with a vector before a vector index is built (LanceDB's guidance: ~100k rows is where
#: IVF-PQ starts to beat brute force; we start earlier, at 50k, with enough rows to train PQ).
VECTOR_INDEX_MIN_ROWS = 50_000
DAILY = "0 3 * * *"


class MaintenanceConfig(dg.Config):
    keep_versions_days: float = 7.0
    """Versions older than this are removed (tagged versions are kept)."""
    vector_index_min_rows: int = VECTOR_INDEX_MIN_ROWS


@dg.asset(
    key=MAINTENANCE,
    deps=[dg.AssetKey("chunks_table")],
    group_name="maintenance",
    kinds={"lancedb"},
    description="Compacts the LanceDB chunks table, refreshes its indexes, builds the vector index once it "
                "pays, and removes old untagged versions.",
    pool="lancedb_maintenance",
)
def chunks_table_maintenance(context: dg.AssetExecutionContext, config: MaintenanceConfig,
                             lancedb: LanceDBResource) -> dg.MaterializeResult:
    # its compaction and index builds are commits: not beside an ingest's (`LanceDBResource.writing`)
    with lancedb.writing():
        table = lancedb.existing_table()
        if table is None:
            return dg.MaterializeResult(metadata={"skipped": "the chunks table does not exist yet"})
        before = table.version
        lancedb.ensure_indexes()
        embedded = table.count_rows("vector IS NOT NULL")
        indexed = {tuple(i.columns) for i in table.list_indices()}
        built_vector_index = False
        if embedded >= config.vector_index_min_rows and ("vector",) not in indexed:
            table.create_index(metric="cosine", vector_column_name="vector", index_type="IVF_PQ")
            built_vector_index = True
        # Through Lance itself: LanceDB's optimize() refuses to clean up while an old version is
        # tagged, and the tags `indx backfill` leaves must survive maintenance.
        dataset = table.to_lance()
        compaction = dataset.optimize.compact_files()
        dataset.optimize.optimize_indices()
        prune = dataset.cleanup_old_versions(older_than=timedelta(days=config.keep_versions_days),
                                             error_if_tagged_old_versions=False)
        table = lancedb.table()
    context.log.info(f"optimize: {compaction}; cleanup: {prune}")
    return dg.MaterializeResult(metadata={
        "rows": table.count_rows(),
        "embedded_rows": embedded,
        "version_before": before,
        "version_after": table.version,
        "fragments": table.stats()["fragment_stats"]["num_fragments"],
        "fragments_removed": compaction.fragments_removed,
        "fragments_added": compaction.fragments_added,
        "old_versions_removed": prune.old_versions,
        "bytes_removed": prune.bytes_removed,
        "tags_kept": sorted(table.tags.list()),
        "vector_index": "built" if built_vector_index else (
            "present" if ("vector",) in indexed else f"not yet (< {config.vector_index_min_rows} embedded rows)"),
        "indexes": sorted(".".join(i.columns) for i in table.list_indices()),
    })


maintenance_job = dg.define_asset_job("lancedb_maintenance", selection=[MAINTENANCE])
maintenance_schedule = dg.ScheduleDefinition(
    name="lancedb_maintenance_daily",
    job=maintenance_job,
    cron_schedule=DAILY,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Daily LanceDB maintenance: optimize, vector index when it pays, old version cleanup.",
)
