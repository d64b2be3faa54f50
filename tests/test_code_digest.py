"""The code digest of a built-in chunker (`indx_assets.code_digest`): its module and what that
module imports from the packages named, followed transitively, read from real files."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from indx_assets.pipeline.code_digest import code_digest


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    """A real package on `sys.path`: `digestpkg.a` imports `digestpkg.b` inside a function."""
    root = tmp_path / "digestpkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("def chunk():\n    from digestpkg import b\n    return b.RULE\n")
    (root / "b.py").write_text("RULE = 1\n")
    (root / "c.py").write_text("UNUSED = 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield root
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("digestpkg")]:
            del sys.modules[name]


def test_an_edit_in_the_closure_moves_the_digest_within_one_process(package: Path) -> None:
    # sources are parsed once per content: a process that digests again after an edit (a
    # long-running server reloading its definitions) must see the edit, not a remembered parse
    before = code_digest(["digestpkg.a"], packages=("digestpkg",))
    assert code_digest(["digestpkg.a"], packages=("digestpkg",)) == before
    (package / "c.py").write_text("UNUSED = 2\n")  # outside the closure
    assert code_digest(["digestpkg.a"], packages=("digestpkg",)) == before
    (package / "b.py").write_text("RULE = 2\n")  # reached through an import inside a function
    after = code_digest(["digestpkg.a"], packages=("digestpkg",))
    assert after != before
    (package / "a.py").write_text("def chunk():\n    return 1\n")  # the import gone: b leaves the closure
    (package / "b.py").write_text("RULE = 3\n")
    alone = code_digest(["digestpkg.a"], packages=("digestpkg",))
    (package / "b.py").write_text("RULE = 4\n")
    assert code_digest(["digestpkg.a"], packages=("digestpkg",)) == alone


@pytest.mark.parametrize("importer", [
    "try: from digestpkg import b\nexcept ImportError: b = None\n",  # a one-line compound statement
    "X = 1; import digestpkg.b\n",
    '"""The rule comes from b (import it lazily)."""\nfrom digestpkg import (  # the rule (see b)\n    b,\n)\n',
])
def test_an_import_however_written_keeps_its_module_in_the_closure(package: Path, importer: str) -> None:
    # only the lines holding `import` are parsed: an import they cannot show alone still counts
    (package / "a.py").write_text(importer)
    before = code_digest(["digestpkg.a"], packages=("digestpkg",))
    (package / "b.py").write_text("RULE = 2\n")
    assert code_digest(["digestpkg.a"], packages=("digestpkg",)) != before
