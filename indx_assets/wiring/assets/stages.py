"""The work of each asset for one source, independent of Dagster's bookkeeping.

Each stage reads its upstream's stored Parquet, does its one job, writes its own Parquet and
returns the data version (a hash of what it wrote) and the metadata a person wants to see.
"""

import base64
import io
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc
from upath import UPath

if TYPE_CHECKING:
    import numpy as np

from indx_assets.pipeline.chain import Chain
from indx_assets.pipeline.chain_runner import ChunkMap, run_chain
from indx_assets.pipeline.document import Document
from indx_assets.pipeline.embedder import piece_vectors
from indx_assets.pipeline.embedders.pictures import VECTOR_SOURCE_KEY, PictureOcr, page_titles, picture_input
from indx_assets.pipeline.embedders.registry import LoadedEmbedder
from indx_assets.pipeline.fidelity import UNSTRUCTURED_KEY, measure
from indx_assets.pipeline.fidelity import summary as fidelity_summary
from indx_assets.pipeline.media import detect_media_type
from indx_assets.pipeline.read_and_chunk import Encoded, to_document
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig, read_document_file
from indx_assets.pipeline.readers.ooxml_guard import OLE_MAGIC
from indx_assets.pipeline.readers.pdf import PREVIEW_DPI, PREVIEW_MAX_PAGES, PdfParse
from indx_assets.pipeline.schema import (
    chunk_rows,
    chunks_table,
    combine_digests,
    digest,
    embeddings_schema,
    long_texts,
    pages_table,
    read_from_pages,
    space_of,
    vector_dimension,
    with_fidelity,
)
from indx_assets.wiring.resources.lancedb import LanceDBResource
from indx_assets.wiring.resources.source_index import readable_name
from indx_assets.wiring.resources.storage import StorageResource

SOURCE_DOCUMENTS = "source_documents"
PAGE_OUTPUTS = "page_outputs"
CHUNK_MAP = "chunk_map"
CHUNK_EMBEDDINGS = "chunk_embeddings"
CHUNKS_TABLE = "chunks_table"

SOURCE_SCHEMA = pa.schema(
    [("source_id", pa.string()), ("name", pa.string()), ("media_type", pa.string()), ("sha256", pa.string()),
     ("size", pa.int64()), ("content", pa.large_binary()), ("refused", pa.string()), ("reason", pa.string())]
)


@dataclass(frozen=True)
class StageOutput:
    data_version: str
    metadata: dict[str, Any] = field(default_factory=dict)


def store_source(source_id: str, path: UPath, storage: StorageResource) -> StageOutput:
    """Copy the source's bytes into storage in steps and record its row: name, media type,
    sha256 (the data version, of the bytes copied) and size. Only a zip or OLE container is
    read whole here, because what it holds is listed at its end."""
    sha, size = storage.write_blob(SOURCE_DOCUMENTS, source_id, path)
    head = storage.read_blob(SOURCE_DOCUMENTS, source_id, 8192)
    if head.startswith((b"PK", OLE_MAGIC)):
        head = storage.read_blob(SOURCE_DOCUMENTS, source_id)
    name = readable_name(path.name)  # a name that is not UTF-8 cannot be a Parquet string
    media_type = detect_media_type(head, name)
    del head
    table = pa.Table.from_pylist(
        [{"source_id": source_id, "name": name, "media_type": media_type, "sha256": sha, "size": size,
          "content": None}],
        schema=SOURCE_SCHEMA,
    )
    storage.write(SOURCE_DOCUMENTS, source_id, table)
    return StageOutput(sha, {"media_type": media_type, "bytes": size, "sha256": sha})


def refusal_version(status: str, reason: str) -> str:
    """The data version of a refused source: a hash of the refusal, so changing a bound that
    refused it re-runs what follows (and the sensor never reads a refused file to hash it)."""
    return combine_digests(["refused", status, reason])


def store_refusal(source_id: str, name: str, size: int, status: str, reason: str, storage: StorageResource) -> StageOutput:
    """Record a source refused before it was read (`CorpusResource.refusal`): no bytes, the
    document status and reason, which `read_pages` reports as the document's."""
    version = refusal_version(status, reason)
    media_type = detect_media_type(b"", name)
    table = pa.Table.from_pylist(
        [{"source_id": source_id, "name": name, "media_type": media_type, "sha256": None, "size": size,
          "content": None, "refused": status, "reason": reason}],
        schema=SOURCE_SCHEMA,
    )
    storage.write(SOURCE_DOCUMENTS, source_id, table)
    return StageOutput(version, {"media_type": media_type, "bytes": size, "refused": status, "reason": reason})


