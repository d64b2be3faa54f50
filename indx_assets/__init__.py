"""indx-assets: a Dagster asset pipeline from documents to a LanceDB chunk index.

A third-party chunker needs only what is exported here.
"""

from indx_assets.pipeline.chunker_port import (
    BBox,
    BBoxReason,
    Chunker,
    ChunkerProvider,
    ChunkPiece,
    Line,
    PageChunks,
    PageOutput,
    sentence_holders,
    validate_bbox,
)

__all__ = [
    "BBox",
    "BBoxReason",
    "ChunkPiece",
    "Chunker",
    "ChunkerProvider",
    "Line",
    "PageChunks",
    "PageOutput",
    "sentence_holders",
    "validate_bbox",
]
