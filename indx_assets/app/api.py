"""The Python API: `ingest`, `search` and `chunk`, what `indx ingest`, `indx search` and `indx chunk` do.

Each call works on the data directory the `indx` command would use (`data_settings`), or on
the one named by `home=`; a setting of the environment (`INDX_STORAGE_URI`, `INDX_CHAIN`, …)
applies as it does to the command. The calls go through the code the command runs
(`app.ingest`, `app.search`, `pipeline.read_and_chunk`); Dagster, LanceDB and the model load
on the first call that needs them, so importing this module (or `indx_assets`) is cheap.
"""

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from indx_assets.app.ingest import IngestSummary
from indx_assets.app.search import Hit
from indx_assets.pipeline.document import Document
from indx_assets.wiring.settings import NoDataDirectory, Settings

if TYPE_CHECKING:
    from indx_assets.app.search import QueryEmbedder
    from indx_assets.pipeline.schema import SearchMode

__all__ = ["Hit", "IngestSummary", "NoDataDirectory", "chunk", "data_settings", "ingest", "search"]

PathArg = str | os.PathLike[str]


def data_settings(home: PathArg | None = None, *, creates: bool = False) -> Settings:
    """The settings of the data directory a call works on: `home` when given (as `INDX_HOME`
    would name it for the command), else the one the `indx` command finds (`$INDX_HOME`, else
    the nearest `.indx` in the current folder or its parents, else `./.indx`).

    This is the one place the API decides where its data lives: it follows the command's rule
    (`Settings.from_env`), so a call and the command in the same folder and environment read
    and write the same index. Only a call that `creates` (an ingest) may work where there is
    no data directory yet; the others raise `NoDataDirectory` saying where they looked."""
    settings = Settings.from_env(None if home is None else Path(home))
    if creates or settings.home.is_dir():
        return settings
    if home is not None:
        raise NoDataDirectory(f"no data directory at {settings.home}: nothing has been ingested there "
                              "(indx_assets.ingest(paths, home=...) creates it)")
    return settings.require_home()


def ingest(paths: PathArg | Sequence[PathArg] = (), *, home: PathArg | None = None, force: bool = False,
           batch_size: int | None = None, wait: float = 0.0) -> IngestSummary:
    """Ingest files or folders into the chunk index, as `indx ingest PATH...` does.

    Each path (a file or folder, or `LABEL=PATH` to name its root) is added to the roots that
    earlier ingests recorded; every file under every root is then indexed once, re-doing only
    what is missing or changed (everything with `force`). With no paths: the recorded roots,
    else the bundled sample corpus. The data directory is created when it does not exist.

    Raises `roots.RootError` (a `ValueError`), with nothing written, when a path is not there
    or two roots would share a label, and `home_lock.HomeLocked` when another process is
    writing the data directory for longer than `wait` seconds. A file that cannot be read is
    not an error: it is ingested with its status and named in the summary's `problems`
    (`IngestSummary.complete` says whether everything came through)."""
    from indx_assets.app.home_lock import writer_lock
    from indx_assets.app.ingest import ingest as ingest_into

    given = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    settings = data_settings(home, creates=True)
    with writer_lock(settings.home, wait):
        return ingest_into(settings, [os.fspath(p) for p in given], batch_size=batch_size, force=force)


@functools.cache
def _query_embedder(spec: str) -> "QueryEmbedder":
    """The query model `spec` (`INDX_EMBEDDER`) names, loaded once a process (seconds): a
    notebook's second search is fast."""
    from indx_assets.app.search import query_embedder

    return query_embedder(spec)


def search(query: str, *, k: int = 5, mode: "SearchMode" = "hybrid", source_prefix: str | None = None,
           chunk_type: str | None = None, page: int | None = None, expand: bool = False,
           home: PathArg | None = None) -> list[Hit]:
    """The `k` chunks that best answer `query`, best first, as `indx search` finds them.

    `mode`: `hybrid` (vector and full text, fused), `vector` or `fts`. Filters, applied before
    ranking: `source_prefix` (source ids starting with it: `docs/` for a root labelled docs),
    `chunk_type` (`content`, `table`, `image`, …), `page`. With `expand`, each hit carries its
    section. The query model loads on the first call of a process.

    Raises `ValueError` (`search.InvalidSearch`) for an empty query, a bad `k` or an unknown
    mode, and `NoDataDirectory` when there is no data directory (a search creates none)."""
    from indx_assets.app.search import SearchFilters, check_search, search_chunks
    from indx_assets.pipeline.embedders.registry import current_spec

    check_search(query, k, mode)  # before the model loads for it
    filters = SearchFilters(source_prefix=source_prefix, chunk_type=chunk_type, page=page)
    return search_chunks(data_settings(home), query, k=k, mode=mode, expand=expand, filters=filters,
                         embed=_query_embedder(current_spec()))


def chunk(path: PathArg, *, source_id: str | None = None) -> Document:
    """Read and chunk one file with the installed chunker chain, as `indx chunk FILE` does;
    nothing is stored. Ids derive from `source_id` (default: the file's name).

    A file no reader supports comes back with the status `unsupported` in its metadata (and
    no chunks), as any unreadable file comes back with its status: check
    `document.metadata["status"]`. Raises `FileNotFoundError` when there is no such file and
    `ValueError` when the chain config (`INDX_CHAIN`) is malformed."""
    from indx_assets.pipeline.chain import load_chain
    from indx_assets.pipeline.read_and_chunk import encode_file, to_document

    file = Path(path).expanduser()
    if not file.is_file():
        raise FileNotFoundError(f"{file}: no such file" + (" (it is a folder)" if file.is_dir() else ""))
    if source_id is not None and not source_id.strip():
        raise ValueError("source_id must not be empty")
    try:
        chain = load_chain()
    except ValueError as exc:
        raise ValueError(f"the chunker chain cannot be built: {exc}") from exc
    return to_document(encode_file(file, source_id=source_id, chain=chain))
