"""Which embedder is in use: `INDX_EMBEDDER` names one of the `indx.embedders` entry points.

`INDX_EMBEDDER` is `name` or `name:argument` (`minilm`, the default;
`sentence-transformers:<model directory or installed model package>`; `clip:<model directory>`;
or a third party's). The entry point names a factory the argument is given to (the port,
`indx_interfaces.embedder`). The built-ins register exactly as a third party would.

An embedder's identity (`EmbedderIdentity`) is what decides its vectors: the entry point's name,
its distribution and version (for a built-in, the digest of its code instead: a release of
indx-assets that leaves the embedders alone re-embeds nothing), the model version and the hash
of the weight files. It is `chunk_embeddings`' code version, and the LanceDB table records it:
switching the model marks every embedding stale, and a table refuses queries embedded by another.
Its sizing tokenizer goes into the chunker chain's fingerprint (`chain.Chain`).
"""

import inspect
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points

from indx_interfaces import EMBEDDER_ENTRY_POINT_GROUP, Embedder

from indx_assets.pipeline.code_digest import code_digest
from indx_assets.pipeline.tokenizer import TokenCounter

#: Environment variable naming the embedder in use.
EMBEDDER_ENV = "INDX_EMBEDDER"
DEFAULT_EMBEDDER = "minilm"
#: The distribution of the built-in embedders; their code digest stands for its version.
BUILTIN_DISTRIBUTION = "indx-assets"
#: The modules a built-in embedder's code digest follows.
EMBEDDER_PACKAGES = ("indx_assets.pipeline.embedder", "indx_assets.pipeline.embedders", "indx_assets.pipeline.tokenizer",
                     "indx_assets.pipeline.bert_torch")


class EmbedderError(ValueError):
    """`INDX_EMBEDDER` names no installed embedder, or the embedder cannot find its model."""


@dataclass(frozen=True)
class EmbedderIdentity:
    """What decides an embedder's vectors (see the module's rules)."""

    name: str
    distribution: str
    version: str
    model_version: str
    weights_digest: str

    @property
    def space(self) -> str:
        """The vector space: the model and its weights (code that only batches differently
        leaves it). A table holds vectors of one space, and is queried in it only."""
        return f"{self.name}|{self.model_version}|weights-{self.weights_digest}"

    @property
    def code_version(self) -> str:
        """`chunk_embeddings`' code version and the table's recorded embedder."""
        return f"{self.name}|{self.distribution}=={self.version}|{self.model_version}|weights-{self.weights_digest}"


@dataclass(frozen=True)
class LoadedEmbedder:
    """The embedder in use, its identity and the spec that named it."""

    spec: str
    embedder: Embedder
    identity: EmbedderIdentity


def same_space(recorded: str | None, space: str) -> bool:
    """Whether vectors recorded in `recorded` are comparable with `space`'s. A table or a
    stored embedding that records none was written before the embedder could be chosen: by
    MiniLM."""
    if recorded is None:
        return space.startswith(f"{DEFAULT_EMBEDDER}|")
    return recorded == space


class SpaceMismatch(EmbedderError):
    """Vectors of one model compared with another's."""


def check_space(recorded: str | None, space: str) -> None:
    """Refuse a query embedded in `space` against a table written in `recorded`."""
    if not same_space(recorded, space):
        raise SpaceMismatch(
            f"the index was built with the embedder {recorded or DEFAULT_EMBEDDER + ' (all-MiniLM-L6-v2)'} but "
            f"queries would be embedded with {space}: set {EMBEDDER_ENV} back to the index's embedder, "
            f"or re-embed the corpus with this one (indx backfill --stale)")


def parse_spec(raw: str) -> tuple[str, str]:
    """`name` or `name:argument` (empty means the default); the argument may hold colons."""
    raw = raw.strip() or DEFAULT_EMBEDDER
    name, _, argument = raw.partition(":")
    return name.strip(), argument.strip()


def current_spec() -> str:
    """`INDX_EMBEDDER`, or the default."""
    return os.environ.get(EMBEDDER_ENV, "").strip() or DEFAULT_EMBEDDER


def _version_of(ep: EntryPoint) -> tuple[str, str]:
    dist = ep.dist
    distribution, version = (dist.metadata["Name"] or "", dist.version or "") if dist is not None else ("", "")
    if distribution in ("", BUILTIN_DISTRIBUTION):
        module = ep.module
        digest = code_digest([module], EMBEDDER_PACKAGES)[:16]
        return BUILTIN_DISTRIBUTION, f"code-{digest}"
    return distribution, version


