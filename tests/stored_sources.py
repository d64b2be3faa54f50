"""A source stored and read as the ingest stages store and read it, for the tests of the chunk stage."""

from pathlib import Path

from upath import UPath

from indx_assets.pipeline.readers import ReaderConfig
from indx_assets.wiring.assets import stages
from indx_assets.wiring.resources.storage import StorageResource


def stored_text(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> tuple[str, StorageResource]:
    """`text` written to `name` in `encoding`, stored (`source_documents`) and read
    (`page_outputs`) under `tmp_path`: its source id and the storage, with no run cache, so
    every read is the file's."""
    path = tmp_path / name
    path.write_text(text, encoding=encoding)
    source = f"corpus/{name}"
    storage = StorageResource(root=str(tmp_path / "assets"), run_cache_mb=0)
    stages.store_source(source, UPath(path), storage)
    stages.read_pages(source, storage, ReaderConfig())
    return source, storage
