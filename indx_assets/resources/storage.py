"""Per-partition Arrow/Parquet files for every asset, on a local path or an object store.

Layout (hive-style, one file per source): `{root}/{asset}/source={quoted source_id}/part-0.parquet`.
Query it directly: `pyarrow.dataset.dataset(f"{root}/chunk_map", partitioning="hive")`.
"""

from urllib.parse import quote

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
from upath import UPath

FILE_NAME = "part-0.parquet"


class StorageResource(dg.ConfigurableResource):
    """Reads and writes one Parquet file per (asset, source)."""

    root: str

    def path(self, asset: str, source_id: str) -> UPath:
        return UPath(self.root) / asset / f"source={quote(source_id, safe='')}" / FILE_NAME

    def write(self, asset: str, source_id: str, table: pa.Table) -> str:
        """Write atomically where the filesystem allows: a reader never sees half a file."""
        path = self.path(asset, source_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(FILE_NAME + ".partial")
        with partial.open("wb") as f:
            pq.write_table(table, f, compression="zstd")
        partial.rename(path)
        return str(path)

    def read(self, asset: str, source_id: str) -> pa.Table:
        path = self.path(asset, source_id)
        if not path.exists():
            raise FileNotFoundError(f"{asset} has no stored output for source {source_id!r} (looked in {path})")
        with path.open("rb") as f:
            return pq.read_table(f)

    def delete(self, asset: str, source_id: str) -> bool:
        """Remove a source's stored output; True if there was one."""
        path = self.path(asset, source_id)
        if not path.exists():
            return False
        path.unlink()
        try:
            path.parent.rmdir()
        except OSError:
            pass
        return True
