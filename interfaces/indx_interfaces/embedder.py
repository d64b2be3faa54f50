"""The embedder port: what turns chunk texts into vectors.

Minimal on purpose: it states what the pipeline asks of an embedder today, no more
(issue 22 fills the port in). The rules:

- `embed_texts(texts)` returns one vector per text, in the texts' order, each of
  `dimension` floats; an empty list gives no vectors. A vector is a `Sequence[float]`; the
  vectors are anything with a length, rows by index and rows in order (`Vectors`), which a
  list of lists and a 2-D numpy array both are, for type checkers too (`numpy.ndarray` is
  not a `Sequence` to them, so `Sequence[Sequence[float]]` would refuse it).
- `modalities` says what it can embed (`"text"`, `"image"`): image chunks are stored but left
  without a vector by an embedder that does not declare `image`.
- `model_version` names the model and whatever decides its vectors (weights, their package's
  version). It is part of the embeddings' code version: a different string re-embeds
  everything, the same string promises the same vectors.

This module imports nothing outside the standard library.
"""

from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Embedder", "Vector", "Vectors"]

#: One embedding: `dimension` floats (a list, a tuple or a numpy row).
Vector = Sequence[float]


class Vectors(Protocol):
    """One `Vector` per text: a length, rows by index, rows in order."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int, /) -> Vector: ...

    def __iter__(self) -> Iterator[Vector]: ...


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

    def embed_texts(self, texts: list[str]) -> Vectors:
        """One vector per text, in order."""
        ...
