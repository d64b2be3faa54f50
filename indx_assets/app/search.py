"""Searching the chunk table: the query embedded with the same model as the chunks.

Hits are chunks. Where a chunker also cut `sentence` pieces (the `sentences` chain option), a
short query may match a sentence better than any whole chunk: the hit is then the chunk that
holds that sentence, with the sentence as its `sentence`, and each chunk is a hit once.

A hit can be expanded to its section: the chunks that share its `section_id` (the chunk tree
the structure-aware chunkers store in each chunk's metadata), in reading order.
"""

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from indx_assets.wiring.resources.lancedb import LanceDBResource, SearchMode, sql_string
from indx_assets.wiring.settings import Settings

#: Embeds a query: text in, one unit vector out.
QueryEmbedder = Callable[[str], Sequence[float]]


#: What each chunk of an expanded section carries.
SECTION_FIELDS = ("id", "locator", "chunk_type", "page", "text")


@dataclass(frozen=True)
class SearchFilters:
    """Which chunks a search may return; the one filter set of `indx search` and `POST /v1/search`."""

    source_prefix: str | None = None
    """Only sources whose id starts with this (`docs/` for one root)."""
    chunk_type: str | None = None
    """Only chunks of this type (`content`, `table`, `image`, `sentence`, …)."""
    page: int | None = None
    """Only chunks of this page."""

    def where(self) -> str | None:
        """The filter as LanceDB SQL, or None when it admits everything."""
        clauses = []
        if self.source_prefix:
            clauses.append(f"starts_with(source_id, {sql_string(self.source_prefix)})")
        if self.chunk_type:
            clauses.append(f"chunk_type = {sql_string(self.chunk_type)}")
        if self.page is not None:
            clauses.append(f"page = {int(self.page)}")
        return " AND ".join(clauses) or None


def minilm_query_embedder() -> QueryEmbedder:
    """The model the chunks were embedded with, for queries (loaded on the first query: seconds,
    once a process)."""
    from indx_assets.pipeline.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    return lambda query: embedder.embed_texts([query])[0]


def search_chunks(settings: Settings, query: str, *, k: int = 5, mode: SearchMode = "hybrid",
                  expand: bool = False, filters: SearchFilters = SearchFilters()) -> list[dict[str, Any]]:
    """Search the data directory's index in-process (see `search_index`)."""
    return search_index(LanceDBResource(uri=settings.lancedb_uri), minilm_query_embedder(), query,
                        k=k, mode=mode, expand=expand, filters=filters)


def search_index(lancedb: LanceDBResource, embed: QueryEmbedder, query: str, *, k: int = 5,
                 mode: SearchMode = "hybrid", expand: bool = False,
                 filters: SearchFilters = SearchFilters()) -> list[dict[str, Any]]:
    """Hits carry the chunk's identity fields, page, bbox, text and score; metadata as JSON.
    With `expand`, each hit also carries `section`: the chunks of its section (see above)."""
    if lancedb.existing_table() is None:
        return []
    vector = None if mode == "fts" else embed(query)
    hits = search_table(lancedb, query, vector, k=k, mode=mode, where=filters.where())
    for hit in hits:
        hit["metadata"] = _metadata(hit)
    if expand:
        expand_sections(lancedb, hits)
    return hits


def search_table(lancedb: LanceDBResource, query: str, vector: Any, *, k: int = 5,
                 mode: SearchMode = "hybrid", where: str | None = None) -> list[dict[str, Any]]:
    """The `k` best chunks, each once, at the rank of its best match: itself or one of its
    sentences (then carried as `sentence`; None when the chunk matched itself)."""
    limit = k
    while True:
        matches = lancedb.search(query, k=limit, mode=mode, vector=vector, where=where)
        hits = _chunks_of(lancedb, matches)
        if len(hits) >= k or len(matches) < limit:
            return hits[:k]
        limit *= 4  # sentences of the same chunks took the places: look further down


def _chunks_of(lancedb: LanceDBResource, matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`matches` with each sentence replaced by its chunk (the `chunk_id` of its metadata; see
    `indx_assets.pipeline.read_and_chunk.to_document`) and repeats dropped. A sentence whose chunk is not in the
    table stays a hit of its own."""
    links = {m["id"]: _metadata(m).get("chunk_id") for m in matches if m["chunk_type"] == "sentence"}
    holders = {row["id"]: row for row in lancedb.rows_by_id([link for link in links.values() if link])}
    hits: dict[str, dict[str, Any]] = {}
    for match in matches:
        hit, sentence = match, None
        holder = holders.get(links.get(match["id"]) or "")
        if holder is not None:
            sentence = {field: match[field] for field in ("id", "locator", "text")}
            hit = {**holder, "score": match["score"]}
        if hit["id"] not in hits:
            hits[hit["id"]] = {**hit, "sentence": sentence}
    return list(hits.values())


def _metadata(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row["metadata"]) if row.get("metadata") else {}


def expand_sections(lancedb: LanceDBResource, hits: list[dict[str, Any]]) -> None:
    """Give each hit its `section`: the chunks of its document with its `section_id`, the hit
    among them, ordered by page and offset. A chunk outside any section (a page a chunker cut
    without structure) is its own section."""
    sections: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in lancedb.source_rows(sorted({h["source_id"] for h in hits})):
        if row["chunk_type"] == "sentence":  # a section is its chunks; their sentences are in them
            continue
        section_id = _metadata(row).get("section_id")
        if section_id is not None:
            sections[(row["source_id"], section_id)].append(row)
    for hit in hits:
        section_id = hit["metadata"].get("section_id")
        rows = sections.get((hit["source_id"], section_id), []) if section_id is not None else []
        rows = sorted(rows or [hit], key=lambda r: (r["page"] or 0, r["start_offset"] or 0, r["locator"]))
        hit["section"] = [{field: row[field] for field in SECTION_FIELDS} for row in rows]