def _source_row(source_id: str, storage: StorageResource) -> dict[str, Any]:
    """The source's row; its bytes are in `content`, or, when that is null (written since the
    bytes moved beside the row), in the blob beside it; a refused source has none."""
    row = storage.read(SOURCE_DOCUMENTS, source_id).to_pylist()[0]
    if row["content"] is None:
        row["content"] = b"" if row.get("refused") else storage.read_blob(SOURCE_DOCUMENTS, source_id)
    return row


def _source(source_id: str, storage: StorageResource) -> tuple[bytes, str]:
    row = _source_row(source_id, storage)
    return row["content"], row["media_type"]


def read_pages(source_id: str, storage: StorageResource, config: ReaderConfig) -> tuple[StageOutput, object]:
    """Read the stored source's pages and store them; returns the stage's output and the
    reader's parsed form of the document (`DocumentRead.parsed`, None when there is none), for
    `cut_chunks` of this document only."""
    row = storage.read(SOURCE_DOCUMENTS, source_id).to_pylist()[0]
    media_type = row["media_type"]
    if row.get("refused"):
        read = DocumentRead.failure(media_type, row["refused"], row["reason"] or row["refused"])
    elif row["content"] is not None:  # written before the bytes moved beside the row
        read = read_document_file(io.BytesIO(row.pop("content")), media_type, config)
    else:  # read from the file: a text is decoded in steps, never held beside its bytes
        with storage.open_blob(SOURCE_DOCUMENTS, source_id) as file:
            read = read_document_file(file, media_type, config)
    metadata: dict[str, Any] = {
        "status": read.status,
        "pages": len(read.pages),
        "pages_by_status": dict(Counter(p.status for p in read.pages)),
        "readers": sorted({p.reader for p in read.pages}),
    }
    if read.reason:
        metadata["reason"] = read.reason
    parsed = read.parsed
    long = long_texts(read)  # stored beside the row: in it, Arrow and Parquet would copy them twice over
    files = {page: storage.write_text(PAGE_OUTPUTS, source_id, text) for page, text in long.items()}
    table = pages_table(source_id, read, files)
    del read
    version = digest(table, long)
    del long
    storage.write(PAGE_OUTPUTS, source_id, table, beside=files.values())
    return StageOutput(version, metadata), parsed


def stored_pages(source_id: str, storage: StorageResource) -> DocumentRead:
    """The stored page outputs of a source, long texts read from beside their rows."""
    return read_from_pages(storage.read(PAGE_OUTPUTS, source_id),
                           lambda name: storage.read_text(PAGE_OUTPUTS, source_id, name))


def encode_stored(source_id: str, storage: StorageResource, chain: Chain, parsed: object = None) -> tuple[bytes, Encoded]:
    """Re-run the chain on a stored source and its stored page outputs (never re-reads the
    source itself); returns the source's bytes with the result. `parsed` is the reader's
    parsed form of the source when it was read just now (`read_pages`), handed to the chain."""
    content, media_type = _source(source_id, storage)
    read = stored_pages(source_id, storage)
    chunk_map = run_chain(chain, content, media_type, read.pages, parsed) if read.pages else ChunkMap((), ())
    return content, Encoded(source_id, read, chunk_map, chain)


#: Documents up to this many pages get a picture of their first page's cut in the UI, drawn at
#: the resolution the PDF reader renders their first page at while reading it (`PdfParse.preview`).
PICTURE_MAX_PAGES = PREVIEW_MAX_PAGES
PICTURE_DPI = PREVIEW_DPI


def first_page_picture(content: bytes, encoded: Encoded, document: Document, parsed: object = None) -> dg.MetadataValue | None:
    """The first page with its chunk boxes drawn and numbered, as Markdown the UI renders;
    None for large documents and for pages whose chunks have no boxes (nothing to see). A PDF's
    page is the reader's preview in `parsed` (its `PdfParse`) when at hand, else rendered here."""
    from indx_assets.pipeline.chunk_picture import render_chunk_picture

    first = [c for c in document.chunks if c.page == 1]
    if len(encoded.read.pages) > PICTURE_MAX_PAGES or not any(c.bbox for c in first):
        return None
    meta = encoded.read.metadata
    width, height = meta.get("slide_width"), meta.get("slide_height")
    aspect = width / height if isinstance(width, int) and isinstance(height, int) and height else 1 / 2**0.5
    preview = parsed.preview if isinstance(parsed, PdfParse) else None
    png = render_chunk_picture(content, encoded.media_type, 1, first, dpi=PICTURE_DPI, aspect=aspect, page_image=preview)
    if png is None:
        return None
    return dg.MetadataValue.md(f"![chunks of page 1](data:image/png;base64,{base64.b64encode(png).decode()})")


