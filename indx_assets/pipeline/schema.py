"""The Arrow schemas of what the pipeline stores, and conversions to and from them.

These are the documented, public shapes analysts query with pyarrow, DuckDB or Polars:
`PAGES` (internal: what the readers made of each page), `CHUNKS` (the chunk map: one row per
chunk, identity first) and `CHUNK_ROWS` (the chunk table: the chunk map plus its vector, as
stored in LanceDB, the chunk id declared its primary key).
"""

import base64
import codecs
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

import pyarrow as pa

from indx_assets.pipeline.chunker_port import Line, PageOutput
from indx_assets.pipeline.document import Document, DocumentChunk
from indx_assets.pipeline.readers import DocumentRead

VECTOR_DIM = 384
#: How the chunk table is searched: its vectors and full text fused, its vectors, its full text.
SearchMode = Literal["hybrid", "vector", "fts"]
#: Lance reads this field metadata as the table's primary key; without it concurrent upserts
#: of one id silently duplicate rows.
PRIMARY_KEY = {"lance-schema:unenforced-primary-key": "true"}

_BBOX = pa.list_(pa.float64(), 4)
_LINE = pa.struct([("text", pa.string()), ("bbox", _BBOX), ("metadata", pa.string())])

PAGES = pa.schema(
    [
        ("source_id", pa.string()),
        ("page", pa.int32()),
        ("text", pa.string()),
        ("status", pa.string()),
        ("reader", pa.string()),
        ("reason", pa.string()),
        ("lines", pa.list_(_LINE)),
        ("metadata", pa.string()),
    ]
)

CHUNKS = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        ("document_id", pa.string()),
        ("source_id", pa.string()),
        ("locator", pa.string()),
        ("chunk_type", pa.string()),
        ("parent_ref", pa.string()),
        ("page", pa.int32()),
        ("bbox", _BBOX),
        ("bbox_reason", pa.string()),
        ("chunker", pa.string()),
        ("text", pa.string()),
        ("image", pa.binary()),
        ("start_offset", pa.int64()),
        ("end_offset", pa.int64()),
        ("metadata", pa.string()),
    ]
)

#: The schema-metadata key naming the vector space the vectors are in (`EmbedderIdentity.space`):
#: on the stored embeddings and on the LanceDB table.
SPACE_KEY = "indx.embedder"


def chunk_rows(dimension: int = VECTOR_DIM, space: str | None = None) -> pa.Schema:
    """The chunk table's schema for vectors of `dimension` floats in `space`."""
    return pa.schema(
        [pa.field("id", pa.string(), nullable=False, metadata=PRIMARY_KEY), *list(CHUNKS)[1:],
         pa.field("vector", pa.list_(pa.float32(), dimension), nullable=True)],
        metadata={SPACE_KEY: space} if space else None,
    )


def embeddings_schema(dimension: int, space: str) -> pa.Schema:
    """The stored embeddings of one source: a vector per chunk id and, for an image chunk, what
    the vector was made from (`embedders.pictures`); the space recorded."""
    return pa.schema([("id", pa.string()), ("vector", pa.list_(pa.float32(), dimension)), ("vector_source", pa.string())],
                     metadata={SPACE_KEY: space})


def space_of(schema: pa.Schema) -> str | None:
    """The vector space a schema records (None for one written before spaces were recorded)."""
    value = (schema.metadata or {}).get(SPACE_KEY.encode())
    return value.decode() if value else None


def vector_dimension(schema: pa.Schema) -> int:
    """The length of the vectors a schema holds."""
    return schema.field("vector").type.list_size


#: The chunk table of the default embedder (all-MiniLM-L6-v2, 384 floats).
CHUNK_ROWS = chunk_rows()


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


#: A page's text longer than this many characters is stored beside its `PAGES` row, not in it
#: (`pages_table`'s `text_files`): Arrow and Parquet would hold two to three copies of it
#: at once while the row is built and written.
LONG_TEXT = 1 << 20
#: The schema metadata naming the files that hold long pages' texts: JSON {page: file name}.
TEXT_FILES_KEY = b"indx.text_files"
#: The page outputs' schema metadata key of the document's record (`document_metadata`).
DOCUMENT_KEY = b"indx.document"


def long_texts(read: DocumentRead) -> dict[int, str]:
    """The texts of `read`'s pages longer than `LONG_TEXT`, by page number."""
    return {p.page: p.text for p in read.pages if len(p.text) > LONG_TEXT}


def pages_table(source_id: str, read: DocumentRead, text_files: Mapping[int, str] | None = None) -> pa.Table:
    """The page outputs of one document; the document's own status rides in schema metadata.

    `text_files`: page number -> the name of the file its text is stored in beside the row
    (see `LONG_TEXT`); such a page's row has null text, and the names ride in the schema
    metadata under `TEXT_FILES_KEY`."""
    schema = PAGES.with_metadata(document_metadata(read, text_files))
    return pa.Table.from_batches([page_batch(source_id, read.pages, text_files)], schema=schema)


