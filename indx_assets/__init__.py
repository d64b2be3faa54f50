"""indx-assets: a Dagster asset pipeline from documents to a LanceDB chunk index.

A third-party chunker imports the port from `indx_interfaces` (the `indx-interfaces`
distribution) and depends on nothing else; the port's names stay importable from here for
code written against `indx_assets`.
"""

from indx_interfaces.chunker import *  # noqa: F403 (the port's own __all__ names it)
from indx_interfaces.chunker import __all__  # noqa: F401