def cut_chunks(source_id: str, storage: StorageResource, chain: Chain, parsed: object = None) -> StageOutput:
    """Cut the stored source's stored pages with `chain` and store the chunk map (with the
    reader's parsed form of the source, `parsed`, when it was read just now)."""
    content, encoded = encode_stored(source_id, storage, chain, parsed)
    document = to_document(encoded)
    fidelity = fidelity_summary(measure(source_id, encoded.read.pages, document.chunks))
    table = with_fidelity(chunks_table(document), fidelity)
    storage.write(CHUNK_MAP, source_id, table)
    metadata: dict[str, Any] = {
        "chunks": table.num_rows,
        "chunks_by_chunker": dict(Counter(c.chunker for c in document.chunks)),
        "chunks_by_type": dict(Counter(c.chunk_type for c in document.chunks)),
        "pages_without_chunks": list(encoded.chunk_map.unclaimed_pages),
        "chain": chain.fingerprint,
        "fidelity": fidelity,
    }
    if not chain.links:
        metadata["warning"] = "no chunker is installed (entry-point group indx.chunkers is empty): nothing was chunked"
    unstructured = {str(p["page"]): p[UNSTRUCTURED_KEY] for p in document.metadata["pages"] if p.get(UNSTRUCTURED_KEY)}
    if unstructured:  # text a parser gave up on, kept as plain text: why, page by page
        metadata["unstructured_pages"] = unstructured
    if encoded.chunk_map.failed_chunkers:
        metadata["failed_chunkers"] = list(encoded.chunk_map.failed_chunkers)
    picture = first_page_picture(content, encoded, document, parsed)
    if picture is not None:
        metadata["chunk_picture"] = picture
    return StageOutput(digest(table), metadata)


def _rows(table: pa.Table, step: int = 4096) -> Iterator[dict[str, Any]]:
    """The rows of `table` as dicts, `step` at a time: a long document's rows are never all
    Python objects at once (its chunks' metadata, a table's HTML among it, cost 3x as such)."""
    for batch in table.to_batches(max_chunksize=step):
        yield from batch.to_pylist()


def embed_chunks(
    source_ids: Sequence[str], storage: StorageResource, loaded: LoadedEmbedder, chunk_versions: dict[str, str],
    version: str, reader_config: ReaderConfig,
) -> dict[str, StageOutput]:
    """Embed the chunks of several sources in one batched pass.

    A chunk cut into sentences gets the centroid of its sentences' vectors (`piece_vectors`).
    An image chunk gets a vector from its pixels or from the text describing it, recorded as
    its `vector_source` (`embedders.pictures`; OCR with `reader_config`'s settings); one nothing
    describes gets none.
    The data version is derived from the chunk map's version, `version` (the embedder's
    identity) and, for a document whose pictures reached OCR, what read them
    (`PictureOcr.fingerprint`): together they decide the vectors (hashing floats would make
    version noise of batch composition).
    The stored vectors record their space (`EmbedderIdentity.space`), which the table takes on.
    """
    embedder, identity = loaded.embedder, loaded.identity
    pixels = "image" in embedder.modalities
    texts: list[str] = []
    owners: list[tuple[str, str]] = []
    holders: list[str | None] = []  # the chunk id a sentence belongs to
    pictures: list[tuple[str, str, bytes]] = []  # (source, chunk id, image bytes)
    sources: dict[str, str] = {}  # image chunk id -> its vector source
    skipped: Counter[str] = Counter()
    ocr_problems: dict[str, str] = {}
    ocr_versions: dict[str, str] = {}
    for sid in source_ids:
        table = storage.read(CHUNK_MAP, sid).select(["id", "text", "chunk_type", "page", "image", "metadata"])
        titles: dict[int | None, str] | None = None  # found when a picture needs them: few documents have any
        ocr = None if pixels else PictureOcr(reader_config)
        for row in _rows(table):
            if row["text"]:
                texts.append(row["text"])
                owners.append((sid, row["id"]))
                link = json.loads(row["metadata"] or "{}").get("chunk_id") if row["chunk_type"] == "sentence" else None
                holders.append(link)
                continue
            if titles is None:
                titles = page_titles(_rows(table))
            described = picture_input(row, titles, pixels, ocr)
            if described is None:
                skipped[sid] += 1
                continue
            sources[row["id"]] = described.source
            if described.image:
                pictures.append((sid, row["id"], described.image))
            else:
                texts.append(described.text)
                owners.append((sid, row["id"]))
                holders.append(None)
        if ocr is not None and ocr.problem:
            ocr_problems[sid] = ocr.problem
        if ocr is not None and (read_by := ocr.fingerprint()) is not None:
            ocr_versions[sid] = read_by
    position = {chunk_id: i for i, (_, chunk_id) in enumerate(owners)}
    vectors = piece_vectors(embedder.embed_texts, texts, [position.get(h) if h else None for h in holders])
    del texts, position, holders
    ids: dict[str, list[str]] = {sid: [] for sid in source_ids}
    rows_of: dict[str, list[int]] = {sid: [] for sid in source_ids}  # rows of `vectors`, then of the pictures'
    for i, (sid, chunk_id) in enumerate(owners):
        ids[sid].append(chunk_id)
        rows_of[sid].append(i)
    if pictures:
        import numpy as np

        drawn = embedder.embed_images([p[2] for p in pictures])
        for i, (sid, chunk_id, _) in enumerate(pictures, start=len(vectors)):
            ids[sid].append(chunk_id)
            rows_of[sid].append(i)
        vectors = np.concatenate([vectors, drawn])
    outputs = {}
    schema = embeddings_schema(embedder.dimension, identity.space)
    for sid in source_ids:
        table = pa.table([pa.array(ids[sid], pa.string()), vector_column(vectors[rows_of[sid]], schema.field("vector").type),
                          pa.array([sources.get(cid) for cid in ids[sid]], pa.string())], schema=schema)
        storage.write(CHUNK_EMBEDDINGS, sid, table)
        metadata: dict[str, Any] = {"vectors": len(ids[sid]), "model": embedder.model_version, "embedder": identity.name}
        by_source = Counter(sources[cid] for cid in ids[sid] if cid in sources)
        if by_source:
            metadata["image_vectors_by_source"] = dict(sorted(by_source.items()))
        if skipped[sid]:
            metadata["unembedded_image_chunks"] = skipped[sid]
            metadata["unembedded_reason"] = ("nothing describes these pictures (no alt text, no caption or page title,"
                                             " no text OCR could read) and the embedder does not embed pixels")
            if sid in ocr_problems:
                metadata["unembedded_ocr"] = ocr_problems[sid]
        read_by = [ocr_versions[sid]] if sid in ocr_versions else []
        outputs[sid] = StageOutput(combine_digests([chunk_versions[sid], version, *read_by]), metadata)
    return outputs


