"""Deterministic identity: UUID5 ids derived from `source_id` and a locator.

Same input, same ids: re-ingesting a source overwrites its records instead of duplicating
them, and moving a file while keeping its `source_id` keeps its identity.
"""

import functools
import uuid

#: The one namespace every indx-assets id is derived under. Never change it: every id in
#: every existing index depends on it. (uuid5(NAMESPACE_URL, "https://indx-assets/ids").)
NAMESPACE = uuid.UUID("40bdee49-5a89-5f9b-be7a-3a87d8b67ed1")


@functools.lru_cache(maxsize=1024)  # one string for all of a document's chunks, not one each
def document_id(source_id: str) -> str:
    """The id of the document ingested from `source_id` (also every chunk's `parent_ref`)."""
    return str(uuid.uuid5(NAMESPACE, source_id))


def chunk_id(source_id: str, locator: str) -> str:
    """The id of the chunk at `locator` within `source_id`."""
    return str(uuid.uuid5(NAMESPACE, f"{source_id}\x1f{locator}"))


def char_locator(start: int, end: int, *, page: int | None = None) -> str:
    """`char:{s}-{e}`, or `page:{n}:char:{s}-{e}` for a paged source."""
    base = f"char:{start}-{end}"
    return base if page is None else f"page:{page}:{base}"


def position_locator(page: int, index: int) -> str:
    """The chain runner's `page:{n}/chunk:{m}`, for pieces that are not slices of the text."""
    return f"page:{page}/chunk:{index}"


def typed_locator(chunk_type: str, locator: str) -> str:
    """A non-content chunk's type precedes its locator (`image:page:2/chunk:0`)."""
    return locator if chunk_type == "content" else f"{chunk_type}:{locator}"
