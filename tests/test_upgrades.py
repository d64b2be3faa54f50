"""Upgrades the pipeline notices: everything that shapes an output is in its code version.

OCR is made unavailable for real: the first `indx` process runs with a `sitecustomize` on
PYTHONPATH that makes `import tesserocr` fail, exactly as it fails where the `ocr` extra is
not installed; the next process runs without it. The chunker-code test edits a temporary copy
of the package and loads the chain from it in a fresh interpreter.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "indx_assets"
INDX = str(Path(sys.executable).parent / "indx")

BLOCK_TESSEROCR = '''\
import importlib.abc
import sys


class _NoTesserocr(importlib.abc.MetaPathFinder):
    """Behave as if the `ocr` extra were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "tesserocr" or name.startswith("tesserocr."):
            raise ImportError(f"No module named {name!r} (blocked by the test's sitecustomize)")
        return None


sys.meta_path.insert(0, _NoTesserocr())
'''


def _fingerprint(package_parent: Path) -> str:
    """The chain fingerprint as a fresh interpreter computes it with `package_parent` first on its path."""
    code = "import indx_assets, sys; from indx_assets.chain import load_chain; " \
           "assert indx_assets.__file__.startswith(sys.argv[1]), indx_assets.__file__; print(load_chain().fingerprint)"
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    env.pop("INDX_CHAIN", None)
    done = subprocess.run([sys.executable, "-c", code, str(package_parent)], env=env, capture_output=True,
                          text=True, timeout=300, cwd=package_parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("edited", "moves"),
    [
        ("chunkers/markdown.py", True),  # defines the markdown chunker
        ("chunking/split.py", True),  # what the chunkers import from indx_assets.chunking
        ("chunkers/pdf_layout.py", True),  # a helper module the pdf chunker imports
        ("search.py", False),  # unrelated to any chunker
        ("readers/pptx_geometry.py", False),
    ],
)
def test_editing_a_builtin_chunkers_code_moves_the_chain_fingerprint(tmp_path: Path, edited: str, moves: bool) -> None:
    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy / "indx_assets", ignore=shutil.ignore_patterns("__pycache__"))
    before = _fingerprint(copy)
    with open(copy / "indx_assets" / edited, "a") as f:
        f.write("\n# an edit that changes no version number\n")
    after = _fingerprint(copy)
    assert (before != after) is moves, (before, after)
