"""The embedder as a resource: the model loads once per run process, in setup."""

import dagster as dg
from pydantic import PrivateAttr

from indx_assets.pipeline.embedder import MiniLMEmbedder


class EmbedderResource(dg.ConfigurableResource):
    """all-MiniLM-L6-v2 from the installed package, batched and L2-normalised."""

    batch_size: int = 32
    _embedder: MiniLMEmbedder | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._embedder = MiniLMEmbedder(batch_size=self.batch_size)

    @property
    def embedder(self) -> MiniLMEmbedder:
        if self._embedder is None:
            self._embedder = MiniLMEmbedder(batch_size=self.batch_size)
        return self._embedder
