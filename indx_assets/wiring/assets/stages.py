"""The work of each asset for one source, independent of Dagster's bookkeeping.

Each stage reads its upstream's stored Parquet, does its one job, writes its own Parquet and
returns the data version (a hash of what it wrote) and the metadata a person wants to see.
"""

import base64
import io
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
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
    CHUNK_ROWS,
    CHUNKS,
    RowDigest,
    chunk_batches,
    chunk_rows,
    combine_digests,
    digest,
    embeddings_schema,
    long_texts,
    pages_table,
    read_from_pages,
    space_of,
    vector_dimension,
    fidelity_schema,
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
    version = RowDigest()  # the chunk map's schema records no document: its rows alone are hashed
    store_in_steps(storage, CHUNK_MAP, source_id, fidelity_schema(CHUNKS, fidelity), chunk_batches(document), version,
                   _chunk_dictionary(document))
    metadata: dict[str, Any] = {
        "chunks": len(document.chunks),
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
    return StageOutput(version.hexdigest(), metadata)


def store_in_steps(storage: StorageResource, asset: str, source_id: str, schema: pa.Schema,
                   batches: Iterable[pa.RecordBatch], version: RowDigest, dictionary: list[str] | None = None) -> None:
    """Write `batches` as the stored output of (asset, source), each hashed into `version` as it
    is written (in the order written: the version `digest` gives the whole table)."""
    def hashed() -> Iterator[pa.RecordBatch]:
        for batch in batches:
            version.update(batch)
            yield batch

    storage.write_batches(asset, source_id, schema, hashed(), dictionary)


def _chunk_dictionary(document: Document) -> list[str]:
    """The chunk map's columns worth a Parquet dictionary (the rule of `storage._dictionary_columns`,
    decided before the first row is written: a text or image that may pass 1 MiB leaves its column out)."""
    limit = 1 << 20
    long_text = any(len(c.content) * 4 > limit for c in document.chunks)  # UTF-8 takes at most 4 bytes a character
    long_image = any(c.image is not None and len(c.image) > limit for c in document.chunks)
    return [name for name in CHUNKS.names if not (name == "text" and long_text or name == "image" and long_image)]


def _rows(table: pa.Table, step: int = 4096) -> Iterator[dict[str, Any]]:
    """The rows of `table` as dicts, `step` at a time: a long document's rows are never all
    Python objects at once (its chunks' metadata, a table's HTML among it, cost 3x as such)."""
    for batch in table.to_batches(max_chunksize=step):
        yield from batch.to_pylist()


#: About how many chunks are embedded in one pass (sorted by length within it) and stored in one
#: step: a document with more is embedded and stored a window at a time, cut between pages (a
#: sentence's chunk is on its page), so its texts and vectors are never all in memory at once;
#: smaller documents share a pass.
EMBED_WINDOW = 8192

_EMBED_COLUMNS = ["id", "text", "chunk_type", "page", "image", "metadata"]


@dataclass
class _Pass:
    """What one embedding pass embeds: texts (a sentence's with the chunk id it belongs to) and
    pictures, each with its source and chunk id."""

    texts: list[str] = field(default_factory=list)
    owners: list[tuple[str, str]] = field(default_factory=list)
    holders: list[str | None] = field(default_factory=list)
    pictures: list[tuple[str, str, bytes]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts) + len(self.pictures)

    def embed(self, loaded: LoadedEmbedder) -> tuple[list[tuple[str, str]], "np.ndarray"]:
        """The (source, chunk id) of each vector and the vectors: texts first, then pictures."""
        embedder = loaded.embedder
        position = {chunk_id: i for i, (_, chunk_id) in enumerate(self.owners)}
        vectors = piece_vectors(embedder.embed_texts, self.texts, [position.get(h) if h else None for h in self.holders])
        owners = list(self.owners)
        if self.pictures:
            import numpy as np

            vectors = np.concatenate([vectors, embedder.embed_images([p[2] for p in self.pictures])])
            owners += [(sid, chunk_id) for sid, chunk_id, _ in self.pictures]
        return owners, vectors


@dataclass
class _Account:
    """What embedding one source found besides its vectors, for its metadata and data version."""

    vectors: int = 0
    sources: dict[str, str] = field(default_factory=dict)  # image chunk id -> its vector source
    skipped: int = 0
    ocr: "PictureOcr | None" = None


def _page_runs(sid: str, storage: StorageResource, account: _Account, pixels: bool) -> Iterator[_Pass]:
    """The source's chunks to embed, one `_Pass` per page (in chunk order), read from its chunk map in steps."""
    titles: dict[int | None, str] | None = None  # found when a picture needs them: few documents have any
    run, page = _Pass(), None
    for batch in storage.read_batches(CHUNK_MAP, sid, _EMBED_COLUMNS):
        for row in batch.to_pylist():
            if row["page"] != page and len(run):
                yield run
                run = _Pass()
            page = row["page"]
            if row["text"]:
                run.texts.append(row["text"])
                run.owners.append((sid, row["id"]))
                link = json.loads(row["metadata"] or "{}").get("chunk_id") if row["chunk_type"] == "sentence" else None
                run.holders.append(link)
                continue
            if titles is None:
                titles = page_titles(r for b in storage.read_batches(CHUNK_MAP, sid, _EMBED_COLUMNS) for r in b.to_pylist())
            described = picture_input(row, titles, pixels, account.ocr)
            if described is None:
                account.skipped += 1
                continue
            account.sources[row["id"]] = described.source
            if described.image:
                run.pictures.append((sid, row["id"], described.image))
            else:
                run.texts.append(described.text)
                run.owners.append((sid, row["id"]))
                run.holders.append(None)
    if len(run):
        yield run


def _join(passes: Iterable[_Pass]) -> _Pass:
    whole = _Pass()
    for part in passes:
        whole.texts += part.texts
        whole.owners += part.owners
        whole.holders += part.holders
        whole.pictures += part.pictures
    return whole


def _windows(runs: Iterable[_Pass], window: int) -> Iterator[_Pass]:
    """`runs` (pages) joined into passes of at least `window` chunks (the last, what is left)."""
    held: list[_Pass] = []
    count = 0
    for run in runs:
        held.append(run)
        count += len(run)
        if count >= window:
            yield _join(held)
            held, count = [], 0
    if held:
        yield _join(held)


def _vector_batch(ids: list[str], vectors: "np.ndarray", account: _Account, schema: pa.Schema) -> pa.RecordBatch:
    account.vectors += len(ids)
    return pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.string()), vector_column(vectors, schema.field("vector").type),
         pa.array([account.sources.get(cid) for cid in ids], pa.string())], schema=schema)


