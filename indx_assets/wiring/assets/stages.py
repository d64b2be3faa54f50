"""The work of each asset for one source, independent of Dagster's bookkeeping.

Each stage reads its upstream's stored Parquet, does its one job, writes its own Parquet and
returns the data version (a hash of what it wrote) and the metadata a person wants to see.
"""

import base64
import io
import itertools
import json
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc
from upath import UPath

if TYPE_CHECKING:
    import numpy as np

from indx_assets.pipeline.chain import Chain
from indx_assets.pipeline.chain_runner import (ChunkMap, MappedChunk, cuts_page_by_page, maps_content, reads_content,
                                               run_chain, stream_page)
from indx_assets.pipeline.chunker_port import BBox, PageOutput
from indx_assets.pipeline.document import DocumentChunk
from indx_assets.pipeline.embedder import piece_vectors
from indx_assets.pipeline.embedders.pictures import VECTOR_SOURCE_KEY, PictureOcr, page_titles, picture_input
from indx_assets.pipeline.embedders.registry import LoadedEmbedder
from indx_assets.pipeline.fidelity import UNSTRUCTURED_KEY, DocumentFidelity, PageFidelity, measure_page, page_furniture
from indx_assets.pipeline.fidelity import summary as fidelity_summary
from indx_assets.pipeline.freed_memory import return_freed_memory
from indx_assets.pipeline.identity import document_id
from indx_assets.pipeline.media import detect_media_type
from indx_assets.pipeline.read_and_chunk import ChunkPlacer, Encoded
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig, ReadFailed, read_document_file
from indx_assets.pipeline.readers.ooxml_guard import OLE_MAGIC
from indx_assets.pipeline.readers.pdf import PREVIEW_DPI, PREVIEW_MAX_PAGES, PdfParse
from indx_assets.pipeline.readers.sheets import (
    CSV, PAGE_CHARS, TSV, XLSX, Sheet, SheetSpool, SheetStream, Workbook, iter_sheets, stream_sheets,
)
from indx_assets.pipeline.schema import (
    CHUNK_ROWS,
    CHUNKS,
    LONG_TEXT,
    PAGES,
    RowDigest,
    chunk_batch,
    chunk_rows,
    chunks_from_table,
    combine_digests,
    digest,
    document_metadata,
    embeddings_schema,
    long_texts,
    page_batch,
    pages_table,
    read_from_pages,
    space_of,
    vector_dimension,
    fidelity_schema,
)
from indx_assets.pipeline.scratch import scratch_in
from indx_assets.pipeline.whitespace import blank
from indx_assets.wiring.resources.lancedb import LanceDBResource
from indx_assets.wiring.resources.source_index import readable_name
from indx_assets.wiring.resources.storage import Spool, StorageResource

#: The media types read and cut in steps (`read_pages`, `cut_chunks`): spreadsheets, whose long sheets are many pages.
SHEET_TYPES = frozenset({XLSX, CSV, TSV})

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


def _source(source_id: str, storage: StorageResource, chain: Chain | None = None,
            maps: ExitStack | None = None) -> tuple[bytes, str]:
    """The source's bytes and media type. The bytes are in the row's `content`, or, when that is
    null (written since the bytes moved beside the row), in the blob beside it, read only for
    a `chain` that reads them (`reads_content`: a large text file's bytes are not held beside
    its page text while it is cut); a refused source has none. With `maps` (the map lives until
    it closes), a chain that takes the bytes as a map of the file (`maps_content`) gets a map of
    the blob when it is a local file: its pages are let go as the chunker walks them."""
    row = storage.read(SOURCE_DOCUMENTS, source_id).to_pylist()[0]
    content, media_type = row["content"], row["media_type"]
    if content is None:
        wanted = not row.get("refused") and (chain is None or reads_content(chain, media_type))
        if wanted and maps is not None and chain is not None and maps_content(chain, media_type):
            mapped = maps.enter_context(storage.map_blob(SOURCE_DOCUMENTS, source_id))
            if mapped is not None:
                return mapped, media_type  # type: ignore[return-value] # bytes-like, read-only
        content = storage.read_blob(SOURCE_DOCUMENTS, source_id) if wanted else b""
    return content, media_type


