"""indx-interfaces: the ports of indx, and nothing else.

A chunker distribution depends on this distribution alone: it holds the values a chunker
receives (`PageOutput`, `Line`) and returns (`PageChunks`, `ChunkPiece`), the `Chunker` and
`ChunkerProvider` protocols, the one bbox rule (`validate_bbox`) and the embedder port
(`Embedder`). The rules of each port are in its module's docstring (`indx_interfaces.chunker`,
`indx_interfaces.embedder`). Nothing here imports anything outside the standard library.
"""

from indx_interfaces.chunker import (
    BBOX_REASONS,
    CHUNKER_ENTRY_POINT_GROUP,
    PAGE_STATUSES,
    BBox,
    BBoxReason,
    Chunker,
    ChunkerProvider,
    ChunkPiece,
    Line,
    PageChunks,
    PageOutput,
    PageStatus,
    sentence_holders,
    validate_bbox,
)
from indx_interfaces.embedder import Embedder, Vector, Vectors

__all__ = [
    "BBOX_REASONS",
    "CHUNKER_ENTRY_POINT_GROUP",
    "PAGE_STATUSES",
    "BBox",
    "BBoxReason",
    "ChunkPiece",
    "Chunker",
    "ChunkerProvider",
    "Embedder",
    "Line",
    "PageChunks",
    "PageOutput",
    "PageStatus",
    "Vector",
    "Vectors",
    "sentence_holders",
    "validate_bbox",
]
