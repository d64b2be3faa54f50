"""Shared test fixtures: where the third-party corpus and eval data live (read in place)."""

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import pytest

from indx_assets.app.runner import EVENT_LOG_STORAGE
from indx_assets.pipeline.read_and_chunk import Encoded
from indx_assets.wiring.settings import Settings

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
def cut_corpus_file(corpus: Path) -> Callable[[Path], Encoded]:
    """A corpus file read and cut with the default chain, once per session however many tests
    look at it (the corpus-wide tests share the cost of cutting it)."""
    from indx_assets.pipeline.chain import ChainConfig, load_chain
    from indx_assets.pipeline.read_and_chunk import encode_bytes

    chain = load_chain(ChainConfig())
    cache: dict[Path, Encoded] = {}

    def cut(path: Path) -> Encoded:
        if path not in cache:
            cache[path] = encode_bytes(path.read_bytes(), source_id=str(path.relative_to(corpus)), name=path.name,
                                       chain=chain)
        return cache[path]

    return cut


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    path = SHARED / "eval"
    if not path.is_dir():
        pytest.skip("../shared/eval is not present")
    return path


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """A fresh copy of the sample corpus (written by the project's generator) with its own
    data directory."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_sample_corpus import write_corpus

    write_corpus(tmp_path / "corpus")
    home = tmp_path / "indx"
    return Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                    corpus_roots=(str(tmp_path / "corpus"),))


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    """A real Dagster instance in a temporary directory, with the event log `indx` configures."""
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster"),
                              overrides={"event_log_storage": EVENT_LOG_STORAGE}) as instance:
        yield instance


@pytest.fixture(scope="session")
def small_corpus_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """`fixtures/small_corpus` ingested once a session through the Python API, as a notebook
    would: (the corpus folder, the data directory)."""
    import indx_assets
    from fixtures.small_corpus import write_small_corpus

    base = tmp_path_factory.mktemp("small-corpus")
    corpus = write_small_corpus(base)
    summary = indx_assets.ingest(corpus, home=base / "indx")
    assert summary.complete and summary.documents_by_status == {"ok": 4}, summary
    return corpus, base / "indx"