def read_pages(source_id: str, storage: StorageResource, config: ReaderConfig) -> tuple[StageOutput, object]:
    """Read the stored source's pages and store them; returns the stage's output and the
    reader's parsed form of the document (`DocumentRead.parsed`, None when there is none), for
    `cut_chunks` of this document only. A reader's temporary files go under the data directory
    (`scratch.scratch_in`)."""
    with scratch_in(storage.scratch_dir()):
        return _read_pages(source_id, storage, config)


def _read_pages(source_id: str, storage: StorageResource, config: ReaderConfig) -> tuple[StageOutput, object]:
    row = storage.read(SOURCE_DOCUMENTS, source_id).to_pylist()[0]
    media_type = row["media_type"]
    if not row.get("refused") and row["content"] is None and media_type in SHEET_TYPES:
        stream = stream_sheets(storage.read_blob(SOURCE_DOCUMENTS, source_id), media_type)
        if isinstance(stream, SheetStream):
            return _read_in_steps(source_id, storage, stream)
        return _stored_read(source_id, storage, stream)
    if row.get("refused"):
        read = DocumentRead.failure(media_type, row["refused"], row["reason"] or row["refused"])
    elif row["content"] is not None:  # written before the bytes moved beside the row
        read = read_document_file(io.BytesIO(row.pop("content")), media_type, config)
    else:  # read from the file: a text is decoded in steps, never held beside its bytes
        with storage.open_blob(SOURCE_DOCUMENTS, source_id) as file:
            read = read_document_file(file, media_type, config)
    return _stored_read(source_id, storage, read)


