"""The LangChain and LlamaIndex adapters, through each framework's own entry points, on the
real packages (the `langchain` and `llamaindex` extras) and a real ingest of a small corpus."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixtures.small_corpus import FACTS
from langchain_core.documents import Document as LangChainDocument
from langchain_core.retrievers import BaseRetriever as LangChainRetriever
from llama_index.core.schema import Document as LlamaDocument
from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore, TextNode

import indx_assets
from indx_assets.integrations import langchain as lc
from indx_assets.integrations import llamaindex as li
from indx_assets.pipeline.identity import document_id

#: What every record an adapter returns carries in its metadata.
IDENTITY = {"id", "source_id", "locator", "page", "bbox", "bbox_reason", "chunk_type", "parent_ref", "chunker"}


def _the_chunk_of(corpus: Path, name: str):  # type: ignore[no-untyped-def]
    """The chunk that holds fact `name`, as `indx_assets.chunk` cuts its file."""
    fact = FACTS[name]
    document = indx_assets.chunk(corpus / fact.path, source_id="corpus/" + fact.path)
    return next(c for c in document.chunks if fact.sentence in " ".join(c.content.split()))


def test_langchain_retriever_returns_the_chunk_with_its_identity(small_corpus_home: tuple[Path, Path]) -> None:
    corpus, home = small_corpus_home
    retriever = lc.IndxRetriever(k=2, home=str(home))
    assert isinstance(retriever, LangChainRetriever)
    docs = retriever.invoke(FACTS["fog"].query)
    assert len(docs) == 2 and all(isinstance(d, LangChainDocument) for d in docs)
    top, chunk = docs[0], _the_chunk_of(corpus, "fog")
    assert top.id == chunk.id and top.page_content == chunk.content
    assert IDENTITY <= set(top.metadata) and top.metadata["score"] > 0
    assert (top.metadata["source_id"], top.metadata["page"], top.metadata["locator"]) == ("corpus/notices.pdf", 2, chunk.locator)
    assert top.metadata["bbox"] == pytest.approx(list(chunk.bbox)) and top.metadata["parent_ref"] == chunk.parent_ref
    json.dumps(top.metadata)  # plain values: a vector store or a trace can keep them


def test_langchain_retriever_passes_the_filters(small_corpus_home: tuple[Path, Path]) -> None:
    _, home = small_corpus_home
    docs = lc.IndxRetriever(k=5, source_prefix="corpus/recipes/", home=str(home)).invoke("harbour rules for ships")
    assert [d.metadata["source_id"] for d in docs] == ["corpus/recipes/chowder.md"]
    assert lc.IndxRetriever(k=5, mode="fts", home=str(home)).invoke("paraffin")[0].metadata["source_id"] == "corpus/lighthouse.txt"


def test_langchain_loader_gives_one_document_per_chunk(small_corpus_home: tuple[Path, Path]) -> None:
    corpus, _ = small_corpus_home
    loader = lc.IndxLoader(corpus / "notices.pdf")
    document = indx_assets.chunk(corpus / "notices.pdf")
    docs = loader.load()
    assert [d.page_content for d in docs] == [c.content for c in document.chunks] and len(docs) == 2
    assert [d.id for d in docs] == [c.id for c in document.chunks]
    assert [(d.metadata["page"], d.metadata["locator"]) for d in docs] == [(c.page, c.locator) for c in document.chunks]
    assert all(IDENTITY <= set(d.metadata) and len(d.metadata["bbox"]) == 4 for d in docs)
    assert next(loader.lazy_load()).id == docs[0].id


def test_llamaindex_retriever_returns_nodes_with_scores(small_corpus_home: tuple[Path, Path]) -> None:
    corpus, home = small_corpus_home
    nodes = li.IndxRetriever(k=2, home=home).retrieve(FACTS["bar"].query)
    assert len(nodes) == 2 and all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in nodes)
    top, chunk = nodes[0], _the_chunk_of(corpus, "bar")
    assert top.node.node_id == chunk.id and top.node.get_content() == chunk.content and top.score > nodes[1].score
    assert IDENTITY <= set(top.node.metadata) and top.node.metadata["locator"] == chunk.locator
    assert top.node.relationships[NodeRelationship.SOURCE].node_id == document_id("corpus/harbour.md")
    # an LLM and an embedding model are shown where the text comes from, not ids and boxes
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        shown = top.node.get_metadata_str(mode)
        assert "source_id: corpus/harbour.md" in shown and chunk.id not in shown and "bbox" not in shown


def test_llamaindex_retriever_passes_the_filters(small_corpus_home: tuple[Path, Path]) -> None:
    _, home = small_corpus_home
    nodes = li.IndxRetriever(k=5, page=2, home=home).retrieve("notice to mariners")
    assert nodes and {(n.node.metadata["source_id"], n.node.metadata["page"]) for n in nodes} == {("corpus/notices.pdf", 2)}


def test_llamaindex_reader_gives_one_document_per_chunk(small_corpus_home: tuple[Path, Path]) -> None:
    corpus, _ = small_corpus_home
    documents = li.IndxReader().load_data(corpus / "harbour.md", extra_info={"team": "harbour office"})
    chunks = indx_assets.chunk(corpus / "harbour.md").chunks
    assert all(isinstance(d, LlamaDocument) for d in documents)
    assert [(d.doc_id, d.text) for d in documents] == [(c.id, c.content) for c in chunks]
    assert all(IDENTITY <= set(d.metadata) and d.metadata["team"] == "harbour office" for d in documents)


@pytest.mark.parametrize("adapter", [lambda p: lc.IndxLoader(p).load(), lambda p: li.IndxReader().load_data(p)],
                         ids=["langchain", "llamaindex"])
def test_a_file_nobody_can_read_is_refused_by_name(tmp_path: Path, adapter) -> None:  # type: ignore[no-untyped-def]
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip archive: no reader takes it
    with pytest.raises(ValueError, match="bundle.zip: unsupported"):
        adapter(archive)


@pytest.mark.parametrize(("module", "extra", "framework"), [("langchain", "langchain", "langchain_core"),
                                                            ("llamaindex", "llamaindex", "llama_index")])
def test_a_missing_extra_says_what_to_install(module: str, extra: str, framework: str) -> None:
    # Both frameworks are installed here (the test extra), so their absence is simulated: a
    # None in sys.modules makes Python's import fail exactly as for an uninstalled package.
    script = textwrap.dedent(f"""
        import sys
        sys.modules[{framework!r}] = None
        try:
            import indx_assets.integrations.{module}
        except ImportError as exc:
            print(exc)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if not k.startswith("INDX_")})
    assert done.returncode == 0, done.stderr
    assert f"pip install 'indx-assets[{extra}]'" in done.stdout
