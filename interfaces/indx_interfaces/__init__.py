"""indx-interfaces: the ports of indx, and nothing else.

A chunker distribution depends on this distribution alone: it holds the values a chunker
receives (`PageOutput`, `Line`) and returns (`PageChunks`, `ChunkPiece`), the `Chunker` and
`ChunkerProvider` protocols, the one bbox rule (`validate_bbox`) and the embedder port
(`Embedder`). The rules of each port are in its module's docstring (`indx_interfaces.chunker`,
`indx_interfaces.embedder`). Nothing here imports anything outside the standard library.
"""

from indx_interfaces import chunker, embedder
from indx_interfaces.chunker import *  # noqa: F403 (each module's __all__ names its port)
from indx_interfaces.embedder import *  # noqa: F403

# In the forms type checkers read as a library's public names.
__all__: list[str] = []
__all__ += chunker.__all__
__all__ += embedder.__all__