def _read_metadata(read: DocumentRead, pages: int, by_status: Counter[str], readers: set[str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"status": read.status, "pages": pages, "pages_by_status": dict(by_status),
                                "readers": sorted(readers)}
    if read.reason:
        metadata["reason"] = read.reason
    return metadata


def _stored_read(source_id: str, storage: StorageResource, read: DocumentRead) -> tuple[StageOutput, object]:
    """Store a document's pages read whole (`read_pages`)."""
    metadata = _read_metadata(read, len(read.pages), Counter(p.status for p in read.pages), {p.reader for p in read.pages})
    parsed = read.parsed
    long = long_texts(read)  # stored beside the row: in it, Arrow and Parquet would copy them twice over
    files = {page: storage.write_text(PAGE_OUTPUTS, source_id, text) for page, text in long.items()}
    table = pages_table(source_id, read, files)
    del read
    version = digest(table, long)
    del long
    storage.write(PAGE_OUTPUTS, source_id, table, beside=files.values())
    return StageOutput(version, metadata), parsed


#: How many pages of a document read in steps are stored in one batch, at most: fewer when
#: they hold a long sheet's page of text (`readers.sheets.PAGE_CHARS`) between them.
PAGES_PER_BATCH = 16


class _Beside(Mapping[int, str]):
    """Page number -> text, of the texts stored beside a source's page rows, read when asked for."""

    def __init__(self, storage: StorageResource, source_id: str, files: dict[int, str]) -> None:
        self._storage, self._source_id, self._files = storage, source_id, files

    def __getitem__(self, page: int) -> str:
        return self._storage.read_text(PAGE_OUTPUTS, self._source_id, self._files[page])

    def __iter__(self) -> Iterator[int]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def _groups(pages: Iterable[PageOutput], count: int, characters: int) -> Iterator[list[PageOutput]]:
    """`pages` in lists of `count` pages or `characters` of text, whichever comes first (the last, what is left)."""
    group: list[PageOutput] = []
    size = 0
    for page in pages:
        group.append(page)
        size += len(page.text)
        if len(group) == count or size >= characters:
            yield group
            group, size = [], 0
    if group:
        yield group


def _read_in_steps(source_id: str, storage: StorageResource, stream: SheetStream) -> tuple[StageOutput, object]:
    """Store the pages of a document read in steps (`SheetStream`) as they are read,
    `PAGES_PER_BATCH` at a time, never all at once: spooled first (the document's status, in
    the stored schema's metadata, is known once the last page is read), then stored and hashed
    row by row, to the data version `pages_table` and `digest` give the whole read."""
    by_status: Counter[str] = Counter()
    readers: set[str] = set()
    files: dict[int, str] = {}
    with storage.spool(PAGES) as spool:
        try:
            for pages in _groups(stream.pages(), PAGES_PER_BATCH, PAGE_CHARS):
                by_status.update(p.status for p in pages)
                readers.update(p.reader for p in pages)
                files.update({p.page: storage.write_text(PAGE_OUTPUTS, source_id, p.text) for p in pages if len(p.text) > LONG_TEXT})
                spool.write(page_batch(source_id, pages, files))
        except ReadFailed as failed:  # found unreadable part way: stored as its reader read whole would
            stream.spool.close()
            return _stored_read(source_id, storage, failed.read)
        read = stream.read()
        schema = PAGES.with_metadata(document_metadata(read, files))
        version = RowDigest(schema.metadata[b"indx.document"], _Beside(storage, source_id, files))
        store_in_steps(storage, PAGE_OUTPUTS, source_id, schema, spool.batches(PAGES_PER_BATCH), version, spool.dictionary,
                       beside=files.values())
    return StageOutput(version.hexdigest(), _read_metadata(read, sum(by_status.values()), by_status, readers)), read.parsed


def stored_pages(source_id: str, storage: StorageResource) -> DocumentRead:
    """The stored page outputs of a source, long texts read from beside their rows."""
    return read_from_pages(storage.read(PAGE_OUTPUTS, source_id),
                           lambda name: storage.read_text(PAGE_OUTPUTS, source_id, name))


def encode_stored(source_id: str, storage: StorageResource, chain: Chain, parsed: object = None) -> tuple[bytes, Encoded]:
    """Re-run the chain on a stored source and its stored page outputs (never re-reads the
    source itself); returns the source's bytes with the result (none when the chain does not
    read them, `_source`). `parsed` is the reader's parsed form of the source when it was read
    just now (`read_pages`), handed to the chain."""
    content, media_type = _source(source_id, storage, chain)
    read = stored_pages(source_id, storage)
    chunk_map = run_chain(chain, content, media_type, read.pages, parsed) if read.pages else ChunkMap((), ())
    return content, Encoded(source_id, read, chunk_map, chain)


#: Documents up to this many pages get a picture of their first page's cut in the UI, drawn at
#: the resolution the PDF reader renders their first page at while reading it (`PdfParse.preview`).
PICTURE_MAX_PAGES = PREVIEW_MAX_PAGES
PICTURE_DPI = PREVIEW_DPI


def first_page_picture(content: bytes, read: DocumentRead, boxes: Sequence[tuple[BBox, str]],
                       parsed: object = None) -> dg.MetadataValue | None:
    """The first page with its chunks' `boxes` drawn and numbered, as Markdown the UI renders;
    None for pages whose chunks have no boxes (nothing to see). A PDF's page is the reader's
    preview in `parsed` (its `PdfParse`) when at hand, else rendered here."""
    from indx_assets.pipeline.chunk_picture import render_chunk_picture

    if not boxes:
        return None
    width, height = read.metadata.get("slide_width"), read.metadata.get("slide_height")
    aspect = width / height if isinstance(width, int) and isinstance(height, int) and height else 1 / 2**0.5
    preview = parsed.preview if isinstance(parsed, PdfParse) else None
    png = render_chunk_picture(content, read.media_type, 1, boxes, dpi=PICTURE_DPI, aspect=aspect, page_image=preview)
    if png is None:
        return None
    return dg.MetadataValue.md(f"![chunks of page 1](data:image/png;base64,{base64.b64encode(png).decode()})")


#: How many of a page's chunks `_PageRows` holds before it spools them.
HELD_CHUNKS = 256
#: The fewest rows `_Cut` spools at once: a row group of the stored chunk map, into which short
#: pages' rows gather (not a row group a page); more cost memory (1,024: 7 MiB more for 8 MiB of prose).
SPOOL_ROWS = 256


class _PageRows:
    """One page's chunks as they are placed: up to `HELD_CHUNKS` held, the rest spooled (so a
    long page's chunks are never all in memory), read back to be measured and counted, then
    handed on as rows. `clear` takes them back (`chain_runner.stream_page`'s `retract`)."""

    def __init__(self, storage: StorageResource, document_id: str) -> None:
        self._storage, self._document_id = storage, document_id
        self._held: list[DocumentChunk] = []
        self._spool: Spool | None = None
        self.furniture: set[str] = set()  # the lines the chunks name as left out (`page_furniture`)

    def __bool__(self) -> bool:
        return bool(self._held) or self._spool is not None

    def add(self, chunk: DocumentChunk) -> None:
        self._held.append(chunk)
        self.furniture |= page_furniture((chunk,))
        if len(self._held) == HELD_CHUNKS:
            if self._spool is None:
                self._spool = Spool(CHUNKS, self._storage.scratch_dir())
            self._spool.write(chunk_batch(self._held, self._document_id))
            self._held.clear()

    def chunks(self) -> Iterator[DocumentChunk]:
        """The page's chunks in order (those spooled read back without their images)."""
        if self._spool is not None:
            for batch in self._spool.batches(HELD_CHUNKS):
                yield from chunks_from_table(pa.Table.from_batches([batch]))
        yield from self._held

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The page's rows of the chunk map."""
        if self._spool is not None:
            yield from self._spool.batches()
        if self._held:
            yield chunk_batch(self._held, self._document_id)

    def clear(self) -> None:
        self.close()
        self._held.clear()
        self.furniture.clear()

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None


@dataclass
class _Cut:
    """A document's chunk map as it is made, a page at a time: each page's chunks placed
    (`ChunkPlacer`), measured against the page and counted, then spooled; and what the cut
    found besides, for its metadata."""

    source_id: str
    storage: StorageResource
    spool: Spool
    chunks: int = 0
    by_chunker: Counter[str] = field(default_factory=Counter)
    by_type: Counter[str] = field(default_factory=Counter)
    unclaimed: list[int] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    unstructured: dict[str, str] = field(default_factory=dict)
    fidelity: list[PageFidelity] = field(default_factory=list)
    boxes: list[tuple[BBox, str]] = field(default_factory=list)  # page 1's, for its picture
    pending: list[pa.RecordBatch] = field(default_factory=list)  # rows not yet spooled (`SPOOL_ROWS`)

    def page(self, page: PageOutput, placer: ChunkPlacer, chunks: Callable[[Callable[[], None]], Iterable[MappedChunk]]) -> None:
        """Cut one page: `chunks(retract)` gives its mapped chunks, and calls `retract` to take
        back those it gave so far (`chain_runner.stream_page`)."""
        rows = _PageRows(self.storage, document_id(self.source_id))

        def retract() -> None:
            placer.take_back()
            rows.clear()

        try:
            for mapped in chunks(retract):
                rows.add(placer.place(mapped))
            if not rows:
                self.unclaimed.append(page.page)
            if rows or not blank(page.text):
                reads = itertools.count()

                def read_chunks() -> Iterator[DocumentChunk]:  # counted as the measure first reads them, all
                    return self._counted(page.page, rows.chunks()) if next(reads) == 0 else rows.chunks()

                self.fidelity.append(measure_page(page.page, page.text, read_chunks, rows.furniture,
                                                 origin=placer.origin(page.page)))
            for batch in rows.batches():
                self.pending.append(batch)
                if sum(b.num_rows for b in self.pending) >= SPOOL_ROWS:
                    self.flush()
        finally:
            rows.close()

    def flush(self) -> None:
        """Spool the rows not yet spooled, as one row group of the stored chunk map."""
        if self.pending:
            self.spool.write(pa.concat_batches(self.pending))
            self.pending.clear()

    def _counted(self, page: int, chunks: Iterable[DocumentChunk]) -> Iterator[DocumentChunk]:
        """`chunks`, page `page`'s, each counted as it passes."""
        reasons: list[str] = []
        for number, chunk in enumerate(chunks, start=1):
            self.chunks += 1
            self.by_chunker[chunk.chunker] += 1
            self.by_type[chunk.chunk_type] += 1
            reason = chunk.metadata.get(UNSTRUCTURED_KEY)
            if reason and reason not in reasons:
                reasons.append(reason)
            if page == 1 and chunk.bbox is not None:
                self.boxes.append((chunk.bbox, str(number)))
            yield chunk
        if reasons:  # a chunker that kept text its parser gave up on as plain text: why, page by page
            self.unstructured[str(page)] = "; ".join(reasons)

    def metadata(self, chain: Chain, picture: dg.MetadataValue | None) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "chunks": self.chunks,
            "chunks_by_chunker": dict(self.by_chunker),
            "chunks_by_type": dict(self.by_type),
            "pages_without_chunks": self.unclaimed,
            "chain": chain.fingerprint,
            "fidelity": self.summary(),
        }
        if not chain.links:
            metadata["warning"] = "no chunker is installed (entry-point group indx.chunkers is empty): nothing was chunked"
        if self.unstructured:
            metadata["unstructured_pages"] = self.unstructured
        if self.failed:
            metadata["failed_chunkers"] = self.failed
        if picture is not None:
            metadata["chunk_picture"] = picture
        return metadata

    def summary(self) -> dict[str, Any]:
        return fidelity_summary(DocumentFidelity(self.source_id, tuple(self.fidelity)))

    def store(self) -> RowDigest:
        """Store the spooled chunk map with its fidelity record in the schema's metadata (known
        once the last chunk is measured, so the rows are spooled first, never held); returns its
        data version, of its rows alone (the chunk map's schema records no document)."""
        self.flush()
        version = RowDigest()
        store_in_steps(self.storage, CHUNK_MAP, self.source_id, fidelity_schema(CHUNKS, self.summary()),
                       self.spool.batches(), version, self.spool.dictionary)
        return version