def embed_chunks(
    source_ids: Sequence[str], storage: StorageResource, loaded: LoadedEmbedder, chunk_versions: dict[str, str],
    version: str, reader_config: ReaderConfig, window: int = EMBED_WINDOW,
) -> dict[str, StageOutput]:
    """Embed the chunks of several sources in batched passes of about `window` chunks (`EMBED_WINDOW`).

    A chunk cut into sentences gets the centroid of its sentences' vectors (`piece_vectors`).
    An image chunk gets a vector from its pixels or from the text describing it, recorded as
    its `vector_source` (`embedders.pictures`; OCR with `reader_config`'s settings); one nothing
    describes gets none.
    The data version is derived from the chunk map's version, `version` (the embedder's
    identity) and, for a document whose pictures reached OCR, what read them
    (`PictureOcr.fingerprint`): together they decide the vectors (hashing floats would make
    version noise of batch composition, which the windows decide).
    The stored vectors record their space (`EmbedderIdentity.space`), which the table takes on.
    """
    embedder = loaded.embedder
    pixels = "image" in embedder.modalities
    schema = embeddings_schema(embedder.dimension, loaded.identity.space)
    accounts = {sid: _Account(ocr=None if pixels else PictureOcr(reader_config)) for sid in source_ids}

    def stream(sid: str) -> Iterator[pa.RecordBatch]:  # a long document: a window embedded and stored at a time
        for part in _windows(_page_runs(sid, storage, accounts[sid], pixels), window):
            owners, vectors = part.embed(loaded)
            yield _vector_batch([cid for _, cid in owners], vectors, accounts[sid], schema)

    def store(shared: list[_Pass], sids: list[str]) -> None:  # small documents: one pass for them all
        owners, vectors = _join(shared).embed(loaded)
        rows_of: dict[str, list[int]] = {sid: [] for sid in sids}
        for i, (sid, _) in enumerate(owners):
            rows_of[sid].append(i)
        for sid in sids:
            ids = [owners[i][1] for i in rows_of[sid]]
            batch = _vector_batch(ids, vectors[rows_of[sid]], accounts[sid], schema)
            storage.write(CHUNK_EMBEDDINGS, sid, pa.Table.from_batches([batch], schema=schema))

    shared: list[_Pass] = []
    sids: list[str] = []
    for sid in source_ids:
        if storage.rows(CHUNK_MAP, sid) > window:
            storage.write_batches(CHUNK_EMBEDDINGS, sid, schema, stream(sid))
            continue
        shared += _page_runs(sid, storage, accounts[sid], pixels)
        sids.append(sid)
        if sum(map(len, shared)) >= window:
            store(shared, sids)
            shared, sids = [], []
    if sids:
        store(shared, sids)
    return {sid: StageOutput(combine_digests([chunk_versions[sid], version, *_ocr_version(accounts[sid])]),
                             _embed_metadata(accounts[sid], loaded)) for sid in source_ids}


