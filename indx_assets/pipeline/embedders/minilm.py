"""The default embedder's entry point: all-MiniLM-L6-v2 from its installed package."""

from indx_assets.pipeline.embedder import MiniLMEmbedder


def create(argument: str = "") -> MiniLMEmbedder:
    """`INDX_EMBEDDER=minilm` (the default); it takes no argument."""
    if argument:
        raise ValueError(f"the minilm embedder takes no argument, got {argument!r}")
    return MiniLMEmbedder()
