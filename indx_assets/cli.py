"""The `indx` console script's old address, `indx_assets.cli:main`.

The command line lives in `indx_assets.app.cli`; environments installed before the package
was layered still run their `indx` script through this name.
"""

from indx_assets.app.cli import main

__all__ = ["main"]
