"""What the stored outputs say (`indx stats`, the `indx ingest` summary), straight from the
Parquet dataset the assets write, with pyarrow.

The dataset is hive-partitioned, one file per source (see `resources.storage`):
`{storage}/{asset}/source={quoted source_id}/part-0.parquet`, for the assets `page_outputs`
(one row per page: source_id, page, text, status, reader, reason, lines, metadata),
`chunk_map` (one row per chunk: id, document_id, source_id, locator, chunk_type, parent_ref,
page, bbox, bbox_reason, chunker, text, image, start_offset, end_offset, metadata) and
`chunks_table` (the chunk map's columns plus `vector`, null for unembedded chunks). Only the
columns a question needs are read; images and vectors stay on disk except their null mask.
"""

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from upath import UPath

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.fidelity import DocumentFidelity, measure
from indx_assets.pipeline.read_and_chunk import page_origins
from indx_assets.pipeline.readers import DocumentRead
from indx_assets.pipeline.schema import DOCUMENT_KEY, FIDELITY_KEY, chunks_from_table, text_files
from indx_assets.wiring.assets import stages
from indx_assets.wiring.resources.storage import FILE_NAME, StorageResource, row_group_batches

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


def _counts(table: pa.Table, column: str) -> dict[str, int]:
    return {r[column]: r["count_all"] for r in table.group_by(column).aggregate([([], "count_all")]).to_pylist()}


def _of_sources(sources: Sequence[str] | None) -> pc.Expression | None:
    """The filter on the hive `source` column (files of other sources are not opened)."""
    return None if sources is None else pc.field("source").isin(list(sources))


def table_counts(table_data: ds.Dataset, sources: Sequence[str] | None = None) -> dict[str, Any]:
    """`chunks_table` rows by chunker and by chunk type, how many carry a vector, and, by
    chunk type, how many do not (image chunks, unless an embedder takes images). Read a file's
    row group at a time (`storage.row_group_batches`): a vector's null mask comes only with its
    vectors, and a dataset scan (which reads ahead) held more the longer the table: 81 MiB
    over 8,000 rows and 209 MiB over 48,000, against 56 and 72 this way."""
    by_chunker: Counter[str] = Counter()
    by_type: Counter[str] = Counter()
    unembedded: Counter[str] = Counter()
    for fragment in table_data.get_fragments(filter=_of_sources(sources)):
        with table_data.filesystem.open_input_file(fragment.path) as f:
            for rows in row_group_batches(pq.ParquetFile(f), ["chunker", "chunk_type", "vector"]):
                types, vectors = rows.column("chunk_type"), rows.column("vector")
                by_chunker.update(rows.column("chunker").to_pylist())
                by_type.update(types.to_pylist())
                if vectors.null_count:
                    unembedded.update(types.filter(vectors.is_null()).to_pylist())
    return {
        "by_chunker": dict(by_chunker),
        "by_type": dict(by_type),
        "vectors": by_type.total() - unembedded.total(),
        "unembedded_by_type": dict(unembedded),
    }


def ingest_summary(storage_root: str, sources: Sequence[str], failed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What an ingest of `sources` left behind: documents by status (with each failed one's
    reason), pages by status, chunks by chunker and type, vectors written, and the documents
    whose chunks fall below the word-fidelity thresholds (`fidelity`), with their records. A
    source in `failed` (a stage failed for it this time: its file could not be read, say)
    counts as `failed` with that reason, whatever an earlier ingest stored for it."""
    failed = {s: why for s, why in (failed or {}).items() if s in set(sources)}
    documents: Counter[str] = Counter({"failed": len(failed)} if failed else {})
    problems: dict[str, str] = dict(failed)
    pages: dict[str, int] = {}
    page_data = dataset(storage_root, stages.PAGE_OUTPUTS)
    if page_data is not None:
        # A document's record is its page file's schema metadata: the footers say it all.
        for fragment in page_data.get_fragments(filter=_of_sources(sources)):
            source = ds.get_partition_keys(fragment.partition_expression)["source"]
            if source in failed:
                continue
            record = json.loads(fragment.physical_schema.metadata[b"indx.document"])
            documents[record["status"]] += 1
            if record["status"] != "ok" and record.get("reason"):
                problems[source] = record["reason"]
        pages = _counts(page_data.to_table(columns=["status"], filter=_of_sources(sources)), "status")
    below: dict[str, dict[str, Any]] = {}
    chunk_data = dataset(storage_root, stages.CHUNK_MAP)
    if chunk_data is not None:
        # each chunk map's footer holds its document's fidelity record (`schema.with_fidelity`)
        for fragment in chunk_data.get_fragments(filter=_of_sources(sources)):
            raw = (fragment.physical_schema.metadata or {}).get(FIDELITY_KEY)
            record = json.loads(raw) if raw else None
            if record is not None and not record["passes"]:
                below[ds.get_partition_keys(fragment.partition_expression)["source"]] = record
    if sum(documents.values()) < len(sources):
        documents["not ingested"] = len(sources) - sum(documents.values())
    table_data = dataset(storage_root, stages.CHUNKS_TABLE)
    counts = table_counts(table_data, sources) if table_data is not None else {
        "by_chunker": {}, "by_type": {}, "vectors": 0, "unembedded_by_type": {}}
    return {
        "documents": len(sources),
        "documents_by_status": dict(documents),
        "pages_by_status": pages,
        "chunks": sum(counts["by_chunker"].values()),
        "chunks_by_chunker": counts["by_chunker"],
        "chunks_by_type": counts["by_type"],
        "vectors": counts["vectors"],
        "unembedded_chunks": sum(counts["unembedded_by_type"].values()),
        "problems": problems,
        "below_fidelity": below,
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

    unembedded = table_counts(table_data)["unembedded_by_type"] if table_data is not None else {}

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


def stored_fidelity(storage_root: str, sources: Sequence[str] | None = None) -> Iterator[DocumentFidelity]:
    """The word fidelity (`fidelity.measure`) of every stored document (or of `sources`): its
    stored page outputs against its stored chunk map, one source at a time. A document without
    a chunk map has none of its words in chunks."""
    page_data = dataset(storage_root, stages.PAGE_OUTPUTS)
    if page_data is None:
        return
    storage = StorageResource(root=storage_root)
    for fragment in sorted(page_data.get_fragments(filter=_of_sources(sources)), key=lambda f: f.path):
        source_id = ds.get_partition_keys(fragment.partition_expression)["source"]
        beside = text_files(fragment.physical_schema)  # long texts are stored beside the rows
        pages = sorted((PageOutput(page=r["page"], status=r["status"], text=r["text"] if r["page"] not in beside
                                   else storage.read_text(stages.PAGE_OUTPUTS, source_id, beside[r["page"]]))
                        for r in fragment.to_table(columns=["page", "text", "status"]).to_pylist()),
                       key=lambda page: page.page)
        # where each page starts in its chunks' offsets, so a long page is measured in stretches as ingest measures it
        document = json.loads((fragment.physical_schema.metadata or {}).get(DOCUMENT_KEY, b"{}"))
        origins = page_origins(DocumentRead(document["media_type"], tuple(pages), "ok")) if "media_type" in document else None
        try:
            chunks = chunks_from_table(storage.read(stages.CHUNK_MAP, source_id))
        except FileNotFoundError:
            chunks = ()
        yield measure(source_id, pages, chunks, origins)
