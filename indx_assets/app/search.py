"""Searching the chunk table: the query embedded with the same model as the chunks.

Hits are chunks, returned as `Hit`s: what `indx search` prints, `indx search --json` and
`POST /v1/search` give as JSON (`Hit.to_json`; the chunk's text is `content` there, as in
`indx chunk --json`, though the table's column is `text`) and the Python API returns.

Where a chunker also cut `sentence` pieces (the `sentences` chain option), a short query may
match a sentence better than any whole chunk: the hit is then the chunk that holds that
sentence, with the sentence as its `sentence`, and each chunk is a hit once.

Each hit carries one score on its mode's scale (`SCORE_SCALES`) and an `excerpt`: the
sentences of its chunk that match the query best (`excerpts`). A hit can be expanded to its
section: the chunks that share its `section_id` (the chunk tree the structure-aware chunkers
store in each chunk's metadata), in reading order.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from indx_interfaces import Embedder, Vector

from indx_assets.app.excerpts import excerpt
from indx_assets.pipeline.embedders.registry import EMBEDDER_ENV, SpaceMismatch, load_embedder
from indx_assets.pipeline.schema import SearchMode
from indx_assets.wiring.settings import Settings

if TYPE_CHECKING:  # Dagster's import takes seconds: a search refused at once should not wait for it
    from indx_assets.wiring.resources.lancedb import LanceDBResource

SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)
ScoreScale = Literal["rrf", "cosine", "bm25"]
#: The scale of each mode's score (higher is better in all three): reciprocal-rank fusion of the
#: vector and full-text ranks (1/(60 + rank) summed over both lists: at most 2/61 = 0.0328, for
#: a chunk first in both); cosine similarity of the query's and the chunk's vectors (-1 to 1);
#: BM25 of the query's words in the chunk (0 up, unbounded).
SCORE_SCALES: dict[SearchMode, ScoreScale] = {"hybrid": "rrf", "vector": "cosine", "fts": "bm25"}
#: The most hits one search returns.
MAX_K = 1000


class InvalidSearch(ValueError):
    """A search that cannot be run as asked (a blank query, a bad `k` or mode)."""


def check_search(query: str, k: int, mode: str, *, image: bool = False) -> None:
    """Refuse a search that cannot run, before the model is loaded for it (`InvalidSearch`).
    A search by picture (`image`) needs no words."""
    if not image and not query.strip():
        raise InvalidSearch("the query is empty: say what to look for, e.g. indx search \"fresnel lens\"")
    if not 1 <= k <= MAX_K:
        raise InvalidSearch(f"k must be between 1 and {MAX_K}, got {k}")
    if mode not in SEARCH_MODES:
        raise InvalidSearch(f"mode must be one of {', '.join(SEARCH_MODES)}, got {mode!r}")


#: What each chunk of an expanded section carries (the table's columns; `text` is `content` in a `SectionChunk`).
SECTION_FIELDS = ("id", "locator", "chunk_type", "page", "text")


@dataclass(frozen=True)
class Sentence:
    """The sentence piece through which a hit was found."""

    id: str
    locator: str
    content: str


@dataclass(frozen=True)
class SectionChunk:
    """One chunk of an expanded hit's section."""

    id: str
    locator: str
    chunk_type: str
    page: int | None
    content: str


@dataclass(frozen=True)
class Hit:
    """One chunk a search found, with its identity, place, text and score."""

    id: str
    document_id: str
    source_id: str
    locator: str
    chunk_type: str
    parent_ref: str | None
    page: int | None
    bbox: tuple[float, ...] | None
    """Normalised (x0, y0, x1, y1) on its page, where the chunker knew it."""
    bbox_reason: str | None
    chunker: str
    content: str
    """The chunk's text (the table's `text` column)."""
    start_offset: int | None
    end_offset: int | None
    metadata: dict[str, Any]
    score: float
    """Higher is better, on the scale `score_scale` names (`SCORE_SCALES`)."""
    score_scale: ScoreScale
    excerpt: str
    """The sentences of `content` that match the query best (`excerpts.excerpt`)."""
    sentence: Sentence | None = None
    """The sentence piece that matched, when the hit was found through one."""
    section: tuple[SectionChunk, ...] | None = None
    """With `expand`: the chunks of the hit's section, in reading order, the hit among them."""

    def to_json(self) -> dict[str, Any]:
        """The hit as JSON values (as `indx search --json` and `POST /v1/search` give it)."""
        out = asdict(self)
        out["bbox"] = list(self.bbox) if self.bbox is not None else None
        out["section"] = [asdict(c) for c in self.section] if self.section is not None else None
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Hit:
        """The hit `to_json` gave (from a server's answer)."""
        sentence, section, bbox = data.get("sentence"), data.get("section"), data.get("bbox")
        return cls(**{**data, "sentence": Sentence(**sentence) if sentence else None,
                      "section": tuple(SectionChunk(**c) for c in section) if section is not None else None,
                      "bbox": tuple(bbox) if bbox is not None else None})


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
        from indx_assets.wiring.resources.lancedb import sql_string

        clauses = []
        if self.source_prefix:
            clauses.append(f"starts_with(source_id, {sql_string(self.source_prefix)})")
        if self.chunk_type:
            clauses.append(f"chunk_type = {sql_string(self.chunk_type)}")
        if self.page is not None:
            clauses.append(f"page = {int(self.page)}")
        return " AND ".join(clauses) or None


