"""What the adapters hand a framework: a chunk's or a hit's identity as flat metadata, and the
one rule for a missing extra.

Both frameworks keep a record's text apart from a flat metadata dict, so the chunk's own
metadata (section title, fidelity, …) and its identity (id, source id, locator, page, box, …)
share one dict. They cannot collide: chunk metadata may not use a chunk field's name
(`document.Metadata`).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from indx_assets.app.api import Hit
from indx_assets.pipeline.document import Document, DocumentChunk, chunk_to_json

#: A chunk's identity and place, as `chunk_to_json` names them (its text and vector go elsewhere).
CHUNK_KEYS = ("id", "source_id", "locator", "start_offset", "end_offset", "parent_ref", "chunk_type", "page",
              "bbox", "bbox_reason", "chunker", "image")
#: A hit's, besides: how well it matched (on which scale), its best-matching sentences, and the
#: sentence piece or section that came with it.
HIT_KEYS = (*CHUNK_KEYS[:-1], "score", "score_scale", "excerpt", "sentence", "section")
#: Document statuses under which a file's chunks are all it has (an empty file has none).
READ_STATUSES = ("ok", "empty")


def chunk_metadata(chunk: DocumentChunk) -> dict[str, Any]:
    """A chunk's metadata and identity; an image chunk's bytes as base64 under `image`, absent for text."""
    record = chunk_to_json(chunk)
    identity = {key: record[key] for key in CHUNK_KEYS if key != "image" or record[key] is not None}
    return {**chunk.metadata, **identity}


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """A hit's chunk metadata and identity, with its `score`, `score_scale` and `excerpt` (and
    `sentence` / `section` when it has them), as `indx search --json` names them."""
    record = hit.to_json()
    identity = {key: record[key] for key in HIT_KEYS if key not in ("sentence", "section") or record[key]}
    return {**hit.metadata, **identity}


def readable_chunks(document: Document) -> tuple[DocumentChunk, ...]:
    """The document's chunks; `ValueError` naming the status and reason when the file could
    not be read (unsupported, encrypted, too large, …): a loader must not return nothing
    without saying why."""
    status = document.metadata.get("status")
    if status not in READ_STATUSES:
        reason = document.metadata.get("reason")
        raise ValueError(f"{document.source_id}: {status}" + (f": {reason}" if reason else ""))
    return document.chunks


@contextmanager
def needs_extra(extra: str, distribution: str, module: str) -> Iterator[None]:
    """Imports of an optional framework: when `module` is not installed, an `ImportError` that
    says which extra installs it."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != module:
            raise
        raise ImportError(f"this adapter needs {distribution}, which is not installed: "
                          f"pip install 'indx-assets[{extra}]'") from exc
