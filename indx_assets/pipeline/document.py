"""The document model (DESIGN §3): `Document` and its `DocumentChunk`s, with derived identity.

Ids are never set by hand: they are computed from `source_id` (and the chunk's locator), so
the same input always yields the same records.
"""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from indx_assets.pipeline.chunker_port import BBOX_REASONS, BBox, BBoxReason, validate_bbox
from indx_assets.pipeline.identity import chunk_id, document_id


class Metadata(Mapping[str, Any]):
    """Extensible, immutable metadata that refuses keys naming a field of its owner.

    A colliding key (say `source_id`) would be ambiguous once the record is persisted as
    flat columns, so it is rejected at construction rather than silently shadowed.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None, *, reserved: frozenset[str] = frozenset()):
        data = dict(data or {})
        clashes = sorted(set(data) & reserved)
        if clashes:
            raise ValueError(f"metadata keys collide with field names: {', '.join(clashes)}")
        if not all(isinstance(k, str) for k in data):
            raise TypeError("metadata keys must be strings")
        self._data: Mapping[str, Any] = MappingProxyType(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Metadata({dict(self._data)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data)))


def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls))


@dataclass(frozen=True, slots=True)
class DocumentChunk:
    """One retrievable unit of a document, as indexed and as returned by search."""

    source_id: str
    locator: str
    content: str
    chunk_type: str = "content"
    page: int | None = None
    bbox: BBox | None = None
    bbox_reason: BBoxReason | None = None
    chunker: str = ""
    start_offset: int | None = None
    end_offset: int | None = None
    image: bytes | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    embedding: tuple[float, ...] | None = None
    id: str = field(init=False)
    parent_ref: str = field(init=False)

    def __post_init__(self) -> None:
        if not self.source_id:
            raise ValueError("source_id must be non-empty")
        if not self.locator:
            raise ValueError("locator must be non-empty: it is half of the chunk's identity")
        if self.bbox is not None:
            if self.bbox_reason is not None:
                raise ValueError("a chunk carries a bbox or a bbox_reason, not both")
            object.__setattr__(self, "bbox", validate_bbox(self.bbox))
        elif self.bbox_reason is not None and self.bbox_reason not in BBOX_REASONS:
            raise ValueError(f"bbox_reason must be one of {sorted(BBOX_REASONS)}, got {self.bbox_reason!r}")
        object.__setattr__(self, "metadata", Metadata(self.metadata, reserved=_CHUNK_FIELDS))
        object.__setattr__(self, "id", chunk_id(self.source_id, self.locator))
        object.__setattr__(self, "parent_ref", document_id(self.source_id))


_CHUNK_FIELDS = _field_names(DocumentChunk)


@dataclass(frozen=True, slots=True)
class Document:
    """Everything ingested from one source: its full text, its chunks, its metadata."""

    source_id: str
    content: str
    chunks: tuple[DocumentChunk, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str = field(init=False)

    def __post_init__(self) -> None:
        if not self.source_id:
            raise ValueError("source_id must be non-empty")
        chunks = tuple(self.chunks)
        strangers = [c.locator for c in chunks if c.source_id != self.source_id]
        if strangers:
            raise ValueError(f"chunks of another source in document {self.source_id!r}: {strangers[:3]}")
        object.__setattr__(self, "chunks", chunks)
        object.__setattr__(self, "metadata", Metadata(self.metadata, reserved=_DOCUMENT_FIELDS))
        object.__setattr__(self, "id", document_id(self.source_id))


_DOCUMENT_FIELDS = _field_names(Document)


def chunk_to_json(chunk: DocumentChunk) -> dict[str, Any]:
    """A chunk as plain JSON values (image bytes base64-encoded)."""
    import base64

    return {
        "id": chunk.id,
        "source_id": chunk.source_id,
        "locator": chunk.locator,
        "start_offset": chunk.start_offset,
        "end_offset": chunk.end_offset,
        "parent_ref": chunk.parent_ref,
        "chunk_type": chunk.chunk_type,
        "content": chunk.content,
        "metadata": dict(chunk.metadata),
        "embedding": list(chunk.embedding) if chunk.embedding is not None else None,
        "page": chunk.page,
        "bbox": list(chunk.bbox) if chunk.bbox is not None else None,
        "bbox_reason": chunk.bbox_reason,
        "chunker": chunk.chunker,
        "image": base64.b64encode(chunk.image).decode("ascii") if chunk.image is not None else None,
    }


def document_to_json(document: Document) -> dict[str, Any]:
    """A document as plain JSON values, its chunks included."""
    return {
        "id": document.id,
        "source_id": document.source_id,
        "content": document.content,
        "metadata": dict(document.metadata),
        "chunks": [chunk_to_json(c) for c in document.chunks],
    }
