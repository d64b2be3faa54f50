"""The corpus: folders (local paths or object-store URIs) whose files are the sources.

A source's id is its path relative to the root it was found under, so moving the whole
corpus keeps every identity; paths that are not valid partition keys get the stable key of
`automation.source_index.partition_key`.
"""

import heapq
import os
import re
from collections.abc import Iterator

import dagster as dg
from upath import UPath

from indx_assets.automation.source_index import SourceIndex, partition_key
from indx_assets.bounds import OUTSIDE_ROOT, TOO_LARGE, Bounds, link_refusal, size_refusal

_MAPPED_KEY = re.compile(r"~[0-9a-f]{16}$")


def _walk(
    directory: UPath, prefix: str, after: str, links: str = "inside", above: frozenset[str] = frozenset()
) -> Iterator[tuple[str, UPath]]:
    """(relative path, path) of every file below `directory` that is not hidden, in the order
    of the relative paths, from the first one after `after`. A folder whose paths all sort at
    or before `after` is not listed, so a sweep resumed from a cursor lists little more than
    the page it reads. Links follow `links` (see `bounds`): a linked folder is entered only
    under `all`, and never when it leads back to a folder `above` it (no loops)."""
    try:
        children = list(directory.iterdir())
    except (FileNotFoundError, NotADirectoryError):  # gone since its parent was listed
        return
    entries = []
    for child in children:
        if child.name.startswith("."):
            continue
        relative = prefix + child.name
        is_dir = child.is_dir()
        is_link = child.is_symlink()
        if is_link and (links == "never" or (is_dir and links != "all")):
            continue  # a linked folder is followed only under `all`
        if not (is_dir or child.is_file()):
            continue  # a dangling link or a pipe is no file
        # A folder's paths all start with "name/": that is where they sort among the files.
        entries.append((relative + "/" if is_dir else relative, is_dir, child))
    for key, is_dir, child in sorted(entries, key=lambda e: e[0]):
        if not is_dir:
            if key > after:
                yield key, child
        elif after < key or after.startswith(key):  # otherwise every path below sorts before `after`
            here = above | {os.path.realpath(directory.path)}
            if os.path.realpath(child.path) not in here:
                yield from _walk(child, key, after, links, here)


class CorpusResource(dg.ConfigurableResource):
    """Where source files are read from: one or more roots, searched in order."""

    roots: list[str]
    index: str = ""
    """The corpus sensor's source index (SQLite), where mapped keys are looked up first."""
    follow_symlinks: str = Bounds.follow_symlinks
    """`inside`, `never` or `all` (`INDX_FOLLOW_SYMLINKS`, see `indx_assets.bounds`)."""
    max_file_mb: float = Bounds.max_file_mb
    """Files larger than this are refused unread (`INDX_MAX_FILE_MB`)."""

    def iter_files(self, after: str = "") -> Iterator[tuple[str, str, str, UPath]]:
        """Every (source_id, root, relative path, path) under the roots whose relative path sorts
        after `after`, in that order, listed lazily; hidden files are skipped, and a relative
        path found under an earlier root shadows the same path under later ones."""
        def listing(order: int, root: str) -> Iterator[tuple[str, int, str, UPath]]:
            base = UPath(root)
            if base.is_file():
                if base.name > after:
                    yield base.name, order, str(base.parent), base
                return
            for relative, path in _walk(base, "", after, self.follow_symlinks):
                yield relative, order, root, path

        last = None
        listings = [listing(order, root) for order, root in enumerate(self.roots)]
        for relative, _, root, path in heapq.merge(*listings, key=lambda f: f[:2]):
            if relative != last:
                last = relative
                yield partition_key(relative), root, relative, path

    def iter_sources(self) -> Iterator[tuple[str, UPath]]:
        """Every (source_id, path) under the roots, hidden files skipped, in relative-path order."""
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

    def refusal(self, path: UPath) -> tuple[str, str] | None:
        """Why the file `locate` found must not be read, as (document status, reason), or None:
        a link out of its root (`outside_root`) or a size over the limit (`too_large`), known
        from the file's metadata alone."""
        root = next((r for r in self.roots if path.path == UPath(r).path or
                     path.path.startswith(UPath(r).path.rstrip("/") + "/")), None)
        if root is not None:
            outside = link_refusal(path, root, self.follow_symlinks)
            if outside:
                return OUTSIDE_ROOT, outside
        bounds = Bounds(self.follow_symlinks, self.max_file_mb)
        too_large = size_refusal(path.stat().st_size, bounds)
        return (TOO_LARGE, too_large) if too_large else None

    def read(self, source_id: str) -> bytes:
        return self.locate(source_id).read_bytes()
