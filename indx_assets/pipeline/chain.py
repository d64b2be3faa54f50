"""The chunker chain: which chunkers are asked, in what order, and its fingerprint.

Chunkers come from providers named by entry points in the group `indx.chunkers`, the same
group a third party uses. Order: installed third-party chunkers first, then the built-ins
(`builtin = True`), then the one fallback (`fallback = True`) last; everything that answers
for every page must be asked last, or no more specific answer would ever be heard.
"""

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from indx_interfaces import CHUNKER_ENTRY_POINT_GROUP, Chunker, ChunkerProvider

from indx_assets.pipeline.code_digest import code_digest
from indx_assets.pipeline.embedders.registry import sizing_tokenizer_version

ENTRY_POINT_GROUP = CHUNKER_ENTRY_POINT_GROUP  # the port names the group
#: Environment variable holding the chain configuration (JSON text or a path to a JSON file).
CHAIN_ENV = "INDX_CHAIN"

log = logging.getLogger(__name__)


class ChainConfigError(ValueError):
    """The chain config (`INDX_CHAIN`) is malformed or names what is not installed."""


@dataclass(frozen=True)
class ChainConfig:
    """How the installed chunkers are arranged into a chain.

    `order` names entry points to ask first, in that order (the rest follow in the default
    order); `disabled` names entry points never asked; `options` maps an entry-point name to
    keyword options its provider accepts through an optional `with_options(**options)`.
    """

    order: tuple[str, ...] = ()
    disabled: frozenset[str] = frozenset()
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "ChainConfig":
        """Build a config from plain data (parsed JSON), refusing anything ambiguous."""
        if not isinstance(data, Mapping):
            raise ChainConfigError(f"chain config must be an object, got {type(data).__name__}")
        unknown = set(data) - {"order", "disabled", "options"}
        if unknown:
            raise ChainConfigError(f"unknown chain config keys: {sorted(unknown)}")
        order = _names(data.get("order", ()), "order")
        disabled = _names(data.get("disabled", ()), "disabled")
        if len(set(order)) != len(order):
            raise ChainConfigError(f"chain config 'order' names a chunker twice: {list(order)}")
        both = set(order) & set(disabled)
        if both:
            raise ChainConfigError(f"chain config both orders and disables {sorted(both)}")
        options = data.get("options", {})
        if not isinstance(options, Mapping) or not all(isinstance(v, Mapping) for v in options.values()):
            raise ChainConfigError("chain config 'options' must map chunker names to objects of options")
        return cls(order=order, disabled=frozenset(disabled), options={k: dict(v) for k, v in options.items()})

    @classmethod
    def from_env(cls) -> "ChainConfig":
        """Read `INDX_CHAIN`; empty means defaults."""
        return cls.parse(os.environ.get(CHAIN_ENV, ""))

    @classmethod
    def parse(cls, raw: str) -> "ChainConfig":
        """A chain config from JSON text or the path of a JSON file; empty means defaults."""
        raw = raw.strip()
        if not raw:
            return cls()
        try:
            text = raw if raw.startswith("{") else Path(raw).read_text(encoding="utf-8")
            data = json.loads(text)
        except (OSError, ValueError) as exc:
            raise ChainConfigError(f"{CHAIN_ENV} is neither a JSON object nor a readable JSON file: {exc}") from exc
        return cls.from_mapping(data)

    def to_json(self) -> dict[str, Any]:
        return {
            "order": list(self.order),
            "disabled": sorted(self.disabled),
            "options": {k: dict(v) for k, v in sorted(self.options.items())},
        }


@dataclass(frozen=True)
class ChainLink:
    """One chunker in the chain, with where it came from."""

    name: str
    chunker: Chunker
    entry_point: str
    distribution: str
    version: str
    #: For a built-in chunker, the digest of its code (`code_digest.code_digest`): a change
    #: to it without a version bump still changes the chunk maps it cuts.
    code: str = ""

    @property
    def rank(self) -> int:
        if getattr(self.chunker, "fallback", False):
            return 2
        return 1 if getattr(self.chunker, "builtin", False) else 0


@dataclass(frozen=True)
class Chain:
    """An ordered chain of chunkers and the config that arranged it."""

    links: tuple[ChainLink, ...]
    config: ChainConfig = ChainConfig()
    #: The version of the tokenizer chunks are sized with: the embedder in use's
    #: (`INDX_EMBEDDER`, `embedders.registry.sizing_tokenizer_version`).
    tokenizer: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(link.name for link in self.links)

    @property
    def fingerprint(self) -> str:
        """A stable hash of what decides the chunk map: which chunkers, which versions, the
        built-ins' code, which config, which sizing tokenizer.

        It is Dagster's `code_version` for `chunk_map`: installing, upgrading, editing or
        reconfiguring a chunker changes it, and so marks every chunk map stale.
        """
        payload = {
            "links": [[l.name, l.entry_point, l.distribution, l.version, *([l.code] if l.code else [])] for l in self.links],
            "config": self.config.to_json(),
            **({"tokenizer": self.tokenizer} if self.tokenizer else {}),
        }
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
        return f"chain-{digest[:16]}"

    def describe(self) -> list[dict[str, str]]:
        return [
            {"name": l.name, "entry_point": l.entry_point, "distribution": l.distribution, "version": l.version}
            for l in self.links
        ]


