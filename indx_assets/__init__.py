"""indx-assets: a Dagster asset pipeline from documents to a LanceDB chunk index.

The Python API (`indx_assets.app.api`): `ingest(paths) -> IngestSummary`,
`search(query) -> list[Hit]` and `chunk(path) -> Document`, on the data directory the `indx`
command uses. They load on first use (module `__getattr__`): importing `indx_assets` imports
neither torch nor Dagster.

A third-party chunker imports the port from `indx_interfaces` (the `indx-interfaces`
distribution) and depends on nothing else; the port's names stay importable from here for
code written against `indx_assets`.
"""

from typing import TYPE_CHECKING, Any

from indx_interfaces.chunker import *  # noqa: F403 (the port's own __all__ names it)
from indx_interfaces.chunker import __all__ as _port_names

if TYPE_CHECKING:
    from indx_assets.app.api import Hit, IngestSummary, NoDataDirectory, chunk, ingest, search
    from indx_assets.pipeline.document import Document

#: The API's names, each with the module it is loaded from on first use.
_LAZY = {
    "ingest": "indx_assets.app.api",
    "search": "indx_assets.app.api",
    "chunk": "indx_assets.app.api",
    "Hit": "indx_assets.app.api",
    "IngestSummary": "indx_assets.app.api",
    "NoDataDirectory": "indx_assets.app.api",
    "Document": "indx_assets.pipeline.document",
}

__all__ = [*_port_names, *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # loaded once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
