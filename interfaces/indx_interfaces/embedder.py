"""The embedder port: what turns chunk texts into vectors.

Minimal on purpose: it states what the pipeline asks of an embedder today, no more
(issue 22 fills the port in). The rules:

- `embed_texts(texts)` returns one vector per text, in the texts' order, each of
  `dimension` floats; an empty list gives no vectors. Vectors are typed as sequences of
  floats so that a plain list of lists qualifies; at run time a 2-D numpy array qualifies too
  (it has a length, rows by index and floats in its rows), though static type checkers do not
  count `numpy.ndarray` as a `Sequence`.
- `modalities` says what it can embed (`"text"`, `"image"`): image chunks are stored but left
  without a vector by an embedder that does not declare `image`.
- `model_version` names the model and whatever decides its vectors (weights, their package's
  version). It is part of the embeddings' code version: a different string re-embeds
  everything, the same string promises the same vectors.

This module imports nothing outside the standard library.
"""

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

#: One embedding: `dimension` floats (a list, a tuple or a numpy row).
Vector = Sequence[float]


@runtime_checkable
class Embedder(Protocol):
    """Embeds chunk texts (see the module's rules)."""

    @property
    def dimension(self) -> int:
        """The length of every vector."""
        ...

    @property
    def modalities(self) -> frozenset[str]:
        """What it can embed: `"text"`, and `"image"` if it embeds image pieces."""
        ...

    @property
    def model_version(self) -> str:
        """The model and the versions that decide its vectors."""
        ...

    def embed_texts(self, texts: list[str]) -> Sequence[Vector]:
        """One vector per text, in order."""
        ...
