"""The Dagster definitions' old address, `indx_assets.definitions`, named by workspace files
written before the package was layered (`python_module: indx_assets.definitions`).

The definitions live in `indx_assets.wiring.definitions`.
"""

from indx_assets.wiring.definitions import build_definitions, build_resources, defs

__all__ = ["build_definitions", "build_resources", "defs"]