def cut_chunks(source_id: str, storage: StorageResource, chain: Chain, parsed: object = None) -> StageOutput:
    """Cut the stored source's stored pages with `chain` and store the chunk map (with the
    reader's parsed form of the source, `parsed`, when it was read just now). Each page's
    chunks are measured and spooled as the page is done (`_Cut`), never the whole chunk map
    held; a document the chain cuts page by page (`cuts_page_by_page`: a text, a sheet) is cut
    a page at a time, its chunks streamed from the chunker (`_cut_in_steps`). A chunker's
    temporary files go under the data directory (`scratch.scratch_in`)."""
    with scratch_in(storage.scratch_dir()):
        return _cut_chunks(source_id, storage, chain, parsed)


def _cut_chunks(source_id: str, storage: StorageResource, chain: Chain, parsed: object) -> StageOutput:
    media_type = storage.read(SOURCE_DOCUMENTS, source_id).column("media_type")[0].as_py()
    if cuts_page_by_page(chain, media_type):
        with ExitStack() as maps:
            return _cut_in_steps(source_id, storage, chain, *_source(source_id, storage, chain, maps), parsed)
    content, encoded = encode_stored(source_id, storage, chain, parsed)
    read, failed = encoded.read, list(encoded.chunk_map.failed_chunkers)
    by_page: dict[int, list[MappedChunk]] = {}
    for mapped in encoded.chunk_map.chunks:
        by_page.setdefault(mapped.page, []).append(mapped)
    del encoded  # each page's chunks are let go once spooled
    placer = ChunkPlacer(source_id, read)
    with storage.spool(CHUNKS) as spool:
        cut = _Cut(source_id, storage, spool, failed=failed)
        picture = None
        for page in read.pages:
            cut.page(page, placer, lambda retract, number=page.page: by_page.pop(number, ()))
            if page.page == 1 and len(read.pages) <= PICTURE_MAX_PAGES:
                picture = first_page_picture(content, read, cut.boxes, parsed)
            content = b""  # the chain has run: nothing after page 1's picture reads the source's bytes
        version = cut.store()
    return StageOutput(version.hexdigest(), cut.metadata(chain, picture))