def document_metadata(read: DocumentRead, text_files: Mapping[int, str] | None = None) -> dict[str, str]:
    """The schema metadata of a document's page outputs (`pages_table`): its record (media type,
    status, reason, metadata) and the names of the files holding long pages' texts."""
    document = {"media_type": read.media_type, "status": read.status, "reason": read.reason, "metadata": read.metadata}
    metadata = {DOCUMENT_KEY.decode(): _json(document)}
    if text_files:
        metadata[TEXT_FILES_KEY.decode()] = _json({str(page): name for page, name in text_files.items()})
    return metadata


def page_batch(source_id: str, pages: Iterable[PageOutput], text_files: Mapping[int, str] | None = None) -> pa.RecordBatch:
    """The `PAGES` rows of `pages` (a page in `text_files` with null text, see `pages_table`)."""
    text_files = text_files or {}
    rows = [
        {
            "source_id": source_id,
            "page": p.page,
            "text": None if p.page in text_files else p.text,
            "status": p.status,
            "reader": p.reader,
            "reason": p.reason,
            "lines": None
            if p.lines is None
            else [{"text": l.text, "bbox": list(l.bbox), "metadata": _json(dict(l.metadata))} for l in p.lines],
            "metadata": _json(dict(p.metadata)),
        }
        for p in pages
    ]
    return pa.RecordBatch.from_pylist(rows, schema=PAGES)


def text_files(schema: pa.Schema) -> dict[int, str]:
    """Page number -> the file holding its text beside the row, of a `pages_table`'s schema."""
    named = (schema.metadata or {}).get(TEXT_FILES_KEY)
    return {int(page): name for page, name in json.loads(named).items()} if named else {}


def read_from_pages(table: pa.Table, read_text: Callable[[str], str] | None = None) -> DocumentRead:
    """The inverse of `pages_table`; `read_text` reads a text stored beside the row by its
    file's name (required when the table names any, see `text_files`)."""
    document = json.loads(table.schema.metadata[DOCUMENT_KEY])
    beside = text_files(table.schema)
    if beside and read_text is None:
        raise ValueError("these page outputs keep long texts beside their rows: read_from_pages needs read_text")
    pages = tuple(
        PageOutput(
            page=row["page"],
            text=read_text(beside[row["page"]]) if row["page"] in beside and read_text else row["text"],
            status=row["status"],
            reader=row["reader"],
            reason=row["reason"],
            lines=None
            if row["lines"] is None
            else tuple(Line(l["text"], tuple(l["bbox"]), json.loads(l["metadata"])) for l in row["lines"]),
            metadata=json.loads(row["metadata"]),
        )
        for row in table.to_pylist()
    )
    return DocumentRead(document["media_type"], pages, document["status"], document["reason"], document["metadata"])


def chunks_table(document: Document) -> pa.Table:
    """One row per chunk of `document`, in chunk order."""
    return pa.Table.from_batches(list(chunk_batches(document)), schema=CHUNKS)


def chunk_batches(document: Document, step: int = 1024) -> Iterator[pa.RecordBatch]:
    """The rows of `chunks_table`, `step` chunks a batch: a long document's rows are never all
    Python dicts at once (a table chunk's metadata carries its HTML)."""
    for at in range(0, len(document.chunks), step):
        yield chunk_batch(document.chunks[at:at + step], document.id)


def chunk_batch(chunks: Iterable[DocumentChunk], document_id: str) -> pa.RecordBatch:
    """The rows of `chunks`, chunks of the document `document_id`, as one batch of `CHUNKS`."""
    rows = [
        {
            "id": c.id,
            "document_id": document_id,
            "source_id": c.source_id,
            "locator": c.locator,
            "chunk_type": c.chunk_type,
            "parent_ref": c.parent_ref,
            "page": c.page,
            "bbox": list(c.bbox) if c.bbox is not None else None,
            "bbox_reason": c.bbox_reason,
            "chunker": c.chunker,
            "text": c.content or None,
            "image": c.image,
            "start_offset": c.start_offset,
            "end_offset": c.end_offset,
            "metadata": _json(dict(c.metadata)),
        }
        for c in chunks
    ]
    return pa.RecordBatch.from_pylist(rows, schema=CHUNKS)


#: The chunk map's schema metadata key for its document's word fidelity (`fidelity.summary`).
FIDELITY_KEY = b"indx.fidelity"


def with_fidelity(table: pa.Table, record: dict[str, Any]) -> pa.Table:
    """`table` (a chunk map) with its document's fidelity record in its schema metadata, where a
    reader of the file's footer finds it without reading a row (`digest` leaves it out: the
    record follows from the rows)."""
    return table.replace_schema_metadata(fidelity_schema(table.schema, record).metadata)


def fidelity_schema(schema: pa.Schema, record: dict[str, Any]) -> pa.Schema:
    """`schema` with the fidelity record in its metadata (see `with_fidelity`)."""
    return schema.with_metadata({**(schema.metadata or {}), FIDELITY_KEY: _json(record)})


