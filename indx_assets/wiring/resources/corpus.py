"""The corpus: folders (local paths or object-store URIs) whose files are the sources.

A source's id is `{root label}/{path relative to the root}` (`roots`), so moving a whole
root keeps every identity and two roots never share an id; ids that are not valid partition
keys get the stable key of `resources.source_index.partition_key`.
"""

import os
import re
from pathlib import Path
from collections.abc import Iterator
from typing import NamedTuple

import dagster as dg
from upath import UPath

from indx_assets.pipeline.bounds import OUTSIDE_ROOT, TOO_LARGE, Bounds, is_local, link_refusal, size_refusal
from indx_assets.pipeline.roots import Root, parse_roots
from indx_assets.wiring.resources.source_index import SourceIndex, partition_key

_MAPPED_KEY = re.compile(r"~[0-9a-f]{16}$")


def _walk(
    directory: UPath, prefix: str, after: str, unlisted: dict[str, str], links: str = "inside",
    above: frozenset[str] = frozenset(), real_root: str = "",
) -> Iterator[tuple[str, UPath]]:
    """(relative path, path) of every file below `directory` that is not hidden, in the order
    of the relative paths, from the first one after `after`. A folder whose paths all sort at
    or before `after` is not listed, so a sweep resumed from a cursor lists little more than
    the page it reads. Links follow `links` (see `bounds` and `_linked_folder`); a folder that
    leads back to one `above` it is never entered (no loops). A folder that cannot be listed
    (no permission) is recorded in `unlisted` (its prefix: the reason) and skipped: its files
    are neither listed nor gone."""
    try:
        children = list(directory.iterdir())
    except (FileNotFoundError, NotADirectoryError):  # gone since its parent was listed
        return
    except OSError as exc:
        unlisted[prefix] = f"cannot list this folder: {exc.strerror or exc}"
        return
    entries = []
    for child in children:
        if child.name.startswith("."):
            continue
        relative = prefix + child.name
        is_dir = child.is_dir()
        is_link = child.is_symlink()
        if is_link and links == "never":
            continue
        if is_link and is_dir:
            way = _linked_folder(child, real_root, links)
            if way == "skip":
                continue
            if way == "refuse":  # listed as a source of its own, refused `outside_root` unread
                entries.append((relative, False, child))
                continue
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
                yield from _walk(child, key, after, unlisted, links, here, real_root)


def _linked_folder(link: UPath, real_root: str, links: str) -> str:
    """What the walk does with a linked folder: "enter", "skip" or "refuse".

    Each file gets one id, that of its path without links: a linked folder whose target the
    walk reaches anyway (inside the root, no hidden folder on the way) is skipped, its files
    listed where they are. One whose target only links reach (a hidden folder of the root) is
    entered and its files listed under the link's path. One that leads out of the root is
    entered under `all` and otherwise listed itself, to be refused as `outside_root`."""
    target = os.path.realpath(link.path)
    inside = bool(real_root) and (target == real_root or target.startswith(real_root.rstrip("/") + "/"))
    if not inside:
        return "enter" if links == "all" else "refuse"
    hidden = any(part.startswith(".") for part in Path(os.path.relpath(target, real_root)).parts if part != ".")
    return "enter" if hidden else "skip"

class Listed(NamedTuple):
    """A file of the corpus: its source id (partition key), where it is (`root` folder and
    `relative` path, as the source index records it), and `entry`, its id before key
    mapping, which orders the listing (a sweep's cursor)."""

    source_id: str
    root: str
    relative: str
    path: UPath
    entry: str

