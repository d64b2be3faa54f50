"""What an ingest left behind, read back from the stored Parquet outputs."""

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from indx_assets.assets import stages
from indx_assets.resources.storage import StorageResource


def summarize(storage: StorageResource, source_ids: Sequence[str]) -> dict[str, Any]:
    """Documents by status, pages, chunks by chunker and type, vectors written."""
    documents: Counter[str] = Counter()
    pages: Counter[str] = Counter()
    chunkers: Counter[str] = Counter()
    types: Counter[str] = Counter()
    vectors = unembedded = 0
    problems: dict[str, str] = {}
    for sid in source_ids:
        try:
            page_table = storage.read(stages.PAGE_OUTPUTS, sid)
        except FileNotFoundError:
            documents["not ingested"] += 1
            continue
        document = json.loads(page_table.schema.metadata[b"indx.document"])
        documents[document["status"]] += 1
        if document["status"] != "ok" and document.get("reason"):
            problems[sid] = document["reason"]
        pages.update(page_table.column("status").to_pylist())
        try:
            rows = storage.read(stages.CHUNKS_TABLE, sid).select(["chunker", "chunk_type", "vector"])
        except FileNotFoundError:
            continue
        chunkers.update(rows.column("chunker").to_pylist())
        types.update(rows.column("chunk_type").to_pylist())
        nulls = rows.column("vector").null_count
        vectors += rows.num_rows - nulls
        unembedded += nulls
    return {
        "documents": len(source_ids),
        "documents_by_status": dict(documents),
        "pages_by_status": dict(pages),
        "chunks": sum(chunkers.values()),
        "chunks_by_chunker": dict(chunkers),
        "chunks_by_type": dict(types),
        "vectors": vectors,
        "unembedded_chunks": unembedded,
        "problems": problems,
    }
