"""Searching the chunk table: the query embedded with the same model as the chunks."""

import json
from typing import Any

from indx_assets.embedder import MiniLMEmbedder
from indx_assets.resources.lancedb import LanceDBResource, SearchMode
from indx_assets.settings import Settings


def search_chunks(settings: Settings, query: str, *, k: int = 5, mode: SearchMode = "hybrid") -> list[dict[str, Any]]:
    """Hits carry the chunk's identity fields, page, bbox, text and score; metadata as JSON."""
    lancedb = LanceDBResource(uri=settings.lancedb_uri)
    if lancedb.existing_table() is None:
        return []
    vector = None if mode == "fts" else MiniLMEmbedder().embed_texts([query])[0]
    hits = lancedb.search(query, k=k, mode=mode, vector=vector)
    for hit in hits:
        hit["metadata"] = json.loads(hit["metadata"]) if hit.get("metadata") else {}
    return hits
