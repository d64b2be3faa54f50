"""LlamaIndex adapters (the `llamaindex` extra: llama-index-core): `IndxRetriever` and `IndxReader`.

    from indx_assets.integrations.llamaindex import IndxReader, IndxRetriever

    nodes = IndxRetriever(k=4).retrieve("when may deep-draught ships cross the bar")
    documents = IndxReader().load_data("guide.pdf")

A retrieved `NodeWithScore` holds a `TextNode` whose `id_` is the chunk's id, with the
document's id as its source relationship; a read `Document` is one chunk, `id_` its id. Their
`metadata` is the chunk's own metadata with its identity (`id`, `source_id`, `locator`, `page`,
`bbox`, `chunk_type`, …). Of the identity only `source_id` and `page` reach the text an LLM or
an embedding model sees; ids, boxes and offsets stay for the program.
"""

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indx_assets.app.api import PathArg, chunk, search
from indx_assets.integrations.records import HIT_KEYS, chunk_metadata, hit_metadata, needs_extra, readable_chunks

with needs_extra("llamaindex", "llama-index-core", "llama_index"):
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.readers.base import BaseReader
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import Document, NodeRelationship, NodeWithScore, QueryBundle, RelatedNodeInfo, TextNode

if TYPE_CHECKING:
    from indx_assets.wiring.resources.lancedb import SearchMode

__all__ = ["IndxReader", "IndxRetriever"]

#: Identity keys kept out of the text an LLM or embedding model is shown (all but source and page).
HIDDEN_KEYS = [key for key in (*HIT_KEYS, "image") if key not in ("source_id", "page")]


class IndxRetriever(BaseRetriever):
    """The chunk index as a LlamaIndex retriever: `retrieve(query)` is
    `indx_assets.search(query, ...)` with these settings, each hit a `NodeWithScore`."""

    def __init__(self, *, k: int = 5, mode: "SearchMode" = "hybrid", source_prefix: str | None = None,
                 chunk_type: str | None = None, page: int | None = None, expand: bool = False,
                 home: str | Path | None = None, callback_manager: CallbackManager | None = None,
                 verbose: bool = False) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.k, self.mode, self.expand, self.home = k, mode, expand, home
        self.source_prefix, self.chunk_type, self.page = source_prefix, chunk_type, page

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = search(query_bundle.query_str, k=self.k, mode=self.mode, source_prefix=self.source_prefix,
                      chunk_type=self.chunk_type, page=self.page, expand=self.expand, home=self.home)
        return [NodeWithScore(node=TextNode(id_=hit.id, text=hit.content, metadata=hit_metadata(hit),
                                            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=hit.parent_ref)},
                                            **_hidden(hit_metadata(hit))),
                              score=hit.score)
                for hit in hits]


class IndxReader(BaseReader):
    """A file read and chunked as `indx chunk` does: `load_data(file)` gives one `Document` per
    chunk, in reading order (an image chunk has empty text and its bytes in
    `metadata["image"]`, base64). `extra_info` is added to every chunk's metadata (as
    `SimpleDirectoryReader` passes it). A file that cannot be read raises `ValueError`
    naming its status and why."""

    def lazy_load_data(self, file: PathArg, extra_info: Mapping[str, Any] | None = None, *,  # type: ignore[override]
                       source_id: str | None = None, **_: Any) -> Iterator[Document]:
        for piece in readable_chunks(chunk(file, source_id=source_id)):
            metadata = {**(extra_info or {}), **chunk_metadata(piece)}
            yield Document(id_=piece.id, text=piece.content, metadata=metadata, **_hidden(metadata))


def _hidden(metadata: Mapping[str, Any]) -> dict[str, list[str]]:
    keys = [key for key in HIDDEN_KEYS if key in metadata]
    return {"excluded_llm_metadata_keys": keys, "excluded_embed_metadata_keys": keys}