def chunks_from_table(table: pa.Table) -> tuple[DocumentChunk, ...]:
    """The chunks of one source's chunk map, in chunk order: the inverse of `chunks_table`
    for what identifies and holds a chunk (image bytes and vectors are not read back)."""
    columns = ["source_id", "locator", "chunk_type", "page", "bbox", "bbox_reason", "chunker", "text",
               "start_offset", "end_offset", "metadata"]
    return tuple(
        DocumentChunk(source_id=row["source_id"], locator=row["locator"], content=row["text"] or "",
                      chunk_type=row["chunk_type"], page=row["page"],
                      bbox=tuple(row["bbox"]) if row["bbox"] is not None else None,  # type: ignore[arg-type]
                      bbox_reason=row["bbox_reason"], chunker=row["chunker"], start_offset=row["start_offset"],
                      end_offset=row["end_offset"], metadata=json.loads(row["metadata"] or "{}"))
        for row in table.select(columns).to_pylist()
    )


#: Text values at least this long are hashed in pieces of this many bytes (see `digest`).
_PIECE = 1 << 20


class RowDigest:
    """The content hash `digest` computes, fed batch by batch: rows hashed as they are written
    (in the order they are written) give the same hash as the whole table at once, so a stage
    that writes its output in steps never holds it whole to version it.

    `document`: the document record of the table's schema metadata (`indx.document`), hashed
    first. `beside`: as for `digest`.
    """

    def __init__(self, document: bytes = b"", beside: Mapping[int, str] | None = None) -> None:
        self._h = hashlib.sha256()
        self._h.update(document)
        self._beside = beside
        self._names: list[str] | None = None
        self._keys: list[bytes] = []

    def update(self, rows: pa.Table | pa.RecordBatch) -> None:
        """Hash `rows`, after the rows hashed so far."""
        h, beside = self._h, self._beside
        if self._names is None:
            self._names = sorted(rows.schema.names)  # the order `_json`'s sort_keys gives a row's keys
            self._keys = [_json(name).encode() + b": " for name in self._names]
        names, keys = self._names, self._keys
        batches = rows.to_batches(max_chunksize=256) if isinstance(rows, pa.Table) else [
            rows.slice(at, 256) for at in range(0, rows.num_rows, 256)]
        for batch in batches:
            columns = [batch.column(name) for name in names]
            small = [None if _long_text(c) else c.to_pylist() for c in columns]
            pages = batch.column("page").to_pylist() if beside else []
            for i in range(batch.num_rows):
                kept = beside.get(pages[i]) if beside else None
                h.update(b"{")
                for j, (name, key, column, values) in enumerate(zip(names, keys, columns, small, strict=True)):
                    h.update(b", " + key if j else key)
                    if kept is not None and name == "text":
                        _hash_str(h, kept)
                    elif values is None:
                        _hash_text(h, column, i)
                    else:
                        value = values[i]
                        h.update(_json(base64.b64encode(value).decode() if isinstance(value, bytes) else value).encode())
                h.update(b"}\n")

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def digest(table: pa.Table, beside: Mapping[int, str] | None = None) -> str:
    """A content hash of a table's rows (and the document record in its schema metadata).

    Hashing values rather than file bytes keeps it independent of Parquet writer details. The
    bytes hashed are each row as sorted-key JSON (bytes as base64) and a newline; a long text
    value is escaped and hashed in pieces straight from its Arrow buffer, so a page of 256 MiB
    costs no copy of itself (JSON escapes character by character: the pieces hash as the whole).
    `beside`: page number -> text of the pages whose text is stored beside the row
    (`pages_table`'s `text_files`), hashed as the row's `text`, so where a text is kept does
    not move the hash. `RowDigest` computes it batch by batch.
    """
    rows = RowDigest((table.schema.metadata or {}).get(DOCUMENT_KEY, b""), beside)
    rows.update(table)
    return rows.hexdigest()


def _hash_str(h: "hashlib._Hash", text: str) -> None:
    """`h.update(_json(text).encode())`, in pieces of `_PIECE` characters (no copy of the text)."""
    h.update(b'"')
    for at in range(0, len(text), _PIECE):
        h.update(_json(text[at:at + _PIECE])[1:-1].encode())
    h.update(b'"')


def _long_text(column: pa.Array) -> bool:
    return (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)) and column.nbytes > _PIECE


def _hash_text(h: "hashlib._Hash", column: pa.Array, i: int) -> None:
    """`h.update(_json(text).encode())` for the text at row `i` of a string column, in pieces of
    its UTF-8 bytes read in place (`column[i]` would copy the whole value into a scalar)."""
    if column.is_null()[i].as_py():
        h.update(b"null")
        return
    offsets = memoryview(column.buffers()[1]).cast("q" if pa.types.is_large_string(column.type) else "i")
    start, end = offsets[column.offset + i], offsets[column.offset + i + 1]
    data = memoryview(column.buffers()[2])[start:end]
    decoder = codecs.getincrementaldecoder("utf-8")()
    h.update(b'"')
    for at in range(0, len(data), _PIECE):
        piece = decoder.decode(data[at:at + _PIECE], final=at + _PIECE >= len(data))
        h.update(_json(piece)[1:-1].encode())
    h.update(b'"')


def combine_digests(parts: Iterable[str]) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
