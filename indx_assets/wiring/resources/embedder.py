"""The embedder as a resource: the one `INDX_EMBEDDER` names (`pipeline.embedders.registry`);
its model loads once per run process, on the first embed."""

import dagster as dg

from indx_assets.pipeline.embedders.registry import LoadedEmbedder, load_embedder
from indx_interfaces import Embedder


class EmbedderResource(dg.ConfigurableResource):
    """`spec` names the embedder as `INDX_EMBEDDER` does; empty means `INDX_EMBEDDER` itself."""

    spec: str = ""

    @property
    def loaded(self) -> LoadedEmbedder:
        return load_embedder(self.spec or None)

    @property
    def embedder(self) -> Embedder:
        return self.loaded.embedder
