"""The storage resource: one Parquet file per (asset, source), on a path or an fsspec URI."""

from pathlib import Path
from urllib.parse import quote

import dagster as dg
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from indx_assets.wiring.resources.storage import StorageResource

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


def run_reading_back(storage: StorageResource, sources: list[str], table: pa.Table = TABLE) -> dict[str, bool]:
    """In a real run: write each source's table, remove its file behind the storage's back,
    read it again. Which reads the run could still answer."""
    answered: dict[str, bool] = {}

    @dg.asset
    def stage(storage: StorageResource) -> None:
        for source_id in sources:
            storage.write("chunk_map", source_id, table)
        for source_id in sources:
            Path(str(storage.path("chunk_map", source_id))).unlink()
            try:
                answered[source_id] = storage.read("chunk_map", source_id).equals(table)
            except FileNotFoundError:
                answered[source_id] = False

    assert dg.materialize([stage], resources={"storage": storage}).success
    return answered


def test_a_run_reads_what_it_wrote_from_memory_and_only_within_the_run(tmp_path: Path) -> None:
    storage = StorageResource(root=str(tmp_path))
    assert run_reading_back(storage, ["a.md", "b.md"]) == {"a.md": True, "b.md": True}
    with pytest.raises(FileNotFoundError):  # outside a run, reads go to the files
        storage.read("chunk_map", "a.md")
    storage.write("chunk_map", "c.md", TABLE)
    assert storage.read("chunk_map", "c.md").equals(TABLE)


def test_the_run_cache_keeps_the_newest_tables_within_its_budget(tmp_path: Path) -> None:
    big = pa.table({"text": ["x" * 400_000]})
    # 1 MB holds two of these tables: the first of three is dropped, the later two are kept.
    answered = run_reading_back(StorageResource(root=str(tmp_path), run_cache_mb=1), ["1", "2", "3"], big)
    assert answered == {"1": False, "2": True, "3": True}
    assert run_reading_back(StorageResource(root=str(tmp_path / "off"), run_cache_mb=0), ["1"], big) == {"1": False}


def test_the_run_cache_never_keeps_one_output_over_its_item_bound(tmp_path: Path) -> None:
    """A long document's output (a million-row sheet's chunk map) is read back from its file by
    the next stage, not held through every stage after its own, however large the budget."""
    small, large = pa.table({"text": ["x" * 400_000]}), pa.table({"text": ["x" * 1_200_000]})
    storage = StorageResource(root=str(tmp_path), run_cache_mb=256, run_cache_item_mb=1)
    assert run_reading_back(storage, ["1"], large) == {"1": False}
    assert run_reading_back(storage, ["2"], small) == {"2": True}


CONCURRENT_WRITES = """
import sys
import pyarrow as pa
from indx_assets.wiring.resources.storage import StorageResource
storage, tag = StorageResource(root=sys.argv[1]), sys.argv[2]
for i in range(150):
    storage.write("chunk_map", "notes/tea.txt", pa.table({"id": [f"{tag}{i}"], "text": ["x" * 2000]}))
"""


def test_two_processes_writing_one_source_never_take_each_others_temporary_file(tmp_path: Path) -> None:
    # Two real processes (a retried run beside its predecessor, two ingests): a shared
    # `part-0.parquet.partial` name had one rename the other's file, or find it gone.
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT_WRITES, str(tmp_path), tag], stderr=subprocess.PIPE,
                              text=True) for tag in "AB"]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(e[-1500:] for e in errors)
    stored = StorageResource(root=str(tmp_path)).read("chunk_map", "notes/tea.txt")
    assert stored.column("id").to_pylist() in (["A149"], ["B149"])
    assert not list(tmp_path.rglob("*.partial")), "no temporary file is left behind"
