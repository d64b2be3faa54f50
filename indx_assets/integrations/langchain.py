"""LangChain adapters (the `langchain` extra: langchain-core): `IndxRetriever` and `IndxLoader`.

    from indx_assets.integrations.langchain import IndxLoader, IndxRetriever

    docs = IndxRetriever(k=4).invoke("when may deep-draught ships cross the bar")
    chunks = IndxLoader("guide.pdf").load()

Each `Document` is one chunk: its text as `page_content`, its id as `id`, and in `metadata` the
chunk's own metadata with its identity (`id`, `source_id`, `locator`, `page`, `bbox`,
`bbox_reason`, `chunk_type`, `parent_ref`, `chunker`, offsets; a retrieved one also its `score`).
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from indx_assets.app.api import PathArg, chunk, search
from indx_assets.integrations.records import chunk_metadata, hit_metadata, needs_extra, readable_chunks

with needs_extra("langchain", "langchain-core", "langchain_core"):
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.document_loaders import BaseLoader
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

__all__ = ["IndxLoader", "IndxRetriever"]


class IndxRetriever(BaseRetriever):
    """The chunk index as a LangChain retriever: `invoke(query)` is `indx_assets.search(query, ...)`
    with these settings, each hit a `Document`."""

    k: int = 5
    """How many chunks a query returns."""
    mode: Literal["hybrid", "vector", "fts"] = "hybrid"
    source_prefix: str | None = None
    """Only sources whose id starts with this (`docs/` for the root labelled docs)."""
    chunk_type: str | None = None
    page: int | None = None
    expand: bool = False
    """Give each hit its section (`metadata["section"]`)."""
    home: str | Path | None = None
    """The data directory; default: the one the `indx` command uses."""

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        hits = search(query, k=self.k, mode=self.mode, source_prefix=self.source_prefix, chunk_type=self.chunk_type,
                      page=self.page, expand=self.expand, home=self.home)
        return [Document(page_content=hit.content, metadata=hit_metadata(hit), id=hit.id) for hit in hits]


class IndxLoader(BaseLoader):
    """One file read and chunked as `indx chunk` does: one `Document` per chunk, in reading
    order (an image chunk has empty `page_content` and its bytes in `metadata["image"]`,
    base64). A file that cannot be read raises `ValueError` naming its status and why."""

    def __init__(self, path: PathArg, *, source_id: str | None = None) -> None:
        self.path = os.fspath(path)
        self.source_id = source_id

    def lazy_load(self) -> Iterator[Document]:
        for piece in readable_chunks(chunk(self.path, source_id=self.source_id)):
            yield Document(page_content=piece.content, metadata=chunk_metadata(piece), id=piece.id)
