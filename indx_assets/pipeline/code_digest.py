"""The code a built-in component runs, as one hash: its module and what that module imports
from the packages named, followed transitively.

Used for the chunker chain's fingerprint: a built-in chunker edited without a version bump
still changes the chunk maps it cuts, so its code (the module defining it and the modules it
reaches in `indx_assets.pipeline.chunking`, `indx_assets.pipeline.chunkers`, the PDF runs the
`pdf` chunker lays out, `indx_assets.pipeline.readers.pdf_runs`, and `indx_assets.pipeline.whitespace`)
is part of what `chunk_map`'s code
version says. Sources are read and parsed, never imported, so the digest costs
milliseconds and no heavy import; an edit outside the closure leaves it where it was. A source
is read every time but parsed once per content (`_imports_of`): the built-in chunkers share
most of their closure (the chunking library), which the chain's nine digests parsed nine
times over (`indx chunk`: 1.2 s of its start on a loaded machine).
"""

import ast
import functools
import hashlib
import importlib.util
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

#: The packages (or modules) whose modules a chunker's digest follows. `readers.pdf_runs` sits
#: on the reader side (the PDF reader keeps each page's runs) but the `pdf` chunker computes
#: runs with it for pages the reader kept none for, so its code cuts chunk maps too; and
#: `whitespace` is the rule by which the chunkers, and the HTML reader, collapse a text's spaces.
CHUNKER_PACKAGES = ("indx_assets.pipeline.chunking", "indx_assets.pipeline.chunkers", "indx_assets.pipeline.readers.pdf_runs",
                    "indx_assets.pipeline.whitespace")


def _source(module: str) -> tuple[Path, bool] | None:
    """The module's source file and whether it is a package's `__init__`; None when it has none."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin), spec.submodule_search_locations is not None


def _statements(tree: ast.AST) -> Iterable[ast.AST]:
    """Every statement of the tree, nested ones too (in functions, classes, `if`, `try`, `with`,
    `match`...): an import is a statement, so the expressions (most of a module's nodes, which
    `ast.walk` visits too) need no visit."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                todo.extend(children)


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterable[str]:
    """Every module an `import` or `from ... import` anywhere in the tree (functions too: heavy
    imports sit inside `chunk()`) may name, relative imports resolved; `from pkg import name`
    yields `pkg.name` as well, since the name may be a submodule."""
    package = module if is_package else module.rpartition(".")[0]
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


#: A line that holds the word `import`, with its parenthesised or backslash-continued rest.
_IMPORT_LINE = re.compile(rb"^[^\n]*\bimport\b(?:[ \t]*\([^)]*\)|(?:[^\n]*\\\n)*[^\n]*)", re.M)


def _import_statements(source: bytes) -> ast.AST:
    """The module's import statements as one tree. Only the lines that hold the word `import`
    are parsed, dedented (a module's full tree cost the chain's digests a seventh of a second
    at every `indx` start); when they do not parse alone (prose in a docstring, `try: import`,
    a comment holding a parenthesis) the whole source is parsed instead, so no import is
    missed. A docstring line that reads as an import may add a module: a digest that covers
    more code than it must is still right."""
    found = [m.group().strip() for m in _IMPORT_LINE.finditer(source)]
    try:
        return ast.parse(b"\n".join(found))
    except SyntaxError:
        return ast.parse(source)


@functools.lru_cache(maxsize=1024)
def _imports_of(source: bytes, module: str, is_package: bool) -> tuple[str, ...]:
    """`_imports` of a module's source, memoised by the source itself: an edit is a new key."""
    return tuple(_imports(_import_statements(source), module, is_package))


def code_digest(modules: Iterable[str], packages: Sequence[str] = CHUNKER_PACKAGES) -> str:
    """sha256 over the sources of `modules` and of every module of `packages` they reach, in name order."""
    seen: dict[str, bytes] = {}
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        found = _source(name)
        if found is None:
            continue
        path, is_package = found
        seen[name] = path.read_bytes()
        for imported in _imports_of(seen[name], name, is_package):
            if imported not in seen and any(imported == p or imported.startswith(p + ".") for p in packages):
                todo.append(imported)
    digest = hashlib.sha256()
    for name in sorted(seen):
        digest.update(name.encode() + b"\0" + hashlib.sha256(seen[name]).digest())
    return digest.hexdigest()
