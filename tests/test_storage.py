"""The storage resource: one Parquet file per (asset, source), on a path or an fsspec URI."""

from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from indx_assets.resources.storage import StorageResource

TABLE = pa.table({"id": ["a", "b"], "text": ["one", "two"]})


@pytest.mark.parametrize("root", ["local", "memory://indx-test/assets"])
def test_a_source_output_round_trips_and_deletes(root: str, tmp_path: Path) -> None:
    # memory:// is fsspec's real in-memory filesystem: the object-store code path without a network
    storage = StorageResource(root=str(tmp_path / "assets") if root == "local" else root)
    storage.write("chunk_map", "guides/a b.md", TABLE)
    assert storage.read("chunk_map", "guides/a b.md").equals(TABLE)
    assert storage.delete("chunk_map", "guides/a b.md")
    assert not storage.delete("chunk_map", "guides/a b.md")
    with pytest.raises(FileNotFoundError, match="no stored output for source 'guides/a b.md'"):
        storage.read("chunk_map", "guides/a b.md")


def test_the_layout_is_a_hive_dataset_whose_source_column_is_the_source_id(tmp_path: Path) -> None:
    storage = StorageResource(root=str(tmp_path))
    for source_id in ("notes/tea.txt", "weird name ü&=.md"):
        storage.write("chunk_map", source_id, TABLE)
    path = storage.path("chunk_map", "notes/tea.txt")
    assert path.parent.name == f"source={quote('notes/tea.txt', safe='')}"
    table = ds.dataset(tmp_path / "chunk_map", format="parquet", partitioning="hive").to_table()
    assert sorted(set(table.column("source").to_pylist())) == ["notes/tea.txt", "weird name ü&=.md"]
    assert table.num_rows == 4
    assert not list(tmp_path.rglob("*.partial")), "a finished write leaves no partial file"