def vector_column(vectors: "np.ndarray", kind: pa.DataType) -> pa.Array:
    """The rows of a float matrix as an Arrow column of `kind` (fixed-size float lists), copied
    once as float32, never through Python floats (32 bytes each, 8x the vectors' own size)."""
    flat = pa.array(vectors.astype("float32", copy=False).reshape(-1), pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, kind.list_size).cast(kind)


def with_vector_sources(chunks: pa.Table, vectors: pa.Table) -> pa.Table:
    """`chunks` with each image chunk's `vector_source` (pixels, alt_text, caption, ocr) in its row's
    metadata, where a search hit and `indx show` carry it."""
    if VECTOR_SOURCE_KEY not in vectors.column_names:
        return chunks
    sources = {cid: src for cid, src in zip(vectors.column("id").to_pylist(),
                                             vectors.column(VECTOR_SOURCE_KEY).to_pylist(), strict=True) if src}
    if not sources:
        return chunks
    metadata = [json.dumps({**json.loads(meta or "{}"), VECTOR_SOURCE_KEY: sources[cid]}, sort_keys=True, ensure_ascii=False)
                if cid in sources else meta
                for cid, meta in zip(chunks.column("id").to_pylist(), chunks.column("metadata").to_pylist(), strict=True)]
    index = chunks.schema.get_field_index("metadata")
    return chunks.set_column(index, chunks.schema.field("metadata"), pa.array(metadata, pa.string()))


def write_rows(
    source_ids: Sequence[str], storage: StorageResource, lancedb: LanceDBResource, versions: dict[str, list[str]]
) -> dict[str, StageOutput]:
    """Join each source's chunks and vectors, store them as Parquet, and upsert the batch into
    LanceDB in one commit (each source's vanished chunks deleted in the same commit)."""
    batch: dict[str, pa.Table] = {}
    for sid in source_ids:
        chunks = storage.read(CHUNK_MAP, sid)
        vectors = storage.read(CHUNK_EMBEDDINGS, sid)
        schema = chunk_rows(vector_dimension(vectors.schema), space_of(vectors.schema))
        # each chunk's vector by its id, taken in Arrow: a vector as a Python list costs 32 bytes a float
        at = pc.index_in(chunks.column("id"), value_set=vectors.column("id").combine_chunks())
        column = vectors.column("vector").take(at).cast(schema.field("vector").type)
        chunks = with_vector_sources(chunks, vectors)
        batch[sid] = chunks.append_column(schema.field("vector"), column).cast(schema)
        storage.write(CHUNKS_TABLE, sid, batch[sid])
    result = lancedb.upsert_sources(batch)
    lancedb.ensure_indexes()
    batch_metadata = {f"lancedb_batch_{k}": v for k, v in result.items() if k != "version"}
    return {
        sid: StageOutput(
            combine_digests(versions[sid]),
            {"rows": rows.num_rows, "lancedb_table_version": result["version"], "batch_sources": len(batch),
             **batch_metadata},
        )
        for sid, rows in batch.items()
    }
