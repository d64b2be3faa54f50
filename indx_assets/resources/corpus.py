"""The corpus: folders (local paths or object-store URIs) whose files are the sources.

A source's id is its path relative to the root it was found under, so moving the whole
corpus keeps every identity; paths that are not valid partition keys get the stable key of
`automation.source_index.partition_key`.
"""

import re
from collections.abc import Iterator

import dagster as dg
from upath import UPath

from indx_assets.automation.source_index import SourceIndex, partition_key

_MAPPED_KEY = re.compile(r"~[0-9a-f]{16}$")


def _is_hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/"))


class CorpusResource(dg.ConfigurableResource):
    """Where source files are read from: one or more roots, searched in order."""

    roots: list[str]
    index: str = ""
    """The corpus sensor's source index (SQLite), where mapped keys are looked up first."""

    def iter_files(self) -> Iterator[tuple[str, str, str, UPath]]:
        """Every (source_id, root, relative path, path) under the roots, hidden files skipped,
        sorted per root; a source id found under an earlier root shadows later ones."""
        seen: set[str] = set()
        for root in self.roots:
            base = UPath(root)
            if base.is_file():
                candidates = [(base.name, base)]
                root = str(base.parent)
            else:
                candidates = sorted(
                    (p.relative_to(base).as_posix(), p) for p in base.rglob("*") if p.is_file()
                )
            for relative, path in candidates:
                source_id = partition_key(relative)
                if _is_hidden(relative) or source_id in seen:
                    continue
                seen.add(source_id)
                yield source_id, root, relative, path

    def iter_sources(self) -> Iterator[tuple[str, UPath]]:
        """Every (source_id, path) under the roots, hidden files skipped, sorted per root."""
        for source_id, _, _, path in self.iter_files():
            yield source_id, path

    def locate(self, source_id: str) -> UPath:
        for root in self.roots:
            base = UPath(root)
            path = base if base.is_file() and base.name == source_id else base / source_id
            if path.is_file():
                return path
        if _MAPPED_KEY.search(source_id):  # a mapped key: the index knows its path, a walk finds it
            seen = SourceIndex(self.index).get([source_id]).get(source_id) if self.index else None
            if seen is not None and UPath(seen.root, seen.relative).is_file():
                return UPath(seen.root, seen.relative)
            for key, _, _, path in self.iter_files():
                if key == source_id:
                    return path
        raise FileNotFoundError(f"source {source_id!r} is in none of the corpus roots {self.roots}")

    def read(self, source_id: str) -> bytes:
        return self.locate(source_id).read_bytes()
