"""Fixtures of the operating tests: a fresh copy of the sample corpus with its own data
directory, and a real Dagster instance in a temporary directory. Import them into a test
module (`from ingest_fixtures import instance, settings`)."""

import sys
from pathlib import Path

import dagster as dg
import pytest

from indx_assets.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from make_sample_corpus import write_corpus  # noqa: E402


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    write_corpus(tmp_path / "corpus")
    home = tmp_path / "indx"
    return Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                    corpus_roots=(str(tmp_path / "corpus"),))


@pytest.fixture
def instance(tmp_path: Path):
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as instance:
        yield instance
