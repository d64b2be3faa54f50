"""The embedder's vectors against the model's own `encode` (the real all-MiniLM-L6-v2, loaded by
sentence-transformers): running it by torch alone, sorting texts by token length, batching them
and embedding repeated texts once must not move a vector."""

import numpy as np

from indx_assets.pipeline.embedder import MiniLMEmbedder, load_sentence_transformer
from indx_assets.pipeline.tokenizer import minilm_path

TEXTS = [
    "The keeper trimmed the wick every four hours.",
    "Fog horn",
    "The keeper trimmed the wick every four hours.",  # repeated: embedded once, the same vector twice
    "",
    " ".join(["Granite tower, lantern room and a clockwork that turned the lens."] * 60),  # past 256 tokens
    "Pilots board off the fairway buoy; the bar is crossed at high water only.",
    "Fog horn",
    *(f"Survey {i}: " + "masonry foundation erosion " * i for i in range(1, 40)),
]


def test_vectors_are_the_models_own_in_input_order() -> None:
    embedder = MiniLMEmbedder(batch_size=8)
    ours = embedder.embed_texts(list(TEXTS))
    theirs = load_sentence_transformer(minilm_path(), "cpu").encode(
        TEXTS, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)  # the library's own
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.array_equal(ours[0], ours[2]) and np.array_equal(ours[1], ours[6])
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_embedding_with_minilm_loads_neither_sentence_transformers_nor_transformers() -> None:
    """Their imports cost an ingest about 200 MB and seconds before its first vector; the model
    is run by torch alone (`bert_torch`)."""
    import subprocess
    import sys

    code = ("import sys; from indx_assets.pipeline.embedder import MiniLMEmbedder; MiniLMEmbedder().embed_texts(['Fog horn']); "
            "print(sorted(m for m in ('transformers', 'sentence_transformers', 'sklearn', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
