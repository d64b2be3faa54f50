"""The chunk table's indexes: what building them costs in memory does not grow with a long document.

Real LanceDB tables on disk; the index build is measured in a process of its own (VmHWM over
VmRSS before), as `indx ingest` builds it after a long document's first ingest.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

from indx_assets.pipeline.schema import chunk_rows
from indx_assets.wiring.resources.lancedb import LanceDBResource

_INDEX_PEAK = r"""
import re, sys
from pathlib import Path
from indx_assets.wiring.resources.lancedb import LanceDBResource

def rss(key):
    return int(re.search(key + r":\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) * 1024

lancedb = LanceDBResource(uri=sys.argv[1])
table = lancedb.table()
rows = table.count_rows()
before = rss("VmRSS")
lancedb.ensure_indexes()
print(rows, rss("VmHWM") - before, len(lancedb.table().search("Consulting 80.01", query_type="fts").limit(5).to_list()))
"""


def _ledger_chunks(count: int, step: int = 8192) -> "list[pa.Table]":
    """`count` chunks as a long sheet's are, 10 ledger rows each (an entry number, a date, an
    account, an amount with cents, a status: most of their words occur once in the sheet), with
    384-float vectors, in tables of `step` rows (as `upsert_stream` appends them)."""
    schema = chunk_rows(384)
    accounts = ["Rent", "Travel", "Supplies", "Consulting", "Utilities", "Salaries"]
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array(np.random.default_rng(0).random(step * 384, dtype=np.float32)), 384).cast(schema.field("vector").type)

    def text(chunk: int) -> str:
        return "Entry Date Account Amount Status " + " ".join(
            f"{i} 2020-{1 + i % 12:02d}-{1 + i % 28:02d} {accounts[i % 6]} {i * 1.25 + 0.01:.2f} {'paid' if i % 3 else 'open'}"
            for i in range(chunk * 10 + 1, chunk * 10 + 11))

    tables = []
    for at in range(0, count, step):
        n = min(step, count - at)
        given = {"id": [f"ledger-{at + i}" for i in range(n)], "source_id": ["corpus/ledger.xlsx"] * n,
                 "text": [text(at + i) for i in range(n)], "vector": vectors.slice(0, n)}
        tables.append(pa.Table.from_arrays([given[f.name] if f.name == "vector" else pa.array(given[f.name], f.type)
                                            if f.name in given else pa.nulls(n, f.type) for f in schema], schema=schema))
    return tables


def _index_peak(tmp: Path, chunks: int) -> tuple[int, int, int]:
    """A table of one long sheet's `chunks`, appended in steps as a first ingest appends it, then
    its indexes built (`ensure_indexes`) in a process of its own: the rows, the memory the build
    took and the hits of a full-text query."""
    uri = str(tmp / "lancedb")
    lancedb = LanceDBResource(uri=uri)
    table = lancedb.table(chunk_rows(384))
    for part in _ledger_chunks(chunks):
        table.add(part)
    done = subprocess.run([sys.executable, "-c", _INDEX_PEAK, uri], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    rows, peak, hits = map(int, done.stdout.split())
    return rows, peak, hits


def test_building_the_indexes_over_a_long_sheet_six_times_as_long_takes_little_more_memory(tmp_path: Path) -> None:
    short, long = _index_peak(tmp_path / "short", 10_000), _index_peak(tmp_path / "long", 60_000)
    assert (short[0], long[0]) == (10_000, 60_000)
    assert short[2] == long[2] == 5, "the full-text index finds the words"
    # the full-text build held every posting list until it wrote the index (LanceDB's default
    # limit is 2 GiB a worker): 53 MiB for 10,000 ledger chunks, 278 for 100,000; now it writes
    # a partition out every `FTS_BUILD_MIB`. 6x the chunks took 134 MiB more before, 46-55 MiB
    # more since (the allocator's and LanceDB's threads vary it run to run)
    assert long[1] < short[1] + 80 * 2**20, f"{short[1] / 2**20:.0f} MiB, then {long[1] / 2**20:.0f} MiB for 6x the chunks"
