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

from indx_assets.app.search import SearchFilters
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


def test_texts_tokenized_a_window_at_a_time_get_the_vectors_they_get_tokenized_at_once(
        models, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long document's chunks are tokenized a window at a time (bounded memory): each text
    keeps its own vector, whatever window and batch it fell in."""
    from indx_assets.pipeline.embedder import sorted_embeddings

    model = _use(monkeypatch, f"sentence-transformers:{models['st']}").model  # type: ignore[attr-defined]
    texts = [f"the harbour pilot {'x' * (i % 7)} tea {i}" for i in range(23)]
    whole = sorted_embeddings(model, texts, 4, 16, window=len(texts))
    windowed = sorted_embeddings(model, texts, 4, 16, window=5)
    _unit_rows(windowed, len(texts), 16)
    assert np.allclose(windowed, whole, atol=1e-6)
    assert len({v.tobytes() for v in windowed}) > 1


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
    (tmp_path / "indx").mkdir()  # a search looks for the data directory before it loads the model
    env = {"INDX_HOME": str(tmp_path / "indx"), "HOME": str(tmp_path), "PATH": str(Path(sys.executable).parent),
           EMBEDDER_ENV: f"clip:{tmp_path / 'nowhere'}"}
    done = subprocess.run([str(Path(sys.executable).parent / "indx"), "search", "ships"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and f"{EMBEDDER_ENV}='clip:{tmp_path / 'nowhere'}'" in done.stderr


# --- through the pipeline: a real Dagster instance and LanceDB directory ---------------------

def _ingest(instance, settings):  # the sample corpus synced and materialized (test_pipeline's helper)
    from test_pipeline import ingest

    return ingest(instance, settings)


def test_switching_the_embedder_re_embeds_re_cuts_and_rebuilds_the_table_restorably(
        instance, settings, models, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_pipeline import _blank_scan_pdf, stale_status

    from indx_assets.app.search import search_chunks
    from indx_assets.app.table_versions import restore, tags
    from indx_assets.pipeline.embedders.registry import SpaceMismatch
    from indx_assets.wiring.definitions import build_resources

    (Path(settings.corpus_roots[0]) / "scans").mkdir()
    (Path(settings.corpus_roots[0]) / "scans" / "blank.pdf").write_bytes(_blank_scan_pdf())
    scan = "corpus/scans/blank.pdf"
    monkeypatch.setenv(EMBEDDER_ENV, f"sentence-transformers:{models['st']}")
    _ingest(instance, settings)
    lancedb = build_resources(settings)["lancedb"]
    rows = lancedb.table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    assert {len(r["vector"]) for r in rows if r["vector"] is not None} == {16}
    [blank] = [r for r in rows if r["source_id"] == scan]
    assert blank["vector"] is None  # a text model, and nothing describes a blank page
    assert search_chunks(settings, "the harbour pilot", k=3)
    assert set(stale_status(instance, settings).values()) == {"FRESH"}

    monkeypatch.setenv(EMBEDDER_ENV, f"clip:{models['clip']}")
    status = stale_status(instance, settings)
    sources = instance.get_dynamic_partitions("sources")
    assert {status[(key, s)] for key in ("chunk_map", "chunk_embeddings") for s in sources} == {"STALE"}
    assert {status[(key, s)] for key in ("source_documents", "page_outputs") for s in sources} == {"FRESH"}
    with pytest.raises(SpaceMismatch, match=r"built with the embedder sentence-transformers\|tiny-st"):
        search_chunks(settings, "the harbour pilot", k=3)

    events = _ingest(instance, settings)
    assert {e.partition for e in events if e.asset_key.to_user_string() == "chunk_embeddings"} == set(sources)
    rows = lancedb.table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    assert {len(r["vector"]) for r in rows if r["vector"] is not None} == {24}
    assert {r["source_id"] for r in rows} == set(sources)
    [blank] = [r for r in rows if r["source_id"] == scan]
    assert blank["vector"] is not None and json_of(blank)["vector_source"] == "pixels"
    # the picture finds its own page first; text finds chunks in the same space
    (hit, *_) = search_chunks(settings, "", image=blank["image"], k=3)
    assert hit.source_id == scan and hit.metadata["vector_source"] == "pixels"
    assert search_chunks(settings, "the harbour pilot", k=3, mode="vector")
    assert set(stale_status(instance, settings).values()) == {"FRESH"}

    # the table of the old model was tagged before it was re-created: it can come back
    [before] = [name for name in tags(lancedb) if name.startswith("before-embedder-")]  # type: ignore[arg-type]
    monkeypatch.setenv(EMBEDDER_ENV, f"sentence-transformers:{models['st']}")
    with pytest.raises(SpaceMismatch, match=r"built with the embedder clip\|tiny-clip"):
        search_chunks(settings, "the harbour pilot", k=3)
    restore(lancedb, before)  # type: ignore[arg-type]
    assert search_chunks(settings, "the harbour pilot", k=3)


def json_of(row: dict) -> dict:
    import json

    return json.loads(row["metadata"] or "{}")


#: The corpus decks with pictures: one described by its alt text (`descr`), one by nothing.
PICTURE_DECKS = ("picture.pptx", "test-image-jpg-mime.pptx")


def _deck_settings(corpus: Path, tmp_path: Path):
    import shutil

    from indx_assets.wiring.settings import Settings

    root = tmp_path / "decks"
    root.mkdir()
    for name in PICTURE_DECKS:  # copied into the test's own folder, never into the repo
        shutil.copy(corpus / "example-docs" / name, root / name)
    home = tmp_path / "indx"
    return Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                    corpus_roots=(str(root),))


def _picture_rows(settings) -> dict[str, list[dict]]:
    from indx_assets.wiring.definitions import build_resources

    rows = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    pictures: dict[str, list[dict]] = {}
    for row in rows:
        if row["chunk_type"] == "image":
            pictures.setdefault(row["source_id"].split("/")[-1], []).append(row)
    return pictures


def test_corpus_deck_pictures_get_vectors_from_alt_text_under_a_text_model(
        corpus: Path, instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from indx_assets.app.analytics import corpus_stats
    from indx_assets.app.search import search_chunks

    monkeypatch.delenv(EMBEDDER_ENV, raising=False)  # MiniLM: text only
    settings = _deck_settings(corpus, tmp_path)
    _ingest(instance, settings)
    pictures = _picture_rows(settings)
    [described] = pictures["picture.pptx"]
    assert described["vector"] is not None and json_of(described)["vector_source"] == "alt_text"
    assert json_of(described)["alt_text"] == "python-powered.png"
    [undescribed] = pictures["test-image-jpg-mime.pptx"]  # no descr, no title, no text on its slide
    assert undescribed["vector"] is None and "vector_source" not in json_of(undescribed)
    assert corpus_stats(settings.storage_uri)["unembedded_chunks_by_type"] == {"image": 1}
    hits = search_chunks(settings, "python-powered.png", k=1, mode="vector", filters=SearchFilters(chunk_type="image"))
    assert hits[0].id == described["id"]


def _generated_deck_settings(tmp_path: Path, decks: dict[str, bytes]):
    from indx_assets.wiring.settings import Settings

    root = tmp_path / "decks"
    root.mkdir()
    for name, content in decks.items():
        (root / name).write_bytes(content)
    home = tmp_path / "indx"
    return Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                    corpus_roots=(str(root),))


def _by_slide(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["page"], (r["bbox"] or [0.0])[0]))


def test_pictures_get_vectors_from_alt_text_then_caption_then_the_text_ocr_reads_on_them(
        instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated decks: pictures of rendered text with and without alt text; pictures captioned
    by position, one side by side with another, one with only its slide's title."""
    from fixtures import make_pptx as fx

    from indx_assets.app.search import search_chunks

    monkeypatch.delenv(EMBEDDER_ENV, raising=False)  # MiniLM: text only
    settings = _generated_deck_settings(tmp_path, {"signs.pptx": fx.pictures_of_text(),
                                                   "captioned.pptx": fx.captioned_pictures()})
    _ingest(instance, settings)
    pictures = _picture_rows(settings)
    embed = load_embedder().embedder.embed_texts

    def described_by(row: dict, source: str, text: str) -> None:
        assert json_of(row)["vector_source"] == source, json_of(row)
        assert np.allclose(row["vector"], embed([text])[0], atol=1e-5), (source, text)

    unlabelled, labelled = _by_slide(pictures["signs.pptx"])
    described_by(unlabelled, "ocr", fx.SIGN_TEXT)  # nothing else describes it: the words on it
    described_by(labelled, "alt_text", fx.SIGN_ALT)  # the author's words beat the picture's own
    [hit] = search_chunks(settings, "lighthouse keeper rota", k=1, mode="vector",
                          filters=SearchFilters(chunk_type="image"))
    assert hit.id == unlabelled["id"] and hit.metadata["vector_source"] == "ocr"

    left, right, mole, untitled = _by_slide(pictures["captioned.pptx"])
    described_by(left, "caption", fx.CAPTIONS[0])  # each its own caption, not the slide's title
    described_by(right, "caption", fx.CAPTIONS[1])
    described_by(mole, "caption", fx.SHORT_CAPTION)
    described_by(untitled, "caption", fx.CAPTIONED_TITLE)  # nothing under it: the title, as before


def test_every_corpus_deck_picture_gets_a_pixel_vector_under_a_clip_model(
        corpus: Path, instance, models, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EMBEDDER_ENV, f"clip:{models['clip']}")
    settings = _deck_settings(corpus, tmp_path)
    _ingest(instance, settings)
    pictures = [row for rows in _picture_rows(settings).values() for row in rows]
    assert len(pictures) == 2
    for row in pictures:
        assert row["vector"] is not None and len(row["vector"]) == 24
        assert json_of(row)["vector_source"] == "pixels"


def test_indx_search_by_picture_finds_the_scanned_page_and_refuses_a_text_model_s_index(
        models, settings, tmp_path: Path) -> None:
    """Two real `indx` processes: an ingest and searches under the tiny CLIP, then a search with
    the default MiniLM against the CLIP-built table."""
    import json

    from test_pipeline import _blank_scan_pdf

    (Path(settings.corpus_roots[0]) / "scans").mkdir()
    (Path(settings.corpus_roots[0]) / "scans" / "blank.pdf").write_bytes(_blank_scan_pdf())
    indx = str(Path(sys.executable).parent / "indx")
    env = {"INDX_HOME": str(settings.home), "HOME": str(settings.home), "PATH": str(Path(sys.executable).parent),
           EMBEDDER_ENV: f"clip:{models['clip']}", "COLUMNS": "300"}  # typer boxes its errors: one line
    done = subprocess.run([indx, "ingest", settings.corpus_roots[0], "--json"], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    from PIL import Image

    Image.new("L", (60, 85), 200).save(tmp_path / "grey.png")  # the scan's page, smaller
    done = subprocess.run([indx, "search", "--image", str(tmp_path / "grey.png"), "--type", "image", "--json"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [hit] = json.loads(done.stdout)
    assert hit["source_id"] == "corpus/scans/blank.pdf" and hit["metadata"]["vector_source"] == "pixels"
    (tmp_path / "notes.txt").write_text("not a picture")
    done = subprocess.run([indx, "search", "--image", str(tmp_path / "notes.txt")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2 and "is not a picture" in done.stderr and "Traceback" not in done.stderr

    done = subprocess.run([indx, "search", "harbour pilot"], env={**env, EMBEDDER_ENV: "minilm"}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "built with the embedder clip|tiny-clip" in done.stderr and "INDX_EMBEDDER" in done.stderr
