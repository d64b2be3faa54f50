"""Corpus roots and their labels: the first part of every source id.

A source's id is `{label}/{path relative to its root}` (`CorpusResource` lists them; ids that
are not valid partition keys are mapped by `resources.source_index.partition_key`). A root's
label is its folder's name (a file given as a root: the file's name, which is then the whole
id) unless the user names it, `LABEL=PATH`. Two roots never share a label: that is what keeps
two files with the same relative path under two roots apart. Nor do two roots overlap (one
inside the other, or one folder under two labels): a file under both would have two ids.

A root is written as a spec string, `LABEL=PATH` (or a bare `PATH`, labelled by its name), in
`INDX_CORPUS`, on the command line and in the `CorpusResource` config.
"""

import os
from collections.abc import Iterable
from dataclasses import dataclass


#: Longest label: ids stay readable, and well inside a partition key's length.
MAX_LABEL_LENGTH = 64


class RootError(ValueError):
    """Roots that cannot be used together (a bad or repeated label): a usage error."""


def label_problem(label: str) -> str | None:
    """Why `label` cannot label a root, or None when it can."""
    if not label:
        return "it is empty"
    if "/" in label or "=" in label or "..." in label or label in (".", ".."):
        return "it holds '/', '=' or '...' or is '.' or '..'"
    if not label.isprintable() or label != label.strip():
        return "it holds control characters or leading/trailing spaces"
    if len(label) > MAX_LABEL_LENGTH:
        return f"it is longer than {MAX_LABEL_LENGTH} characters"
    return None


@dataclass(frozen=True)
class Root:
    label: str
    path: str

    @property
    def spec(self) -> str:
        return f"{self.label}={self.path}"

    @property
    def prefix(self) -> str:
        """What every source id under this root starts with."""
        return self.label + "/"

    def source_entry(self, relative: str) -> str:
        """The id of the file at `relative` under this root, before key mapping."""
        return f"{self.label}/{relative}" if relative else self.label


def default_label(path: str) -> str:
    from upath import UPath  # here, not at the top: fsspec's import is a tenth of `indx chunk`'s start

    return UPath(path).name


def parse_root(spec: str) -> Root:
    """`LABEL=PATH` or `PATH` (labelled by its last component). Text before the first `=` is a
    label only when it could be one, so `/data/a=b` and `s3://b/x?k=v` stay paths."""
    label, sep, path = spec.partition("=")
    if sep and path and label_problem(label) is None and ":" not in label:
        return Root(label, path)
    return Root(default_label(spec), spec)


def _location(path: str) -> str:
    """Where a root is, comparable with another root's: a local path made absolute with its
    links resolved (a link to a folder inside another root overlaps it), a URL as written."""
    if "://" in path:
        return path.rstrip("/")
    return os.path.realpath(os.path.expanduser(path))


def _inside(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def refuse_overlaps(roots: list[Root]) -> None:
    """`RootError` naming both roots when one is inside the other (or they are one folder):
    every file is indexed under one root only, so it has one id."""
    located = [(r, _location(r.path)) for r in roots]
    for i, (a, where_a) in enumerate(located):
        for b, where_b in located[i + 1:]:
            if _inside(where_a, where_b) or _inside(where_b, where_a):
                outer, inner = (b, a) if _inside(where_a, where_b) else (a, b)
                raise RootError(
                    f"corpus roots {outer.spec} and {inner.spec} overlap (a file under both would have two ids); "
                    f"give only one of them" + (" or `indx forget` one" if outer.label != inner.label else ""))


def parse_roots(specs: Iterable[str], overlapping: bool = False) -> list[Root]:
    """The roots of `specs`, checked: every label valid, no label twice, no root inside another
    unless `overlapping` (`indx forget` must reach roots recorded before overlaps were refused)
    (`RootError` otherwise)."""
    roots = [parse_root(s) for s in specs]
    by_label: dict[str, Root] = {}
    for root in roots:
        problem = label_problem(root.label)
        if problem:
            raise RootError(f"{root.path} cannot be labelled {root.label!r}: {problem}; name it as LABEL={root.path}")
        if root.label in by_label and by_label[root.label].path != root.path:
            raise RootError(
                f"two corpus roots are labelled {root.label!r}: {by_label[root.label].path} and {root.path} "
                f"(source ids are label/path, so they would collide); name one as OTHER={root.path}")
        by_label[root.label] = root
    if not overlapping:
        refuse_overlaps(list(by_label.values()))
    return list(by_label.values())


def unique_labels(paths: Iterable[str]) -> list[Root]:
    """Roots for `paths` labelled by their names, a repeated name suffixed `-2`, `-3`, … (for
    data directories recorded before roots had labels; a user names roots instead)."""
    roots: list[Root] = []
    taken: set[str] = set()
    for path in paths:
        base = default_label(path) or "root"
        label, n = base, 1
        while label in taken:
            n += 1
            label = f"{base}-{n}"
        taken.add(label)
        roots.append(Root(label, path))
    return roots
