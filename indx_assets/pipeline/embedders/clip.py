"""A CLIP-family model through `transformers` (`INDX_EMBEDDER=clip:<model directory>`): texts
and pictures in one space of one dimension, so a text query finds a photo or a scanned page.

`CLIPModel` with its processor (tokenizer and `CLIPImageProcessor`, which needs only torch and
Pillow; `open_clip` would need a torchvision that cannot be installed beside this torch).
Weights come only from the local directory, which `CLIPModel.save_pretrained` and
`CLIPProcessor.save_pretrained` fill; nothing is downloaded. Vectors are the projected text or
image features, L2-normalised (cosine similarity is then a dot product, as for every embedder).
Text longer than the model's context (77 tokens for the released CLIPs) is truncated: chunks are
sized with the model's own tokenizer, so a chunk the chain cut to fit loses nothing.
"""

import io
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indx_assets.pipeline.embedder import offline, package_version, quiet_transformers
from indx_assets.pipeline.embedders.model_dir import FromModelDirectory, model_directory

if TYPE_CHECKING:
    import numpy as np

INSTALL = ("fill a directory with CLIPModel.from_pretrained(NAME).save_pretrained(DIR) and "
           "CLIPProcessor.from_pretrained(NAME).save_pretrained(DIR) on a machine that has the model, "
           "copy DIR here and name it")


@lru_cache(maxsize=2)
def load_clip(directory: Path, device: str) -> tuple[Any, Any]:
    """The model (in eval mode) and its processor, once per process, directory and device."""
    offline()
    try:
        from transformers import CLIPModel, CLIPProcessor
    except ImportError as exc:
        raise ImportError("the clip embedder needs transformers, torch and pillow: pip install transformers torch pillow") from exc
    quiet_transformers()
    model = CLIPModel.from_pretrained(str(directory), local_files_only=True).to(device).eval()
    return model, CLIPProcessor.from_pretrained(str(directory), local_files_only=True)


def _features(output: Any) -> Any:
    """The projected features as a tensor (`get_*_features` returns a tensor or, in newer
    transformers, an output holding it as `pooler_output`)."""
    return output if hasattr(output, "norm") else output.pooler_output


@dataclass
class ClipEmbedder(FromModelDirectory):
    """A CLIP model read from `directory`; weights load on the first embed."""

    directory: Path
    batch_size: int = 32
    device: str = "cpu"
    modalities: frozenset[str] = field(default=frozenset({"text", "image"}))

    @cached_property
    def dimension(self) -> int:
        import json

        return int(json.loads((self.directory / "config.json").read_text(encoding="utf-8"))["projection_dim"])

    @property
    def model_version(self) -> str:
        return f"{self.directory.name}@transformers=={package_version('transformers')}"

    def _embed(self, items: list[Any], encode: Any) -> "np.ndarray":
        import numpy as np
        import torch

        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows = []
        with torch.inference_mode():
            for start in range(0, len(items), self.batch_size):
                features = _features(encode(items[start:start + self.batch_size]))
                rows.append(torch.nn.functional.normalize(features.float(), dim=-1).cpu().numpy())
        return np.concatenate(rows).astype(np.float32, copy=False)

    def embed_texts(self, texts: list[str]) -> "np.ndarray":
        """One unit vector per text, shape (len(texts), dimension)."""
        model, processor = load_clip(self.directory, self.device)
        context = model.config.text_config.max_position_embeddings

        def encode(batch: list[str]) -> Any:
            inputs = processor.tokenizer(batch, padding=True, truncation=True, max_length=context, return_tensors="pt")
            return model.get_text_features(**inputs.to(self.device))

        return self._embed(texts, encode)

    def embed_images(self, images: list[bytes]) -> "np.ndarray":
        """One unit vector per encoded picture, in the texts' space."""
        from PIL import Image

        model, processor = load_clip(self.directory, self.device)

        def encode(batch: list[bytes]) -> Any:
            pictures = [Image.open(io.BytesIO(data)).convert("RGB") for data in batch]
            inputs = processor.image_processor(images=pictures, return_tensors="pt")
            return model.get_image_features(pixel_values=inputs["pixel_values"].to(self.device))

        return self._embed(images, encode)


def create(argument: str) -> ClipEmbedder:
    """`INDX_EMBEDDER=clip:<model directory>`."""
    directory = model_directory(argument, "clip", "config.json", INSTALL)
    if not (directory / "tokenizer.json").is_file() or not any(
            (directory / name).is_file() for name in ("processor_config.json", "preprocessor_config.json")):
        raise ValueError(f"{directory} holds no tokenizer.json or processor config: save the CLIPProcessor beside the model; {INSTALL}")
    return ClipEmbedder(directory)