def _page_models(content: bytes, media_type: str, parsed: object) -> Iterator[Sheet] | None:
    """A spreadsheet's sheet parts in page order: from the read just now (`SheetSpool`), else read
    again one at a time (None for another type, or a file that no longer opens)."""
    if isinstance(parsed, SheetSpool):
        return iter(parsed)
    if media_type not in SHEET_TYPES:
        return None
    try:
        return iter_sheets(content, media_type)
    except Exception:  # the chunker declines what it cannot load, as when cutting it whole
        return iter(())


def _cut_in_steps(source_id: str, storage: StorageResource, chain: Chain, content: bytes, media_type: str,
                  parsed: object) -> StageOutput:
    """`cut_chunks` of a document the chain cuts page by page: its stored pages read in steps,
    each page cut by the chain alone (with its own part of the reader's parsed form), its
    chunks streamed (`chain_runner.stream_page`) and placed where the whole document's
    `Document` puts them (`ChunkPlacer`'s `offset`); the chunk map is the one
    cutting it whole gives. (One difference: a chunker that raises on a page declines that
    page, not the whole document.)"""
    schema = storage.schema(PAGE_OUTPUTS, source_id)
    models = _page_models(content, media_type, parsed)
    model: Sheet | None = None
    offset = 0
    picture = None
    total = storage.rows(PAGE_OUTPUTS, source_id)
    with storage.spool(CHUNKS) as spool, closing(storage.read_batches(PAGE_OUTPUTS, source_id, step=PAGES_PER_BATCH)) as batches:
        cut = _Cut(source_id, storage, spool)
        for batch in batches:
            read = read_from_pages(pa.Table.from_batches([batch]).replace_schema_metadata(schema.metadata),
                                   lambda name: storage.read_text(PAGE_OUTPUTS, source_id, name))
            for page in read.pages:
                while models is not None and (model is None or model.page < page.page):
                    model = next(models, None)
                    if model is None:
                        break
                own = Workbook((model,)) if model is not None and model.page == page.page else (
                    Workbook(()) if models is not None else parsed)
                step = replace(read, pages=(page,))
                cut.page(page, ChunkPlacer(source_id, step, offset),
                         lambda retract, page=page, own=own: stream_page(chain, content, media_type, page, own,
                                                                         retract=retract, failed=cut.failed))
                offset += len(page.text) + 1
                if page.page == 1 and total <= PICTURE_MAX_PAGES:
                    picture = first_page_picture(content, step, cut.boxes, own)
        # the last page's text let go before the chunk map is stored: a long page's text, held
        # while its chunks were written, lifted the peak past the cut's
        batch = read = page = step = own = None  # type: ignore[assignment]
        version = cut.store()
    if isinstance(parsed, SheetSpool):
        parsed.close()
    return StageOutput(version.hexdigest(), cut.metadata(chain, picture))


