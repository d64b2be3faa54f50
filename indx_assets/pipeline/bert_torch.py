"""A sentence-transformers BERT model (all-MiniLM-L6-v2) run by torch alone: no `transformers`.

Why: importing `sentence_transformers` (with `transformers`, scikit-learn, SciPy and SymPy)
costs about 200 MB of resident memory and 5 to 6 CPU seconds a process more than torch does,
for a forward pass of a few dozen lines. An ingest pays that before its first vector.

Rules:
- The vectors are the library's own for the model: word, position and token-type embeddings,
  LayerNorm, `num_hidden_layers` post-norm encoder layers (scaled dot-product attention over the
  unpadded tokens, GELU), mean pooling over the attention mask, L2 normalisation
  (`tests/test_embedder.py` holds them to `SentenceTransformer.encode`'s within 1e-5).
- Only that shape of model is accepted: a BERT `config.json`, a `modules.json` of Transformer,
  mean Pooling and optionally Normalize, weights in `model.safetensors`; anything else is refused
  (`UnsupportedModel`), never run approximately.
- The tokenizer is the model directory's `tokenizer.json`, cut at the model's `max_seq_length`
  and not padded (a batch is padded to its own longest, `pad`).
"""

import json
from pathlib import Path
from typing import Any

#: The sentence-transformers modules this runner reproduces, in order.
TRANSFORMER, POOLING, NORMALIZE = ("sentence_transformers.models." + n for n in ("Transformer", "Pooling", "Normalize"))


class UnsupportedModel(ValueError):
    """The model directory is not a mean-pooled BERT sentence-transformers model."""


class BertTokenizer:
    """The model's `tokenizer.json`, with the call and `pad` that `embedder.sorted_embeddings`
    uses: ids, token types and attention mask as lists; a batch of them as padded tensors."""

    def __init__(self, tokenizer_json: Path, max_length: int, pad_id: int = 0) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.tokenizer.no_padding()  # the file pads every text to 128; batches pad themselves
        self.max_length = max_length
        self.pad_id = pad_id

    def __call__(self, texts: list[str], truncation: bool = True, max_length: int | None = None) -> dict[str, list[list[int]]]:
        if truncation:
            self.tokenizer.enable_truncation(max_length or self.max_length)
        else:
            self.tokenizer.no_truncation()
        encodings = self.tokenizer.encode_batch(texts)
        return {"input_ids": [e.ids for e in encodings], "token_type_ids": [e.type_ids for e in encodings],
                "attention_mask": [e.attention_mask for e in encodings]}

    def pad(self, features: dict[str, list[list[int]]], return_tensors: str = "pt") -> dict[str, Any]:
        """The rows of each column padded on the right to the longest (ids with the pad id,
        the rest with 0), as int64 tensors."""
        import torch

        if return_tensors != "pt":
            raise ValueError("only torch tensors")
        longest = max((len(row) for row in features["input_ids"]), default=0)
        out = {}
        for column, rows in features.items():
            fill = self.pad_id if column == "input_ids" else 0
            out[column] = torch.tensor([row + [fill] * (longest - len(row)) for row in rows], dtype=torch.long)
        return out


class BertSentenceModel:
    """The model's forward pass (`forward(features)["sentence_embedding"]`), its tokenizer and
    `max_seq_length`: what `embedder.encode_texts` needs of a SentenceTransformer."""

    def __init__(self, directory: Path, device: str = "cpu") -> None:
        from safetensors.torch import load_file

        directory = Path(directory)
        config = _json(directory / "config.json")
        modules = [m.get("type") for m in _json(directory / "modules.json")]
        if config.get("model_type") != "bert" or modules[:2] != [TRANSFORMER, POOLING] or modules[2:] not in ([], [NORMALIZE]):
            raise UnsupportedModel(f"{directory}: not a BERT sentence-transformers model with mean pooling ({modules})")
        pooling = _json(directory / "1_Pooling" / "config.json")
        if not pooling.get("pooling_mode_mean_tokens") or any(
                v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"):
            raise UnsupportedModel(f"{directory}: pooling other than the mean of tokens ({pooling})")
        if config.get("hidden_act", "gelu") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise UnsupportedModel(f"{directory}: activation or position embedding other than BERT's own")
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_seq_length = int(_json(directory / "sentence_bert_config.json").get("max_seq_length", 512))
        weights = load_file(str(directory / "model.safetensors"), device=device)
        self.w = {k.removeprefix("bert."): v for k, v in weights.items() if not k.startswith(("pooler.", "bert.pooler."))}
        self.tokenizer = BertTokenizer(directory / "tokenizer.json", self.max_seq_length, int(config.get("pad_token_id", 0)))
        self.device = device

    def forward(self, features: dict[str, Any]) -> dict[str, Any]:
        """`sentence_embedding`: one unit vector per row of the padded batch `features`."""
        import torch
        import torch.nn.functional as F

        w, hidden, eps = self.w, self.hidden, self.eps
        ids = features["input_ids"].to(self.device)
        mask = features["attention_mask"].to(self.device)
        types = features.get("token_type_ids")
        types = torch.zeros_like(ids) if types is None else types.to(self.device)
        rows, length = ids.shape
        x = (F.embedding(ids, w["embeddings.word_embeddings.weight"])
             + F.embedding(types, w["embeddings.token_type_embeddings.weight"])
             + w["embeddings.position_embeddings.weight"][:length])
        x = F.layer_norm(x, (hidden,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        keep = mask[:, None, None, :].bool()  # attend to real tokens only
        size = hidden // self.heads

        def linear(name: str, value: Any) -> Any:
            return F.linear(value, w[name + ".weight"], w[name + ".bias"])

        def split(value: Any) -> Any:
            return value.view(rows, length, self.heads, size).transpose(1, 2)

        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (split(linear(p + "attention.self." + n, x)) for n in ("query", "key", "value"))
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=keep).transpose(1, 2).reshape(rows, length, hidden)
            x = F.layer_norm(linear(p + "attention.output.dense", context) + x, (hidden,),
                             w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
            inner = F.gelu(linear(p + "intermediate.dense", x))
            x = F.layer_norm(linear(p + "output.dense", inner) + x, (hidden,),
                             w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        weights = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return {"sentence_embedding": F.normalize(pooled, p=2, dim=1)}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise UnsupportedModel(f"{path.parent}: no {path.name}") from exc
