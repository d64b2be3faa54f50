"""Shared test fixtures: where the third-party corpus and eval data live (read in place)."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "unstructured"
SAMPLE = ROOT / "data" / "sample"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """`../shared/corpus/unstructured`; tests that need it skip cleanly when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    path = SHARED / "eval"
    if not path.is_dir():
        pytest.skip("../shared/eval is not present")
    return path
