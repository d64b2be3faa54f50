"""The built-in embedders beside MiniLM (`indx_assets.pipeline.embedder`) and the registry that
picks the one `INDX_EMBEDDER` names from the `indx.embedders` entry points."""
