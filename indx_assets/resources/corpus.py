"""The corpus: folders (local paths or object-store URIs) whose files are the sources.

A source's id is its path relative to the root it was found under, so moving the whole
corpus keeps every identity.
"""

from collections.abc import Iterator

import dagster as dg
from upath import UPath


def _is_hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/"))


class CorpusResource(dg.ConfigurableResource):
    """Where source files are read from: one or more roots, searched in order."""

    roots: list[str]

    def iter_sources(self) -> Iterator[tuple[str, UPath]]:
        """Every (source_id, path) under the roots, hidden files skipped, sorted per root."""
        seen: set[str] = set()
        for root in self.roots:
            base = UPath(root)
            if base.is_file():
                candidates = [(base.name, base)]
            else:
                candidates = sorted(
                    (p.relative_to(base).as_posix(), p) for p in base.rglob("*") if p.is_file()
                )
            for source_id, path in candidates:
                if _is_hidden(source_id) or source_id in seen:
                    continue
                seen.add(source_id)
                yield source_id, path

    def locate(self, source_id: str) -> UPath:
        for root in self.roots:
            base = UPath(root)
            path = base if base.is_file() and base.name == source_id else base / source_id
            if path.is_file():
                return path
        raise FileNotFoundError(f"source {source_id!r} is in none of the corpus roots {self.roots}")

    def read(self, source_id: str) -> bytes:
        return self.locate(source_id).read_bytes()