def load_embedder(spec: str | None = None, *, eps: Sequence[EntryPoint] | None = None) -> LoadedEmbedder:
    """The embedder `spec` (default: `INDX_EMBEDDER`) names, created but with no weights loaded.
    Raises `EmbedderError` with a sentence a user can act on. Cached per spec and process."""
    spec = spec if spec is not None else current_spec()
    if eps is None:
        return _load_installed(spec)
    return _load(spec, tuple(eps))


@lru_cache(maxsize=8)
def _load_installed(spec: str) -> LoadedEmbedder:
    return _identified(spec, *_created_installed(spec))


@lru_cache(maxsize=8)
def _created_installed(spec: str) -> tuple[Embedder, EntryPoint]:
    """The installed embedder `spec` names, created once per process: `load_embedder` and the
    sizing tokenizer share it."""
    return _created(spec, tuple(entry_points(group=EMBEDDER_ENTRY_POINT_GROUP)))


def _load(spec: str, eps: tuple[EntryPoint, ...]) -> LoadedEmbedder:
    return _identified(spec, *_created(spec, eps))


def _created(spec: str, eps: tuple[EntryPoint, ...]) -> tuple[Embedder, EntryPoint]:
    """The embedder `spec` names among `eps`, created (no weights loaded, none hashed), and its entry point."""
    name, argument = parse_spec(spec)
    found = {ep.name: ep for ep in eps}
    if name not in found:
        raise EmbedderError(f"{EMBEDDER_ENV}={spec!r} names no installed embedder; installed: {', '.join(sorted(found)) or 'none'}")
    ep = found[name]
    try:
        embedder = ep.load()(argument)
    except (ValueError, ImportError) as exc:
        raise EmbedderError(f"{EMBEDDER_ENV}={spec!r}: {exc}") from exc
    if not _is_embedder(embedder):
        raise EmbedderError(f"{EMBEDDER_ENV}={spec!r}: the entry point {ep.value} did not return an Embedder")
    return embedder, ep


def _identified(spec: str, embedder: Embedder, ep: EntryPoint) -> LoadedEmbedder:
    """`embedder` with its identity: its code's version and its weights' digest (the weight
    files read whole, 90 MB for MiniLM)."""
    distribution, version = _version_of(ep)
    try:
        weights = embedder.weights_digest
    except OSError as exc:
        raise EmbedderError(f"{EMBEDDER_ENV}={spec!r}: its weights cannot be read: {exc}") from exc
    identity = EmbedderIdentity(ep.name, distribution, version, embedder.model_version, weights)
    return LoadedEmbedder(spec, embedder, identity)


def preload(spec: str | None = None) -> threading.Thread:
    """Load the embedder `spec` names (default: `INDX_EMBEDDER`) and its weights in a thread
    started now, and return it: the seconds of importing torch and reading the weights then
    overlap the reading and cutting of documents instead of preceding the first embedding
    (their time is counted as `model_load_background`; what the embed stage still waits for,
    as `model_load`). Still one load per process: the loads are cached, and a load asked for
    while this one runs waits for it (`embedder.load_sentence_transformer`).

    A failure is left to the foreground: its own load raises the same error, with its message."""
    from indx_assets.pipeline.stage_clock import CLOCK

    def load() -> None:
        with CLOCK.in_background(), CLOCK.stage("model_load"):
            try:
                embedder = load_embedder(spec).embedder
                if "text" in embedder.modalities:
                    embedder.embed_texts(["warm up"])  # the weights load on the first embedding
            except Exception:  # the foreground's own load reports it
                logging.getLogger(__name__).debug("preloading the embedder failed", exc_info=True)

    thread = threading.Thread(target=load, name="indx-embedder-preload", daemon=True)
    thread.start()
    return thread


def _is_embedder(candidate: object) -> bool:
    """Whether `candidate` has every member of the port, looked up statically: `isinstance` with
    a runtime-checkable protocol evaluates properties on Python 3.11, and a `dimension` may load
    the weights."""
    members = [name for name in dir(Embedder) if not name.startswith("_")]
    return all(inspect.getattr_static(candidate, name, None) is not None for name in members)


def sizing_tokenizer_version() -> str:
    """The sizing tokenizer of the embedder in use, named (for the chain's fingerprint).
    Chunking needs the embedder's tokenizer, not its identity: the weights are not hashed for
    it (a tenth of a second of `indx chunk`'s start)."""
    spec = current_spec()
    try:
        return _created_installed(spec)[0].tokenizer_version
    except OSError as exc:
        raise EmbedderError(f"{EMBEDDER_ENV}={spec!r}: its tokenizer cannot be read: {exc}") from exc


def sizing_tokenizer() -> TokenCounter:
    """The tokenizer chunks are sized with: the embedder-in-use's own."""
    return _created_installed(current_spec())[0].tokenizer