def store_in_steps(storage: StorageResource, asset: str, source_id: str, schema: pa.Schema,
                   batches: Iterable[pa.RecordBatch], version: RowDigest, dictionary: list[str] | None = None,
                   beside: Collection[str] = ()) -> None:
    """Write `batches` as the stored output of (asset, source), each hashed into `version` as it
    is written (in the order written: the version `digest` gives the whole table)."""
    def hashed() -> Iterator[pa.RecordBatch]:
        for batch in batches:
            version.update(batch)
            yield batch

    storage.write_batches(asset, source_id, schema, hashed(), dictionary, beside)


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
#: The schema metadata of a long document's stored vectors written in its chunk map's order
#: (`write_rows` then reads them in step with its chunks); vectors written before hold each
#: window's pictures after its texts.
IN_CHUNK_ORDER = {b"indx.order": b"chunk_map"}


@dataclass
class _Pass:
    """What one embedding pass embeds: texts (a sentence's with the chunk id it belongs to) and
    pictures, each with its source and chunk id."""

    texts: list[str] = field(default_factory=list)
    owners: list[tuple[str, str]] = field(default_factory=list)
    holders: list[str | None] = field(default_factory=list)
    pictures: list[tuple[str, str, bytes]] = field(default_factory=list)
    #: each text's and each picture's place in its source's chunk map
    places: list[int] = field(default_factory=list)
    picture_places: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts) + len(self.pictures)

    def in_chunk_order(self, loaded: LoadedEmbedder) -> tuple[list[str], "np.ndarray"]:
        """The chunk id of each vector and the vectors, in chunk map order (one source's pass)."""
        import numpy as np

        owners, vectors = self.embed(loaded)
        order = np.argsort(np.array(self.places + self.picture_places, dtype=np.int64), kind="stable")
        return [owners[i][1] for i in order], vectors[order]

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


