"""Corpus roots and their labels: the first part of every source id.

A source's id is `{label}/{path relative to its root}` (`CorpusResource` lists them; ids that
are not valid partition keys are mapped by `resources.source_index.partition_key`). A root's
label is its folder's name (a file given as a root: the file's name, which is then the whole
id) unless the user names it, `LABEL=PATH`. Two roots never share a label: that is what keeps
two files with the same relative path under two roots apart.

A root is written as a spec string, `LABEL=PATH` (or a bare `PATH`, labelled by its name), in
`INDX_CORPUS`, on the command line and in the `CorpusResource` config.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from upath import UPath

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
    return UPath(path).name


def parse_root(spec: str) -> Root:
    """`LABEL=PATH` or `PATH` (labelled by its last component). Text before the first `=` is a
    label only when it could be one, so `/data/a=b` and `s3://b/x?k=v` stay paths."""
    label, sep, path = spec.partition("=")
    if sep and path and label_problem(label) is None and ":" not in label:
        return Root(label, path)
    return Root(default_label(spec), spec)


def parse_roots(specs: Iterable[str]) -> list[Root]:
    """The roots of `specs`, checked: every label valid, no label twice (`RootError` otherwise)."""
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
