"""Tiny randomly initialised models, built and saved by the tests, for loading through
`INDX_EMBEDDER` exactly as a user's model directory is: a CLIP (text and image) and a BERT
sentence-transformer. Random weights prove the loading and the plumbing, not search quality."""

import json
from pathlib import Path

WORDS = ["the", "and", "of", "to", "in", "is", "ships", "harbour", "pilot", "tea", "page", "scan", "picture"]


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-to-character table, which CLIP's byte-level BPE vocabulary is written in."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, extra = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + extra)
            extra += 1
    return dict(zip(bs, map(chr, cs), strict=True))


def save_tiny_clip(directory: Path, seed: int = 0, projection_dim: int = 24) -> Path:
    """A CLIP of two 32-wide layers a side (24-float vectors, 32-pixel pictures) with its
    processor, saved as `save_pretrained` saves a real one."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel, CLIPProcessor, CLIPTokenizerFast

    chars = list(_bytes_to_unicode().values())
    vocab: dict[str, int] = {}
    for token in chars + [c + "</w>" for c in chars]:
        vocab.setdefault(token, len(vocab))
    merges = [("t", "h"), ("th", "e</w>"), ("a", "n"), ("an", "d</w>")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab["<|startoftext|>"], vocab["<|endoftext|>"] = len(vocab), len(vocab) + 1
    tokenizer = CLIPTokenizerFast(vocab=vocab, merges=merges)
    torch.manual_seed(seed)
    special = {"bos_token_id": vocab["<|startoftext|>"], "eos_token_id": vocab["<|endoftext|>"],
               "pad_token_id": vocab["<|endoftext|>"]}
    config = CLIPConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 77, **special},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 8},
        projection_dim=projection_dim,
    )
    images = CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    CLIPModel(config).eval().save_pretrained(directory)
    CLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(directory)
    return directory


def save_tiny_sentence_transformer(directory: Path, seed: int = 0, width: int = 16) -> Path:
    """A two-layer, `width`-wide BERT with a WordPiece vocabulary of a few words and every ASCII
    letter, mean-pooled into `width`-float vectors, saved as `SentenceTransformer.save` saves one
    (384 wide, its vectors are MiniLM's size at a fraction of its cost: `bench_office --only ingest`)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    bert = directory.parent / f"{directory.name}-bert"
    bert.mkdir(parents=True, exist_ok=True)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *letters, *("##" + c for c in letters)]
    BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)}).save_pretrained(bert)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=width, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=128)
    BertModel(config).eval().save_pretrained(bert)
    transformer = Transformer(str(bert), max_seq_length=128)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(directory))
    json.loads((directory / "modules.json").read_text())  # saved whole
    return directory
