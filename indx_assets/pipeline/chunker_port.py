"""The chunker port, re-exported from `indx_interfaces` (the `indx-interfaces` distribution).

The port lives there so that a chunker distribution depends on it alone; this module keeps
`indx_assets.pipeline.chunker_port` imports working. New code imports `indx_interfaces`.
"""

from indx_interfaces.chunker import (
    BBOX_REASONS,
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

__all__ = [
    "BBOX_REASONS",
    "PAGE_STATUSES",
    "BBox",
    "BBoxReason",
    "ChunkPiece",
    "Chunker",
    "ChunkerProvider",
    "Line",
    "PageChunks",
    "PageOutput",
    "PageStatus",
    "sentence_holders",
    "validate_bbox",
]