def _ocr_version(account: _Account) -> list[str]:
    read_by = account.ocr.fingerprint() if account.ocr is not None else None
    return [read_by] if read_by is not None else []


def _embed_metadata(account: _Account, loaded: LoadedEmbedder) -> dict[str, Any]:
    metadata: dict[str, Any] = {"vectors": account.vectors, "model": loaded.embedder.model_version,
                                "embedder": loaded.identity.name}
    by_source = Counter(account.sources.values())
    if by_source:
        metadata["image_vectors_by_source"] = dict(sorted(by_source.items()))
    if account.skipped:
        metadata["unembedded_image_chunks"] = account.skipped
        metadata["unembedded_reason"] = ("nothing describes these pictures (no alt text, no caption or page title,"
                                         " no text OCR could read) and the embedder does not embed pixels")
        if account.ocr is not None and account.ocr.problem:
            metadata["unembedded_ocr"] = account.ocr.problem
    return metadata


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


def _joined(chunks: pa.Table | pa.RecordBatch, vectors: pa.Table, schema: pa.Schema) -> pa.Table:
    """`chunks` (chunk map rows) with each one's vector (and image chunks' vector source), as rows of `schema`."""
    chunks = pa.Table.from_batches([chunks]) if isinstance(chunks, pa.RecordBatch) else chunks
    # each chunk's vector by its id, taken in Arrow: a vector as a Python list costs 32 bytes a float
    at = pc.index_in(chunks.column("id"), value_set=vectors.column("id").combine_chunks())
    column = vectors.column("vector").take(at).cast(schema.field("vector").type)
    chunks = with_vector_sources(chunks, vectors)
    return chunks.append_column(schema.field("vector"), column).cast(schema)


def write_rows(
    source_ids: Sequence[str], storage: StorageResource, lancedb: LanceDBResource, versions: dict[str, list[str]],
    window: int = EMBED_WINDOW,
) -> dict[str, StageOutput]:
    """Join each source's chunks and vectors, store them as Parquet, and upsert the batch into
    LanceDB in one commit (each source's vanished chunks deleted in the same commit). A document
    of more than `window` chunks is joined, stored and handed to LanceDB in steps read
    from its chunk map (only its vectors are held whole), never all its rows at once."""
    rows: dict[str, int] = {}
    schema = CHUNK_ROWS
    for sid in source_ids:
        vectors = storage.read(CHUNK_EMBEDDINGS, sid)
        schema = chunk_rows(vector_dimension(vectors.schema), space_of(vectors.schema))
        if storage.rows(CHUNK_MAP, sid) <= window:
            joined = _joined(storage.read(CHUNK_MAP, sid), vectors, schema)
            rows[sid] = joined.num_rows
            storage.write(CHUNKS_TABLE, sid, joined)
            continue
        rows[sid] = 0

        def steps(sid: str = sid, vectors: pa.Table = vectors) -> Iterator[pa.RecordBatch]:
            for chunks in storage.read_batches(CHUNK_MAP, sid):
                for batch in _joined(chunks, vectors, schema).to_batches():
                    rows[sid] += batch.num_rows
                    yield batch

        # no dictionary for the texts and pictures of a long document: not repeated, never worth one
        storage.write_batches(CHUNKS_TABLE, sid, schema, steps(), [n for n in schema.names if n not in ("text", "image")])
        del vectors
    stored = (batch for sid in source_ids for batch in storage.read_batches(CHUNKS_TABLE, sid, schema.names))
    result = lancedb.upsert_stream(list(source_ids), schema, pa.RecordBatchReader.from_batches(schema, stored))
    lancedb.ensure_indexes()
    batch_metadata = {f"lancedb_batch_{k}": v for k, v in result.items() if k != "version"}
    return {
        sid: StageOutput(
            combine_digests(versions[sid]),
            {"rows": count, "lancedb_table_version": result["version"], "batch_sources": len(rows), **batch_metadata},
        )
        for sid, count in rows.items()
    }