def _names(value: Any, key: str) -> tuple[str, ...]:
    # A bare string would iterate into letters: "page" is not ("p", "a", "g", "e").
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ChainConfigError(f"chain config {key!r} must be a list of entry-point names, got {value!r}")
    return tuple(value)


def _distribution_of(ep: EntryPoint) -> tuple[str, str]:
    dist = ep.dist
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


def _builtin_code(ep: EntryPoint, chunker: Chunker) -> str:
    """The code digest of a built-in (or fallback) chunker; third-party chunkers answer for
    their code with their distribution's version."""
    if not (getattr(chunker, "builtin", False) or getattr(chunker, "fallback", False)):
        return ""
    return code_digest([ep.module, type(chunker).__module__])[:16]


def _load_chunkers(ep: EntryPoint, options: Mapping[str, Any] | None) -> tuple[Chunker, ...] | None:
    """The chunkers behind one entry point, or None (logged) when the distribution is broken.

    Anything the distribution's own code raises while loading is its defect and only removes
    that entry point; options it refuses are the configuration's mistake and raise.
    """
    try:
        target = ep.load()
        provider = target() if isinstance(target, type) else target
    except Exception:
        log.exception("chunker entry point %s (%s) failed to load; left out of the chain", ep.name, ep.value)
        return None
    if not isinstance(provider, ChunkerProvider):
        log.error("chunker entry point %s (%s) is not a ChunkerProvider; left out of the chain", ep.name, ep.value)
        return None
    if options:
        configure = getattr(provider, "with_options", None)
        if configure is None:
            raise ChainConfigError(f"chunker {ep.name!r} takes no options, got {sorted(options)}")
        try:
            provider = configure(**options)
        except (TypeError, ValueError) as exc:
            raise ChainConfigError(f"chunker {ep.name!r} refused its options {dict(options)}: {exc}") from exc
    try:
        chunkers = tuple(provider.chunkers())
    except Exception:
        log.exception("chunker provider %s (%s) raised in chunkers(); left out of the chain", ep.name, ep.value)
        return None
    strangers = [c for c in chunkers if not isinstance(c, Chunker)]
    if strangers:
        log.error("chunker provider %s (%s) returned non-chunkers %r; left out", ep.name, ep.value, strangers)
        return None
    return chunkers


def load_chain(config: ChainConfig | None = None, *, eps: Sequence[EntryPoint] | None = None) -> Chain:
    """Discover the installed chunkers and arrange them as `config` says.

    `eps` replaces discovery with a given set of entry points (an empty one is a bare install).
    A provider that fails to load is logged and left out: one broken distribution must not
    take the others down. Configuration mistakes (unknown names, bad options) raise.
    """
    config = config if config is not None else ChainConfig.from_env()
    found = list(eps) if eps is not None else list(entry_points(group=ENTRY_POINT_GROUP))
    known = {ep.name for ep in found}
    unknown = (set(config.order) | set(config.disabled) | set(config.options)) - known
    if unknown:
        raise ChainConfigError(f"chain config names chunkers that are not installed: {sorted(unknown)}")
    explicit = {name: i for i, name in enumerate(config.order)}
    ranked: list[tuple[tuple[int, int], ChainLink]] = []
    for ep in sorted(found, key=lambda e: (e.name, e.value)):
        if ep.name in config.disabled:
            continue
        chunkers = _load_chunkers(ep, config.options.get(ep.name))
        if chunkers is None:
            continue
        distribution, version = _distribution_of(ep)
        for i, chunker in enumerate(chunkers):
            name = ep.name if len(chunkers) == 1 else f"{ep.name}.{getattr(chunker, 'name', i)}"
            link = ChainLink(name, chunker, ep.value, distribution, version, _builtin_code(ep, chunker))
            # Keyed by the entry point's own name: entry-point names may contain dots too.
            ranked.append(((0, explicit[ep.name]) if ep.name in explicit else (1, link.rank), link))
    ranked.sort(key=lambda pair: pair[0])  # stable: ties keep the name order
    return Chain(tuple(link for _, link in ranked), config, sizing_tokenizer_version())