def _page_runs(sid: str, storage: StorageResource, account: _Account, pixels: bool, window: int | None = None) -> Iterator[_Pass]:
    """The source's chunks to embed, one `_Pass` per page (in chunk order), read from its chunk
    map in steps; a page of more than `window` chunks is cut into runs of about `window`, each
    cut made before a chunk that is not a sentence (a sentence's chunk, whose vector is its
    sentences' centroid, is the last chunk before it that is not one: `sentence_holders`), so a
    one-page document of any length is embedded a window at a time too."""
    titles: dict[int | None, str] | None = None  # found when a picture needs them: few documents have any
    run, page, place = _Pass(), None, -1
    with closing(storage.read_batches(CHUNK_MAP, sid, _EMBED_COLUMNS)) as batches:
        for batch in batches:
            for row in batch.to_pylist():
                place += 1
                sentence = row["chunk_type"] == "sentence"
                if len(run) and (row["page"] != page or window is not None and len(run) >= window and not sentence):
                    yield run
                    run = _Pass()
                page = row["page"]
                if row["text"]:
                    run.texts.append(row["text"])
                    run.owners.append((sid, row["id"]))
                    run.places.append(place)
                    run.holders.append(json.loads(row["metadata"] or "{}").get("chunk_id") if sentence else None)
                    continue
                if titles is None:
                    with closing(storage.read_batches(CHUNK_MAP, sid, _EMBED_COLUMNS)) as again:
                        titles = page_titles(r for b in again for r in b.to_pylist())
                described = picture_input(row, titles, pixels, account.ocr)
                if described is None:
                    account.skipped += 1
                    continue
                account.sources[row["id"]] = described.source
                if described.image:
                    run.pictures.append((sid, row["id"], described.image))
                    run.picture_places.append(place)
                else:
                    run.texts.append(described.text)
                    run.owners.append((sid, row["id"]))
                    run.places.append(place)
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
        whole.places += part.places
        whole.picture_places += part.picture_places
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
        for part in _windows(_page_runs(sid, storage, accounts[sid], pixels, window), window):
            ids, vectors = part.in_chunk_order(loaded)
            yield _vector_batch(ids, vectors, accounts[sid], schema)

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
            storage.write_batches(CHUNK_EMBEDDINGS, sid, schema.with_metadata({**schema.metadata, **IN_CHUNK_ORDER}),
                                  stream(sid))
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


def _in_chunk_order(schema: pa.Schema) -> bool:
    return all((schema.metadata or {}).get(k) == v for k, v in IN_CHUNK_ORDER.items())


def _closed_batches(storage: StorageResource, asset: str, source_id: str, columns: list[str]) -> Iterator[pa.RecordBatch]:
    """`storage.read_batches`, its file closed however the reading ends."""
    with closing(storage.read_batches(asset, source_id, columns)) as batches:
        yield from batches


