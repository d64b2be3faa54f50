"""The embedder port: what turns chunk texts and pictures into vectors.

The rules:

- `embed_texts(texts)` returns one vector per text, in the texts' order, each of
  `dimension` floats; an empty list gives no vectors. A vector is a `Sequence[float]`; the
  vectors are anything with a length, rows by index and rows in order (`Vectors`), which a
  list of lists and a 2-D numpy array both are, for type checkers too (`numpy.ndarray` is
  not a `Sequence` to them, so `Sequence[Sequence[float]]` would refuse it).
- `embed_images(images)` does the same for pictures given as their encoded bytes (PNG, JPEG,
  ... as a file holds them), into the same space as the texts: a text and a picture of the
  same thing lie close. Only an embedder whose `modalities` hold `"image"` is asked; one
  without raises `ValueError`.
- `modalities` says what it can embed (`"text"`, `"image"`).
- `tokenizer` counts tokens the way the model reads them (`count(text) -> int`, special
  tokens excluded): the chunker chain sizes chunks with it, so a chunk fits what the model
  reads. `tokenizer_version` names it; a different one re-cuts the chunk maps.
- `model_version` names the model and whatever decides its vectors (weights, their package's
  version); `weights_digest` is a hash of the weight files. Both are part of the embeddings'
  code version: a different string re-embeds everything, the same string promises the same
  vectors.

Embedders are found through the entry-point group `indx.embedders`
(`EMBEDDER_ENTRY_POINT_GROUP`): each entry point names a factory called with the text after
the name in `INDX_EMBEDDER=name:argument` (empty without one; a model directory, say) that
returns an `Embedder`. A factory must not load weights: the embedder loads them on its first
`embed_*` call, so reading its identity stays cheap.

This module imports nothing outside the standard library.
"""

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["EMBEDDER_ENTRY_POINT_GROUP", "Embedder", "EmbedderFactory", "SizingTokenizer", "Vector", "Vectors"]

#: The entry-point group embedders register in (the built-ins too).
EMBEDDER_ENTRY_POINT_GROUP = "indx.embedders"

#: One embedding: `dimension` floats (a list, a tuple or a numpy row).
Vector = Sequence[float]


class Vectors(Protocol):
    """One `Vector` per input: a length, rows by index, rows in order."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int, /) -> Vector: ...

    def __iter__(self) -> Iterator[Vector]: ...


@runtime_checkable
class SizingTokenizer(Protocol):
    """Counts the model's tokens in a text, special tokens excluded."""

    def count(self, text: str) -> int: ...


@runtime_checkable
class Embedder(Protocol):
    """Embeds chunk texts and, if it declares `"image"`, pictures (see the module's rules)."""

    @property
    def dimension(self) -> int:
        """The length of every vector."""
        ...

    @property
    def modalities(self) -> frozenset[str]:
        """What it can embed: `"text"`, and `"image"` if it embeds pictures."""
        ...

    @property
    def model_version(self) -> str:
        """The model and the versions that decide its vectors."""
        ...

    @property
    def weights_digest(self) -> str:
        """A hash of the weight files (the same files give the same string)."""
        ...

    @property
    def tokenizer(self) -> SizingTokenizer:
        """The tokenizer chunks are sized with."""
        ...

    @property
    def tokenizer_version(self) -> str:
        """Names the sizing tokenizer: equal strings count equally."""
        ...

    def embed_texts(self, texts: list[str]) -> Vectors:
        """One vector per text, in order."""
        ...

    def embed_images(self, images: list[bytes]) -> Vectors:
        """One vector per encoded picture, in order, in the texts' space."""
        ...


#: An entry point's target: the argument of `INDX_EMBEDDER=name:argument` in, an embedder out.
EmbedderFactory = Callable[[str], Embedder]
