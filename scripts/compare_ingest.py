"""Compare two ingests of the same corpus: what a refactor must leave exactly as it was.

    python scripts/compare_ingest.py BASE_HOME NEW_HOME [--base-indx PATH] [--query Q ...] [--assets-only]

BASE_HOME and NEW_HOME are two `INDX_HOME` directories that ingested the same folders (the
same root labels, so the same source ids), one with the code before a change and one after.
It compares, source by source, the stored `page_outputs` and `chunk_map` Parquet outputs
(every column, row by row), then the LanceDB `chunks` table (ids, text, vectors within
1e-5), and, when `--base-indx` names the `indx` executable of the old code, the JSON results
of `indx search` for each query in every mode, old code on BASE_HOME against the `indx` on
PATH on NEW_HOME. It prints one line per difference class and a summary; exit 0 when all is
identical, 1 otherwise.
"""

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import lancedb
import numpy as np
import pyarrow.parquet as pq

ASSETS = ("page_outputs", "chunk_map")
DEFAULT_QUERIES = (
    "What was the net revenue?",
    "layout detection deep learning model",
    "Prince Andrew at the battle of Austerlitz",
    "table of fuel consumption",
    "how to install the package",
)
MODES = ("vector", "fts", "hybrid")


def outputs(home: Path, asset: str) -> dict[str, Path]:
    """Each source's Parquet output of `asset`, by its partition folder name."""
    root = home / "assets" / asset
    return {p.parent.name: p for p in sorted(root.glob("*/part-0.parquet"))}


def compare_asset(base: Path, new: Path, asset: str) -> Counter[str]:
    """Differences between two homes' outputs of one asset, counted by kind."""
    diffs: Counter[str] = Counter()
    old, cur = outputs(base, asset), outputs(new, asset)
    for key in sorted(old.keys() - cur.keys()):
        diffs["source only in base"] += 1
        print(f"{asset}: {key}: only in base")
    for key in sorted(cur.keys() - old.keys()):
        diffs["source only in new"] += 1
        print(f"{asset}: {key}: only in new")
    for key in sorted(old.keys() & cur.keys()):
        a, b = pq.read_table(old[key]), pq.read_table(cur[key])
        if a.num_rows != b.num_rows:
            diffs["row count"] += 1
            print(f"{asset}: {key}: {a.num_rows} rows -> {b.num_rows}")
            continue
        for name in sorted(set(a.column_names) | set(b.column_names)):
            if name not in a.column_names or name not in b.column_names:
                diffs[f"column {name} added/removed"] += 1
                continue
            if not a.column(name).equals(b.column(name)):
                left, right = a.column(name).to_pylist(), b.column(name).to_pylist()
                rows = sum(x != y for x, y in zip(left, right, strict=True))
                diffs[f"column {name}"] += rows
                print(f"{asset}: {key}: column {name}: {rows} of {a.num_rows} rows differ")
    return diffs


def compare_table(base: Path, new: Path) -> Counter[str]:
    """Differences between the two homes' LanceDB `chunks` tables (by id)."""
    diffs: Counter[str] = Counter()
    tables = [lancedb.connect(str(h / "lancedb")).open_table("chunks").to_arrow() for h in (base, new)]
    rows = [{r["id"]: r for r in t.select(["id", "text", "vector"]).to_pylist()} for t in tables]
    old, cur = rows
    diffs["id only in base"] = len(old.keys() - cur.keys())
    diffs["id only in new"] = len(cur.keys() - old.keys())
    for key in old.keys() & cur.keys():
        if old[key]["text"] != cur[key]["text"]:
            diffs["text"] += 1
        a, b = old[key]["vector"], cur[key]["vector"]
        if (a is None) != (b is None) or (a is not None and not np.allclose(a, b, atol=1e-5)):
            diffs["vector"] += 1
    print(f"chunks table: {len(old)} rows in base, {len(cur)} in new")
    return +diffs


def search(indx: str, home: Path, query: str, mode: str) -> list[tuple[str, float]]:
    """The ids and rounded scores `indx search --json` returns for one query."""
    env = {**os.environ, "INDX_HOME": str(home)}
    out = subprocess.run(
        [indx, "search", "--json", "-k", "10", "--mode", mode, query],
        env=env, capture_output=True, text=True, check=True,
    ).stdout
    return [(hit["id"], round(hit["score"], 4)) for hit in json.loads(out)]


def compare_search(base: Path, new: Path, base_indx: str, queries: list[str]) -> Counter[str]:
    diffs: Counter[str] = Counter()
    for query in queries:
        for mode in MODES:
            old = search(base_indx, base, query, mode)
            cur = search("indx", new, query, mode)
            if [i for i, _ in old] != [i for i, _ in cur]:
                diffs["search ranking"] += 1
                print(f"search {mode} {query!r}: ranking differs")
            elif old != cur:
                diffs["search scores"] += 1
                print(f"search {mode} {query!r}: same ranking, scores differ")
    return diffs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--base-indx", help="the old code's `indx` executable, to compare search")
    parser.add_argument("--query", action="append", help="a search query (repeatable)")
    parser.add_argument("--assets-only", action="store_true",
                        help="compare page outputs and chunk maps only (NEW_HOME's ingest was stopped before embedding)")
    args = parser.parse_args()
    diffs: Counter[str] = Counter()
    for asset in ASSETS:
        diffs += compare_asset(args.base, args.new, asset)
    if not args.assets_only:
        diffs += compare_table(args.base, args.new)
    if args.base_indx:
        diffs += compare_search(args.base, args.new, args.base_indx, args.query or list(DEFAULT_QUERIES))
    for kind, count in sorted(diffs.items()):
        print(f"DIFFERENT {kind}: {count}")
    print("identical" if not diffs else f"{sum(diffs.values())} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
