"""Does the LanceDB table hold exactly the files under the corpus roots?

The rule it checks (DESIGN §7, "once and only once"): every row id is distinct, every file
present under a root has its source in the table with exactly the chunk ids `indx chunk` gives
it (the same reading and chunking, with the source id the corpus gives the file), and no other
source has rows. The soak (`bench/soak.py`) and the concurrency tests judge a data directory
by it.
"""

from collections import Counter, defaultdict

from indx_assets.pipeline.read_and_chunk import encode_file, to_document
from indx_assets.wiring.definitions import build_resources
from indx_assets.wiring.settings import Settings


def expected_chunk_ids(settings: Settings) -> dict[str, set[str]]:
    """source id -> the chunk ids `indx chunk --source-id` gives each file under the roots."""
    resources = build_resources(settings)
    chain, corpus = resources["chain"].chain, resources["corpus"]  # type: ignore[attr-defined]
    expected = {}
    for source_id, path in corpus.iter_sources():
        document = to_document(encode_file(path, source_id=source_id, chain=chain))
        expected[source_id] = {c.id for c in document.chunks}
    return expected


def table_chunk_ids(settings: Settings) -> tuple[dict[str, set[str]], list[str]]:
    """source id -> the chunk ids the table holds for it, and the ids held more than once."""
    table = build_resources(settings)["lancedb"].existing_table()  # type: ignore[attr-defined]
    if table is None:
        return {}, []
    rows = table.to_arrow().select(["id", "source_id"]).to_pylist()
    held: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        held[row["source_id"]].add(row["id"])
    duplicates = sorted(i for i, n in Counter(r["id"] for r in rows).items() if n > 1)
    return dict(held), duplicates


def table_discrepancies(settings: Settings) -> list[str]:
    """Every way the table differs from the files present, one line each (empty: it matches)."""
    expected = expected_chunk_ids(settings)
    held, duplicates = table_chunk_ids(settings)
    problems = [f"id {i} is held more than once" for i in duplicates[:20]]
    for source_id in sorted(expected.keys() - held.keys()):
        if expected[source_id]:
            problems.append(f"{source_id}: file present, no rows ({len(expected[source_id])} chunks expected)")
    for source_id in sorted(held.keys() - expected.keys()):
        problems.append(f"{source_id}: {len(held[source_id])} rows, no such file")
    for source_id in sorted(expected.keys() & held.keys()):
        want, have = expected[source_id], held[source_id]
        if want != have:
            problems.append(f"{source_id}: {len(have - want)} rows not in its chunks, {len(want - have)} chunks not in the table")
    return problems
