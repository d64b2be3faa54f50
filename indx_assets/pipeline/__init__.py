"""The pipeline layer: from a file's bytes to chunks and vectors, with no Dagster.

The chunker port and the document model, media detection and bounds, readers, the
`unstructured`-compatible chunking library, the built-in chunkers, the chain and the runner
that merges its answers into a chunk map, and the embedder. `indx chunk`, `indx verify` and
the HTTP chunk endpoint use it as it is; the wiring layer above adds Dagster around it.
Modules here import nothing from `indx_assets.wiring` or `indx_assets.app`.
"""
