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


_READ_PEAK = r"""
import re, sys
from pathlib import Path
from indx_assets.wiring.resources.storage import StorageResource

def rss(key):
    return int(re.search(key + r":\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) * 1024

storage = StorageResource(root=sys.argv[1])
before, rows = rss("VmRSS"), 0
for batch in storage.read_batches("chunks_table", "corpus/ledger.xlsx"):
    rows += batch.num_rows
print(rows, rss("VmHWM") - before)
"""


def _read_peak(tmp: Path, rows: int) -> tuple[int, int]:
    """A `rows`-row chunk table of one source stored in steps (4,096 rows a batch, with 384-float
    vectors, as `stages.write_rows` stores a long document's), read back batch by batch
    (`read_batches`, as the LanceDB write reads it) in a process of its own: the rows read
    and the memory reading took (VmHWM over VmRSS before)."""
    import subprocess
    import sys

    import numpy as np

    from indx_assets.pipeline.schema import chunk_rows

    schema = chunk_rows(384)
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array(np.random.default_rng(0).random(4096 * 384, dtype=np.float32)), 384).cast(schema.field("vector").type)

    def batches():
        for at in range(0, rows, 4096):
            n = min(4096, rows - at)
            given = {"id": [f"c{at + i}" for i in range(n)], "source_id": ["corpus/ledger.xlsx"] * n,
                     "text": [f"Entry {at + i} | 2020-01-02 | Rent | {(at + i) * 1.25} | paid " * 8 for i in range(n)],
                     "vector": vectors.slice(0, n)}
            yield pa.RecordBatch.from_arrays([given[f.name] if f.name == "vector" else pa.array(given[f.name], f.type)
                                              if f.name in given else pa.nulls(n, f.type) for f in schema], schema=schema)

    root = tmp / "assets"
    StorageResource(root=str(root)).write_batches("chunks_table", "corpus/ledger.xlsx", schema, batches(),
                                                  [n for n in schema.names if n not in ("text", "image")])
    done = subprocess.run([sys.executable, "-c", _READ_PEAK, str(root)], capture_output=True, text=True, check=True)
    read, peak = map(int, done.stdout.split())
    return read, peak


def test_reading_a_stored_output_six_times_as_long_batch_by_batch_takes_no_more_memory(tmp_path: Path) -> None:
    short, long = _read_peak(tmp_path / "short", 16_384), _read_peak(tmp_path / "long", 98_304)
    assert (short[0], long[0]) == (16_384, 98_304)
    # `ParquetFile.iter_batches` kept what it had read of a table with vectors: its memory grew with
    # every row group (108 MiB, then 228 MiB for 6x the rows; read a row group at a time, 86 and 86)
    assert long[1] < short[1] + 16 * 2**20, f"{short[1] / 2**20:.0f} MiB, then {long[1] / 2**20:.0f} MiB for 6x the rows"
