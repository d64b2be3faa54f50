"""The chunker chain as a resource: discovered once per run from the installed entry points."""

import dagster as dg
from pydantic import PrivateAttr

from indx_assets.pipeline.chain import Chain, ChainConfig, load_chain


class ChainResource(dg.ConfigurableResource):
    """The chain of chunkers; `config` is JSON (or the path of a JSON file), see ChainConfig."""

    config: str = ""
    _chain: Chain | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._chain = load_chain(ChainConfig.parse(self.config))

    @property
    def chain(self) -> Chain:
        if self._chain is None:
            self._chain = load_chain(ChainConfig.parse(self.config))
        return self._chain
