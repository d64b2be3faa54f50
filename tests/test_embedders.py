"""Embedders as a port: tiny models the tests build, loaded through `INDX_EMBEDDER` exactly as a
user's model directory is (random weights: the loading and plumbing, not search quality)."""

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from embedder_models import save_tiny_clip, save_tiny_sentence_transformer
from indx_interfaces import Embedder

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.embedders.registry import EMBEDDER_ENV, EmbedderError, load_embedder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {"clip": save_tiny_clip(root / "tiny-clip"), "st": save_tiny_sentence_transformer(root / "tiny-st")}


def _png(colour: tuple[int, int, int], size: tuple[int, int] = (48, 40)) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def _use(monkeypatch: pytest.MonkeyPatch, spec: str) -> Embedder:
    monkeypatch.setenv(EMBEDDER_ENV, spec)
    return load_embedder().embedder


def _unit_rows(vectors: np.ndarray, count: int, dimension: int) -> None:
    assert vectors.shape == (count, dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_clip_model_embeds_texts_and_pictures_into_one_space(models, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = _use(monkeypatch, f"clip:{models['clip']}")
    assert isinstance(embedder, Embedder) and embedder.modalities == {"text", "image"}
    assert embedder.dimension == 24  # the projection's, not either tower's width (32)
    texts = embedder.embed_texts(["the harbour pilot", "tea and ships", "the harbour pilot"])
    pictures = embedder.embed_images([_png((200, 10, 10)), _png((10, 10, 200), (80, 20)), _png((200, 10, 10))])
    _unit_rows(np.asarray(texts), 3, 24)
    _unit_rows(np.asarray(pictures), 3, 24)
    assert np.allclose(texts[0], texts[2]) and not np.allclose(texts[0], texts[1])
    assert np.allclose(pictures[0], pictures[2]) and not np.allclose(pictures[0], pictures[1])
    assert np.allclose(embedder.embed_texts(["tea and ships"])[0], texts[1], atol=1e-5)  # alone or batched
    # the sizing tokenizer is the model's own byte-level BPE ("the" is one token, "cat" three)
    assert embedder.tokenizer.count("the cat") == 4
    assert len(embedder.embed_images([])) == 0 and len(embedder.embed_texts([])) == 0


def test_a_sentence_transformers_directory_embeds_text_sized_by_its_own_tokenizer(
        models, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = _use(monkeypatch, f"sentence-transformers:{models['st']}")
    assert embedder.modalities == {"text"} and embedder.dimension == 16
    vectors = embedder.embed_texts(["the harbour pilot", "tea", "the harbour pilot"])
    _unit_rows(np.asarray(vectors), 3, 16)
    assert np.allclose(vectors[0], vectors[2]) and not np.allclose(vectors[0], vectors[1])
    # its WordPiece vocabulary holds "harbour" whole but spells "xyz" letter by letter
    assert embedder.tokenizer.count("harbour xyz") == 4
    with pytest.raises(ValueError, match="text only"):
        embedder.embed_images([_png((1, 2, 3))])


def test_the_sizing_tokenizer_is_in_the_chain_fingerprint_and_the_identity_in_the_code_version(
        models, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EMBEDDER_ENV, raising=False)
    default = load_embedder().identity
    minilm_chain = load_chain(ChainConfig()).fingerprint
    assert default.name == "minilm" and "all-MiniLM-L6-v2" in default.model_version

    monkeypatch.setenv(EMBEDDER_ENV, f"sentence-transformers:{models['st']}")
    other = load_embedder().identity
    assert other.code_version != default.code_version and other.space != default.space
    assert load_chain(ChainConfig()).fingerprint != minilm_chain  # another tokenizer re-cuts the chunk maps

    # another model with the same tokenizer: new vectors, the same chunk maps
    twin = save_tiny_sentence_transformer(models["st"].parent / "tiny-st-seed-1", seed=1)
    st_chain = load_chain(ChainConfig()).fingerprint
    monkeypatch.setenv(EMBEDDER_ENV, f"sentence-transformers:{twin}")
    assert load_embedder().identity.weights_digest != other.weights_digest
    assert load_chain(ChainConfig()).fingerprint == st_chain


@pytest.mark.parametrize(("spec", "says"), [
    ("clip:{missing}", "save_pretrained"),
    ("sentence-transformers:{missing}", "SentenceTransformer.save"),
    ("sentence-transformers:no-such-model-package", "neither a model directory nor an installed model package"),
    ("clip:", "names no model"),
    ("e5", "names no installed embedder; installed: clip, minilm, sentence-transformers"),
])
def test_a_missing_model_fails_with_what_to_install_or_where_to_put_it(
        spec: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv(EMBEDDER_ENV, spec.format(missing=tmp_path / "empty"))
    with pytest.raises(EmbedderError, match=says):
        load_embedder()


def test_indx_names_a_bad_embedder_in_one_line_without_a_traceback(tmp_path: Path) -> None:
    env = {"INDX_HOME": str(tmp_path / "indx"), "HOME": str(tmp_path), "PATH": str(Path(sys.executable).parent),
           EMBEDDER_ENV: f"clip:{tmp_path / 'nowhere'}"}
    done = subprocess.run([str(Path(sys.executable).parent / "indx"), "search", "ships"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and f"{EMBEDDER_ENV}='clip:{tmp_path / 'nowhere'}'" in done.stderr