def _vectors_along(chunks: Iterable[pa.RecordBatch], vectors: Iterator[pa.RecordBatch],
                   schema: pa.Schema) -> Iterator[tuple[pa.RecordBatch, pa.Table]]:
    """Each batch of chunk map rows with the stored vectors of its chunks, the vectors stored in
    chunk map order (`IN_CHUNK_ORDER`; a chunk with no vector has no row): a batch's vectors are
    the ones that follow, up to the first of a chunk in a later batch, so only one batch's are held."""
    pending: pa.Table | None = None  # vectors read but not yet joined
    for batch in chunks:
        wanted = batch.column("id")
        taken: list[pa.Table] = []
        while True:
            if pending is None or pending.num_rows == 0:
                following = next(vectors, None)
                if following is None:
                    break
                pending = pa.Table.from_batches([following])
            ours = pc.is_in(pending.column("id"), value_set=wanted)
            mine = pc.sum(ours).as_py() or 0
            if mine == 0:
                break
            # in chunk order: this batch's vectors are the head of what is pending
            taken.append(pending.slice(0, mine))
            pending = pending.slice(mine)
            if pending.num_rows:
                break
        yield batch, pa.concat_tables(taken) if taken else schema.empty_table()


def write_rows(
    source_ids: Sequence[str], storage: StorageResource, lancedb: LanceDBResource, versions: dict[str, list[str]],
    window: int = EMBED_WINDOW,
) -> dict[str, StageOutput]:
    """Join each source's chunks and vectors, store them as Parquet, and upsert the batch into
    LanceDB in one commit (each source's vanished chunks deleted in the same commit). A document
    of more than `window` chunks is joined, stored and handed to LanceDB in steps read
    from its chunk map, its vectors read in step with it (`_vectors_along`), never all its
    rows at once."""
    rows: dict[str, int] = {}
    schema = CHUNK_ROWS
    for sid in source_ids:
        stored_as = storage.schema(CHUNK_EMBEDDINGS, sid)
        schema = chunk_rows(vector_dimension(stored_as), space_of(stored_as))
        if storage.rows(CHUNK_MAP, sid) <= window:
            joined = _joined(storage.read(CHUNK_MAP, sid), storage.read(CHUNK_EMBEDDINGS, sid), schema)
            rows[sid] = joined.num_rows
            storage.write(CHUNKS_TABLE, sid, joined)
            continue
        rows[sid] = 0

        def steps(sid: str = sid, stored_as: pa.Schema = stored_as) -> Iterator[pa.RecordBatch]:
            in_order = _in_chunk_order(stored_as)
            with closing(storage.read_batches(CHUNK_MAP, sid)) as chunks, \
                    closing(storage.read_batches(CHUNK_EMBEDDINGS, sid)) as vectors:
                whole = None if in_order else storage.read(CHUNK_EMBEDDINGS, sid)  # written before: held whole
                pairs = _vectors_along(chunks, vectors, stored_as) if whole is None else ((c, whole) for c in chunks)
                for part, own in pairs:
                    for batch in _joined(part, own, schema).to_batches():
                        rows[sid] += batch.num_rows
                        yield batch

        # no dictionary for the texts and pictures of a long document: not repeated, never worth one
        storage.write_batches(CHUNKS_TABLE, sid, schema, steps(), [n for n in schema.names if n not in ("text", "image")])
    stored = (batch for sid in source_ids for batch in _closed_batches(storage, CHUNKS_TABLE, sid, schema.names))
    result = lancedb.upsert_stream(list(source_ids), schema, pa.RecordBatchReader.from_batches(schema, stored))
    return_freed_memory()  # what the write freed, before the indexes are built beside it
    lancedb.ensure_indexes()
    batch_metadata = {f"lancedb_batch_{k}": v for k, v in result.items() if k != "version"}
    return {
        sid: StageOutput(
            combine_digests(versions[sid]),
            {"rows": count, "lancedb_table_version": result["version"], "batch_sources": len(rows), **batch_metadata},
        )
        for sid, count in rows.items()
    }
