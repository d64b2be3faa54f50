"""Corpus statistics straight from the Parquet dataset the assets write, with pyarrow.

The dataset is hive-partitioned, one file per source (see `resources.storage`):
`{storage}/{asset}/source={quoted source_id}/part-0.parquet`, for the assets `page_outputs`
(one row per page: source_id, page, text, status, reader, reason, lines, metadata),
`chunk_map` (one row per chunk: id, document_id, source_id, locator, chunk_type, parent_ref,
page, bbox, bbox_reason, chunker, text, image, start_offset, end_offset, metadata) and
`chunks_table` (the chunk map's columns plus `vector`, null for unembedded chunks). Only the
columns a question needs are read; images and vectors stay on disk except their null mask.
"""

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from upath import UPath

from indx_assets.assets import stages
from indx_assets.resources.storage import FILE_NAME

PERCENTILES = (0.5, 0.9, 0.99)


def dataset(storage_root: str, asset: str) -> ds.Dataset | None:
    """One asset's Parquet files as a dataset (None before anything was written). Files are
    listed explicitly so a `.partial` file being written is never read."""
    base = UPath(storage_root) / asset
    if not base.exists():
        return None
    files = [p.path for p in base.glob(f"source=*/{FILE_NAME}")]
    if not files:
        return None
    return ds.dataset(files, format="parquet", filesystem=base.fs,
                      partitioning=ds.partitioning(flavor="hive"), partition_base_dir=base.path)


def _distribution(values: pa.Array) -> dict[str, Any]:
    if len(values) == 0:
        return {"count": 0}
    quantiles = pc.quantile(values, q=list(PERCENTILES), interpolation="nearest").to_pylist()
    return {
        "count": len(values),
        "min": pc.min(values).as_py(),
        "mean": round(pc.mean(values).as_py(), 1),
        **{f"p{int(q * 100)}": v for q, v in zip(PERCENTILES, quantiles, strict=True)},
        "max": pc.max(values).as_py(),
    }


def corpus_stats(storage_root: str) -> dict[str, Any]:
    """Chunks per document, chunk size in characters, share of chunks per chunker, pages
    without chunks, and image chunks left without a vector."""
    chunk_data = dataset(storage_root, stages.CHUNK_MAP)
    page_data = dataset(storage_root, stages.PAGE_OUTPUTS)
    table_data = dataset(storage_root, stages.CHUNKS_TABLE)
    if chunk_data is None or page_data is None:
        return {"documents": 0, "chunks": 0}
    chunks = chunk_data.to_table(columns=["source_id", "page", "chunker", "chunk_type", "text"])
    pages = page_data.to_table(columns=["source_id", "page", "status"])

    per_document = chunks.group_by("source_id").aggregate([("page", "count")])
    documents = pages.group_by("source_id").aggregate([]).num_rows
    chunk_counts = per_document.column("page_count")
    zero_chunk_documents = documents - per_document.num_rows
    counts = pa.concat_arrays([chunk_counts.combine_chunks(), pa.array([0] * zero_chunk_documents, pa.int64())])

    sizes = pc.utf8_length(chunks.column("text").combine_chunks()).drop_null()
    by_chunker = chunks.group_by("chunker").aggregate([("page", "count")]).to_pylist()
    total = chunks.num_rows

    chunked_pages = chunks.group_by(["source_id", "page"]).aggregate([])
    unchunked = pages.join(chunked_pages, ["source_id", "page"], join_type="left anti")
    unchunked_by_status = unchunked.group_by("status").aggregate([("page", "count")]).to_pylist()

    unembedded: dict[str, int] = {}
    if table_data is not None:
        rows = table_data.to_table(columns=["chunk_type"], filter=pc.field("vector").is_null())
        unembedded = {r["chunk_type"]: r["count_all"] for r in rows.group_by("chunk_type").aggregate([([], "count_all")]).to_pylist()}

    return {
        "documents": documents,
        "chunks": total,
        "chunks_per_document": _distribution(counts),
        "chunk_characters": _distribution(sizes),
        "chunks_by_chunker": {r["chunker"]: {"chunks": r["page_count"], "share": round(r["page_count"] / total, 4)}
                              for r in sorted(by_chunker, key=lambda r: -r["page_count"])} if total else {},
        "pages": pages.num_rows,
        "pages_without_chunks": unchunked.num_rows,
        "pages_without_chunks_by_status": {r["status"]: r["page_count"] for r in unchunked_by_status},
        "unembedded_chunks": sum(unembedded.values()),
        "unembedded_chunks_by_type": unembedded,
    }