@dataclass(frozen=True)
class QueryEmbedder:
    """The embedder the chunks were embedded with, for queries: text in (calling it), one unit
    vector out; a picture's bytes in (`image`) when the embedder declares images. Its `space`
    must be the table's (`LanceDBResource.check_query_space`)."""

    embedder: Embedder
    space: str
    #: Runs an embedding (the server runs them all on one model thread).
    run: Callable[[Callable[[], Vector]], Vector] = field(default=lambda embed: embed())

    def __call__(self, query: str) -> Vector:
        return self.run(lambda: self.embedder.embed_texts([query])[0])

    def image(self, picture: bytes) -> Vector:
        if "image" not in self.embedder.modalities:
            raise SpaceMismatch(f"the embedder in use ({self.space}) embeds no pictures: search by picture needs one "
                                f"that does ({EMBEDDER_ENV}=clip:<model directory>)")
        return self.run(lambda: self.embedder.embed_images([picture])[0])


def query_embedder(spec: str | None = None) -> QueryEmbedder:
    """The embedder `spec` (default: `INDX_EMBEDDER`) names, for queries (its model loads on the
    first query: seconds, once a process)."""
    loaded = load_embedder(spec)
    return QueryEmbedder(loaded.embedder, loaded.identity.space)


def search_chunks(settings: Settings, query: str, *, k: int = 5, mode: SearchMode = "hybrid",
                  expand: bool = False, filters: SearchFilters = SearchFilters(),
                  embed: QueryEmbedder | None = None, image: bytes | None = None) -> list[Hit]:
    """Search the data directory's index in-process (see `search_index`), embedding the query
    with `embed` (default: the embedder `INDX_EMBEDDER` names, loaded for this search). The
    search is checked (`InvalidSearch`) and the data directory must exist (`NoDataDirectory`; a
    search creates none) before the model is loaded."""
    from indx_assets.wiring.resources.lancedb import LanceDBResource

    check_search(query, k, mode, image=image is not None)
    settings.require_home()
    return search_index(LanceDBResource(uri=settings.lancedb_uri), embed or query_embedder(), query,
                        k=k, mode=mode, expand=expand, filters=filters, image=image)


def search_index(lancedb: LanceDBResource, embed: QueryEmbedder, query: str, *, k: int = 5,
                 mode: SearchMode = "hybrid", expand: bool = False,
                 filters: SearchFilters = SearchFilters(), image: bytes | None = None) -> list[Hit]:
    """The `k` best chunks as `Hit`s (none before the first ingest). With `expand`, each hit
    also carries its `section` (see above). With `image` (a picture's bytes), the search is by
    that picture's vector (vector mode). A table built with another embedder refuses the query
    (`SpaceMismatch`)."""
    check_search(query, k, mode, image=image is not None)
    if lancedb.existing_table() is None:
        return []
    if mode != "fts" or image is not None:
        lancedb.check_query_space(embed.space)
    vector: Vector | None = None
    if image is not None:
        vector, mode = embed.image(image), "vector"
    elif mode != "fts":
        vector = embed(query)
    rows = search_table(lancedb, query, vector, k=k, mode=mode, where=filters.where())
    sections = expand_sections(lancedb, rows) if expand else None
    return [_hit(row, query, SCORE_SCALES[mode], sections[i] if sections is not None else None)
            for i, row in enumerate(rows)]


def _hit(row: dict[str, Any], query: str, scale: ScoreScale, section: list[dict[str, Any]] | None) -> Hit:
    matched = row["sentence"]
    content = row["text"] or ""
    return Hit(
        id=row["id"], document_id=row["document_id"], source_id=row["source_id"], locator=row["locator"],
        chunk_type=row["chunk_type"], parent_ref=row["parent_ref"], page=row["page"],
        bbox=tuple(row["bbox"]) if row["bbox"] is not None else None, bbox_reason=row["bbox_reason"],
        chunker=row["chunker"], content=content, start_offset=row["start_offset"], end_offset=row["end_offset"],
        metadata=_metadata(row), score=row["score"], score_scale=scale,
        excerpt=excerpt(content, query, matched["text"] if matched else None),
        sentence=Sentence(matched["id"], matched["locator"], matched["text"]) if matched else None,
        section=tuple(SectionChunk(c["id"], c["locator"], c["chunk_type"], c["page"], c["text"] or "")
                      for c in section) if section is not None else None,
    )


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


def expand_sections(lancedb: LanceDBResource, hits: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each hit's section: the chunks of its document with its `section_id`, the hit among
    them, ordered by page and offset (`SECTION_FIELDS` of each). A chunk outside any section (a
    page a chunker cut without structure) is its own section."""
    sections: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in lancedb.source_rows(sorted({h["source_id"] for h in hits})):
        if row["chunk_type"] == "sentence":  # a section is its chunks; their sentences are in them
            continue
        section_id = _metadata(row).get("section_id")
        if section_id is not None:
            sections[(row["source_id"], section_id)].append(row)
    out = []
    for hit in hits:
        section_id = _metadata(hit).get("section_id")
        rows = sections.get((hit["source_id"], section_id), []) if section_id is not None else []
        rows = sorted(rows or [hit], key=lambda r: (r["page"] or 0, r["start_offset"] or 0, r["locator"]))
        out.append([{field: row[field] for field in SECTION_FIELDS} for row in rows])
    return out
