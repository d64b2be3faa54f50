"""Named versions of the LanceDB chunk table: tagged before a re-chunk, restorable after.

A tag pins a table version: maintenance's cleanup keeps tagged versions, so `indx restore TAG`
can bring the table back to what search returned before a chunker upgrade. Restoring makes
the tagged content the table's newest version (history is kept, nothing is rewritten). It
restores the search table only; the stored Parquet outputs and Dagster's records still
describe the newest chunk map, so reinstall the old chain and `indx backfill --stale` to make
them agree again.
"""

from typing import Any

from indx_assets.wiring.resources.lancedb import LanceDBResource, utc_stamp


def tag_current(lancedb: LanceDBResource, prefix: str) -> tuple[str, int] | None:
    """Tag the table's current version as `{prefix}-{UTC timestamp}` (None if no table yet)."""
    name = f"{prefix}-{utc_stamp()}"
    version = lancedb.tag_current(name)
    return None if version is None else (name, version)


def tags(lancedb: LanceDBResource) -> dict[str, Any]:
    table = lancedb.existing_table()
    return {} if table is None else {name: info["version"] for name, info in table.tags.list().items()}


def restore(lancedb: LanceDBResource, tag: str) -> dict[str, Any]:
    """Make the tagged version the newest; KeyError naming the known tags if it does not exist."""
    known = tags(lancedb)
    if tag not in known:
        raise KeyError(f"no table version is tagged {tag!r}; tags: {', '.join(sorted(known)) or 'none'}")
    with lancedb.writing():  # a commit too: not beside a run's
        table = lancedb.table()
        before = table.version
        table.restore(tag)
    return {"tag": tag, "tagged_version": known[tag], "version_before": before, "version": table.version,
            "rows": table.count_rows()}
