"""Adapters for the frameworks RAG code is written in, over the Python API (`indx_assets.app.api`).

`integrations.langchain` (the `langchain` extra: langchain-core) and `integrations.llamaindex`
(the `llamaindex` extra: llama-index-core) each give a retriever over the chunk index and a
loader of one file's chunks. They sit above the app layer: they import the API, nothing
imports them.
"""
