"""Dagster resources: the corpus, stored outputs, the chunker chain, the embedder, LanceDB, readers."""

from indx_assets.wiring.resources.chain import ChainResource
from indx_assets.wiring.resources.corpus import CorpusResource
from indx_assets.wiring.resources.embedder import EmbedderResource
from indx_assets.wiring.resources.lancedb import LanceDBResource
from indx_assets.wiring.resources.readers import ReadersResource
from indx_assets.wiring.resources.storage import StorageResource

__all__ = ["ChainResource", "CorpusResource", "EmbedderResource", "LanceDBResource", "ReadersResource", "StorageResource"]
