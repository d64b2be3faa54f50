"""Upgrades the pipeline notices: everything that shapes an output is in its code version.

OCR is made unavailable for real: the first `indx` process runs with a `sitecustomize` on
PYTHONPATH that makes `import tesserocr` fail, exactly as it fails where the `ocr` extra is
not installed; the next process runs without it. The chunker-code test edits a temporary copy
of the package and loads the chain from it in a fresh interpreter.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import make_pdfs

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


def _indx(args: list[str], env: dict[str, str]) -> dict:
    done = subprocess.run([INDX, *args, "--json"], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_ocr_installed_after_an_ingest_rereads_the_scanned_pages_and_recuts_only_them(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    make_pdfs.image_only(corpus / "letter.pdf")  # page 2 is a scan of "Dear committee, ..."
    (corpus / "tides.md").write_text("# Tides\n\nSpring tides follow the full moon by a day or two.\n")
    blocker = tmp_path / "no-ocr"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCK_TESSEROCR)
    env = {**os.environ, "INDX_HOME": str(tmp_path / "indx"), "HOME": str(tmp_path)}
    env.pop("PYTHONPATH", None)
    without_ocr = {**env, "PYTHONPATH": str(blocker)}

    first = _indx(["ingest", str(corpus)], without_ocr)
    assert first["documents_by_status"] == {"ok": 2}
    assert first["pages_by_status"]["unreadable"] == 1
    assert _indx(["status"], without_ocr)["assets"]["page_outputs"]["stale"] == 0

    status = _indx(["status"], env)  # OCR is importable again: the reading ladder moved
    assert status["assets"]["page_outputs"]["stale_by_cause"] == {"code version": 2}

    second = _indx(["ingest"], env)
    assert second["pages_by_status"].get("unreadable", 0) == 0
    assert second["pages_by_status"]["ok"] == 3
    # both documents re-read; only the letter's pages changed, so only it is re-cut, re-embedded, re-written
    assert second["materializations"] == 2 + 3
    from indx_assets.wiring.resources.storage import StorageResource

    pages = StorageResource(root=str(tmp_path / "indx" / "assets")).read("page_outputs", "corpus/letter.pdf").to_pylist()
    assert pages[1]["status"] == "ok" and pages[1]["reader"] == "ocr:tesseract"
    assert "harbour wall" in pages[1]["text"]
    rows = _indx(["search", "harbour wall needs repair", "-k", "1"], env)
    assert rows[0]["source_id"] == "corpus/letter.pdf" and rows[0]["page"] == 2


def test_force_redoes_what_is_selected_regardless(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tides.md").write_text("# Tides\n\nSpring tides follow the full moon by a day or two.\n")
    env = {**os.environ, "INDX_HOME": str(tmp_path / "indx"), "HOME": str(tmp_path)}
    assert _indx(["ingest", str(corpus)], env)["materializations"] == 5
    assert _indx(["ingest"], env)["materializations"] == 0
    assert _indx(["ingest", "--force"], env)["materializations"] == 5
    assert _indx(["backfill", "--stale"], env)["materializations"] == 0
    assert _indx(["backfill", "--force", "--assets", "chunk_map"], env)["materializations"] == 1


def _fingerprint(package_parent: Path) -> str:
    """The chain fingerprint as a fresh interpreter computes it with `package_parent` first on its path."""
    code = "import indx_assets, sys; from indx_assets.pipeline.chain import load_chain; " \
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
        ("pipeline/chunkers/markdown.py", True),  # defines the markdown chunker
        ("pipeline/chunking/sentences.py", True),  # what the chunkers import from indx_assets.pipeline.chunking
        ("pipeline/chunking/split.py", False),  # the document-split service's splitter: no chunker uses it
        ("pipeline/chunkers/pdf_layout.py", True),  # a helper module the pdf chunker imports
        ("pipeline/readers/pdf_runs.py", True),  # reader-side, but the pdf chunker computes runs with it
        ("pipeline/whitespace.py", True),  # how every chunker collapses an element's spaces
        ("app/search.py", False),  # unrelated to any chunker
        ("pipeline/readers/pptx_geometry.py", False),
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