class CorpusResource(dg.ConfigurableResource):
    """Where source files are read from: one or more roots (`LABEL=PATH` or `PATH` specs)."""

    roots: list[str]
    index: str = ""
    """The corpus sensor's source index (SQLite), where mapped keys are looked up first."""
    follow_symlinks: str = Bounds.follow_symlinks
    """`inside`, `never` or `all` (`INDX_FOLLOW_SYMLINKS`, see `indx_assets.pipeline.bounds`)."""
    max_file_mb: float = Bounds.max_file_mb
    """Files larger than this are refused unread (`INDX_MAX_FILE_MB`)."""

    def labelled(self) -> list[Root]:
        """The roots with their labels (`roots.RootError` if two share one)."""
        return parse_roots(self.roots)

    def missing_roots(self) -> list[Root]:
        """Roots that are not there (an unmounted disk, a renamed folder): none of their sources
        is removed while they are missing."""
        return [r for r in self.labelled() if not UPath(r.path).exists()]

    def iter_files(self, after: str = "", unlisted: dict[str, str] | None = None) -> Iterator[Listed]:
        """Every file under the roots whose entry (`label/relative path`) sorts after `after`,
        in that order, listed lazily; hidden files are skipped. Folders that cannot be listed
        go to `unlisted` (entry prefix: reason)."""
        unlisted = {} if unlisted is None else unlisted
        # Labels hold no "/", so "label/" prefixes order the roots' listings among each other.
        for root in sorted(self.labelled(), key=lambda r: r.prefix):
            base = UPath(root.path)
            if base.is_file():
                if root.label > after:
                    yield Listed(partition_key(root.label), str(base.parent), base.name, base, root.label)
                continue
            if not (after < root.prefix or after.startswith(root.prefix)) or not base.exists():
                continue
            real_root = os.path.realpath(base.path) if is_local(base) else ""
            for entry, path in _walk(base, root.prefix, after, unlisted, self.follow_symlinks, real_root=real_root):
                yield Listed(partition_key(entry), root.path, entry[len(root.prefix):], path, entry)

    def iter_sources(self) -> Iterator[tuple[str, UPath]]:
        """Every (source_id, path) of a file under the roots, hidden files skipped, in entry
        order (a linked folder listed to be refused is no file)."""
        for listed in self.iter_files():
            if listed.path.is_file():
                yield listed.source_id, listed.path

    def _expected(self, source_id: str) -> UPath | None:
        """Where the file of an unmapped id would be (None: no root has its label)."""
        label, _, relative = source_id.partition("/")
        for root in self.labelled():
            if root.label == label:
                base = UPath(root.path)
                return base if not relative else base / relative
        return None

    def locate(self, source_id: str) -> UPath:
        path = self._expected(source_id)
        if path is not None and (path.is_file() or self._refused_folder(path)):
            return path
        if _MAPPED_KEY.search(source_id):  # a mapped key: the index knows its path, a walk finds it
            seen = SourceIndex(self.index).get([source_id]).get(source_id) if self.index else None
            if seen is not None and UPath(seen.root, seen.relative).is_file():
                return UPath(seen.root, seen.relative)
            for listed in self.iter_files():
                if listed.source_id == source_id:
                    return listed.path
        raise FileNotFoundError(f"source {source_id!r} is in none of the corpus roots {self.roots}")

    def vanished(self, source_id: str) -> bool:
        """Whether the file of `source_id` is known to be gone, so its source may be removed:
        its root is configured and present, the file is not there, and the nearest folder above
        it that exists can be listed. A missing root, an unreadable folder or a label no root
        has (roots configured elsewhere) says nothing about the file: nothing is removed."""
        try:
            self.locate(source_id)
            return False
        except FileNotFoundError:
            pass
        except OSError:  # there but unreadable: that is the file's problem, not its absence
            return False
        label = source_id.partition("/")[0]
        root = next((r for r in self.labelled() if r.label == label), None)
        if root is None or not UPath(root.path).exists():
            return False
        if _MAPPED_KEY.search(source_id):  # where the sensor last saw it, if it did
            seen = SourceIndex(self.index).get([source_id]).get(source_id) if self.index else None
            path = UPath(seen.root, seen.relative) if seen is not None else None
        else:
            path = self._expected(source_id)
        if path is None:  # a mapped key never indexed: the walk in `locate` listed every readable folder
            return True
        try:
            folder = path.parent
            while not folder.exists() and folder.path != UPath(root.path).path:
                folder = folder.parent
            next(iter(folder.iterdir()), None)
        except OSError:
            return False
        return True

    def _root_of(self, path: UPath) -> str | None:
        return next((r.path for r in self.labelled() if path.path == UPath(r.path).path or
                     path.path.startswith(UPath(r.path).path.rstrip("/") + "/")), None)

    def _refused_folder(self, path: UPath) -> bool:
        """Whether `path` is a linked folder the walk lists as a source to refuse (`_linked_folder`)."""
        root = self._root_of(path)
        if root is None or not (path.is_symlink() and path.is_dir()):
            return False
        return _linked_folder(path, os.path.realpath(UPath(root).path), self.follow_symlinks) == "refuse"

    def refusal(self, path: UPath) -> tuple[str, str] | None:
        """Why the file `locate` found must not be read, as (document status, reason), or None:
        a link out of its root (`outside_root`) or a size over the limit (`too_large`), known
        from the file's metadata alone."""
        root = self._root_of(path)
        if root is not None:
            outside = link_refusal(path, root, self.follow_symlinks)
            if outside:
                return OUTSIDE_ROOT, outside
        bounds = Bounds(self.follow_symlinks, self.max_file_mb)
        too_large = size_refusal(path.stat().st_size, bounds)
        return (TOO_LARGE, too_large) if too_large else None

    def read(self, source_id: str) -> bytes:
        return self.locate(source_id).read_bytes()
