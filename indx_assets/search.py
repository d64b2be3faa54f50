"""Searching the chunk table: the query embedded with the same model as the chunks.

A hit can be expanded to its section: the chunks that share its `section_id` (the chunk tree
the structure-aware chunkers store in each chunk's metadata), in reading order.
"""

import json
from collections import defaultdict
from typing import Any

from indx_assets.embedder import MiniLMEmbedder
from indx_assets.resources.lancedb import LanceDBResource, SearchMode
from indx_assets.settings import Settings


#: What each chunk of an expanded section carries.
SECTION_FIELDS = ("id", "locator", "chunk_type", "page", "text")


def search_chunks(settings: Settings, query: str, *, k: int = 5, mode: SearchMode = "hybrid",
                  expand: bool = False) -> list[dict[str, Any]]:
    """Hits carry the chunk's identity fields, page, bbox, text and score; metadata as JSON.
    With `expand`, each hit also carries `section`: the chunks of its section (see above)."""
    lancedb = LanceDBResource(uri=settings.lancedb_uri)
    if lancedb.existing_table() is None:
        return []
    vector = None if mode == "fts" else MiniLMEmbedder().embed_texts([query])[0]
    hits = lancedb.search(query, k=k, mode=mode, vector=vector)
    for hit in hits:
        hit["metadata"] = _metadata(hit)
    if expand:
        expand_sections(lancedb, hits)
    return hits


def _metadata(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row["metadata"]) if row.get("metadata") else {}


def expand_sections(lancedb: LanceDBResource, hits: list[dict[str, Any]]) -> None:
    """Give each hit its `section`: the chunks of its document with its `section_id`, the hit
    among them, ordered by page and offset. A chunk outside any section (a page a chunker cut
    without structure) is its own section."""
    sections: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in lancedb.source_rows(sorted({h["source_id"] for h in hits})):
        section_id = _metadata(row).get("section_id")
        if section_id is not None:
            sections[(row["source_id"], section_id)].append(row)
    for hit in hits:
        section_id = hit["metadata"].get("section_id")
        rows = sections.get((hit["source_id"], section_id), []) if section_id is not None else []
        rows = sorted(rows or [hit], key=lambda r: (r["page"] or 0, r["start_offset"] or 0, r["locator"]))
        hit["section"] = [{field: row[field] for field in SECTION_FIELDS} for row in rows]
