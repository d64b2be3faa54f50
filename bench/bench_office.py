"""Word and Excel benchmark: documents/s and MB/s of our reader + chunker against the plain
library walk and against `unstructured`'s partitioners, in one run.

    python bench/bench_office.py [--rounds 7] [--no-install] [--memory-rows 100000,1000000]
        [--ingest-rows 100000,1000000] [--only docx|xlsx|memory|ingest]

Files: every `.docx` in ../shared/corpus (when present) plus the project's generated report
(tests/fixtures/make_docx.py); for Excel, the generated budget workbook and a generated
20,000-row sheet (tests/fixtures/make_sheets.py). Each round, interleaved so every side sees
the same machine load:

- ours: `read_docx`/`read_xlsx` then the `docx`/`sheets` chunker with the default settings,
  caches cleared first (the guard, the open and the walk paid once, as for a fresh document);
- the plain walk: python-docx paragraphs and tables (every paragraph's and cell's text), or
  openpyxl read-only rows (every value): what any consumer of those libraries pays at least;
- `unstructured`: `partition_docx` / `partition_xlsx`, in their own venv
  (bench/.venv-peers-office, `unstructured[docx,xlsx]`, created on first run unless
  `--no-install`), offline: spaCy's `en_core_web_sm`, which unstructured downloads at first
  use, is replaced by a blank English pipeline (less work, so the ratio against it is a lower
  bound); reported as missing when it cannot run.

Prints the median documents/s and MB/s per side and the ratios ours/walk (target >= 0.5)
and ours/unstructured (target >= 2).

Then the memory of a long sheet: a generated ledger (`make_sheets.ledger`, 5 columns) of each
size in `--memory-rows` (default 100,000 and 1,000,000 rows) is read and chunked page by page
(`chunkers.sheets.stream_chunks`) in a fresh process each, which prints its peak RSS (VmHWM,
Linux); the peak should not grow with the rows (`--memory-rows ''` skips this part).

Then the memory of ingesting one: for each size in `--ingest-rows` (default 100,000 and
1,000,000), a folder holding only that ledger (as `.xlsx`, and as `.csv` with `--ingest-csv`)
goes through `indx ingest` (a fresh home) in a process of its own; its peak RSS (`wait4`'s
ru_maxrss) is printed with the ratio to the first size's (`--ingest-rows ''` skips this part).
The embedder is the default MiniLM, or with `--ingest-embedder tiny` a 2-layer, 384-wide BERT
(`tests/embedder_models.py`): vectors of MiniLM's size, embedded many times faster, for the
sizes MiniLM would take hours over on 2 cores (about 6 chunks/s, 68,000 chunks at 1,000,000 rows).
"""

import argparse
import io
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
sys.path.insert(0, str(ROOT / "tests"))
CORPUS = ROOT.parent / "shared" / "corpus"
PEERS_VENV = HERE / ".venv-peers-office"
PEER_REQUIREMENT = "unstructured[docx,xlsx]==0.27.35"


def word_files() -> list[tuple[str, bytes]]:
    from fixtures.make_docx import report

    paths = sorted(CORPUS.rglob("*.docx")) if CORPUS.is_dir() else []
    return [(p.name, p.read_bytes()) for p in paths] + [("generated-report.docx", report())]


def excel_files() -> list[tuple[str, bytes]]:
    import openpyxl
    from fixtures.make_sheets import budget

    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Ledger")
    sheet.append(["Account", "Date", "Amount", "Note"])
    for i in range(20_000):
        sheet.append([f"Account {i}", f"2026-{i % 12 + 1:02d}-01", i * 1.25, "paid" if i % 3 else "open"])
    out = io.BytesIO()
    workbook.save(out)
    return [("generated-budget.xlsx", budget()), ("generated-20000-rows.xlsx", out.getvalue())]


def ours_word(content: bytes) -> None:
    from indx_assets.pipeline.chunkers.docx import DocxChunker
    from indx_assets.pipeline.readers import ReaderConfig
    from indx_assets.pipeline.readers.docx import DOCX, read_docx

    read = read_docx(content, ReaderConfig())
    DocxChunker().chunk(content, DOCX, read.pages, parsed=read.parsed)


def walk_word(content: bytes) -> None:
    import docx

    document = docx.Document(io.BytesIO(content))
    _ = [p.text for p in document.paragraphs]
    _ = [cell.text for table in document.tables for row in table.rows for cell in row.cells]


def ours_excel(content: bytes) -> None:
    from indx_assets.pipeline.chunkers.sheets import SheetsChunker
    from indx_assets.pipeline.readers import ReaderConfig
    from indx_assets.pipeline.readers.sheets import XLSX, read_xlsx

    read = read_xlsx(content, ReaderConfig())
    SheetsChunker().chunk(content, XLSX, read.pages, parsed=read.parsed)


def walk_excel(content: bytes) -> None:
    import openpyxl

    workbook = openpyxl.load_workbook(io.BytesIO(content), read_only=True, data_only=True)
    for sheet in workbook.worksheets:
        for _ in sheet.iter_rows(values_only=True):
            pass
    workbook.close()


# -- the peer (run inside bench/.venv-peers-office) ---------------------------------------------

PEER_SCRIPT = r"""
import io, json, sys, time
from pathlib import Path
kind, rounds, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
# unstructured downloads spaCy's en_core_web_sm at first use; offline, a blank English pipeline
# with a sentencizer stands in: less work than the real model, so our ratio is a lower bound.
import spacy
import unstructured.nlp.tokenize as tokenize
blank = spacy.blank("en")
blank.add_pipe("sentencizer")
tokenize._get_nlp = lambda: blank
if kind == "docx":
    from unstructured.partition.docx import partition_docx as partition
else:
    from unstructured.partition.xlsx import partition_xlsx as partition
blobs = [Path(p).read_bytes() for p in paths]
times = []
for _ in range(rounds):
    started = time.perf_counter()
    for blob in blobs:
        partition(file=io.BytesIO(blob))
    times.append(time.perf_counter() - started)
print(json.dumps(times))
"""


def ensure_peer(install: bool) -> Path | None:
    python = PEERS_VENV / "bin" / "python"
    if python.exists():
        return python
    if not install:
        return None
    venv.create(PEERS_VENV, with_pip=True)
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", PEER_REQUIREMENT], capture_output=True, text=True)
    return python if done.returncode == 0 else None


def run_peer(python: Path | None, kind: str, files: list[tuple[str, bytes]], rounds: int, tmp: Path) -> tuple[list[float] | None, str]:
    if python is None:
        return None, "no bench/.venv-peers-office (run without --no-install)"
    paths = []
    for name, content in files:
        path = tmp / name
        path.write_bytes(content)
        paths.append(str(path))
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([str(python), "-c", PEER_SCRIPT, kind, str(rounds), *paths], capture_output=True,
                          text=True, env=env, timeout=1800)
    if done.returncode != 0:
        return None, f"unstructured failed: {done.stderr.strip().splitlines()[-1:]}"
    return json.loads(done.stdout), ""


def timed(fn: Callable[[bytes], None], files: list[tuple[str, bytes]]) -> float:
    started = time.perf_counter()
    for _, content in files:
        fn(content)
    return time.perf_counter() - started


def report(kind: str, files: list[tuple[str, bytes]], sides: dict[str, list[float]], missing: str) -> None:
    size = sum(len(c) for _, c in files) / 1e6
    print(f"\n{kind}: {len(files)} files, {size:.2f} MB")
    medians = {name: statistics.median(times) for name, times in sides.items()}
    for name, seconds in medians.items():
        print(f"  {name:14s} {len(files) / seconds:9.1f} docs/s {size / seconds:8.2f} MB/s  (median {seconds * 1000:.1f} ms)")
    print(f"  ratio ours/walk: {medians['walk'] / medians['ours']:.2f}x (target >= 0.5)")
    if "unstructured" in medians:
        print(f"  ratio ours/unstructured: {medians['unstructured'] / medians['ours']:.2f}x (target >= 2)")
    else:
        print(f"  unstructured: missing ({missing})")


MEMORY_SCRIPT = r"""
import json, re, sys, time
from pathlib import Path

def peak_kib():
    # VmHWM, the peak RSS of this program's memory: getrusage's ru_maxrss would carry over
    # the parent's peak from before the exec
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1))

content = Path(sys.argv[1]).read_bytes()
from indx_assets.pipeline.chunkers.sheets import stream_chunks
from indx_assets.pipeline.readers.sheets import XLSX
before = peak_kib()
started = time.perf_counter()
pages = chunks = characters = 0
for page, claim in stream_chunks(content, XLSX):
    pages, characters = pages + 1, characters + len(page.text)
    chunks += len(claim.pieces) if claim else 0
print(json.dumps({"pages": pages, "chunks": chunks, "characters": characters, "seconds": time.perf_counter() - started,
                  "before_kib": before, "peak_kib": peak_kib()}))
"""


def long_sheet_memory(rows: int, tmp: Path) -> dict[str, float]:
    """Peak RSS of reading and chunking a `rows`-row ledger page by page, in a fresh process."""
    from fixtures.make_sheets import ledger

    path = tmp / f"ledger-{rows}.xlsx"
    path.write_bytes(ledger(rows))
    done = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(path)], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return {"rows": rows, "file_mb": path.stat().st_size / 1e6, **json.loads(done.stdout)}


def report_memory(rows: list[int]) -> None:
    import tempfile

    print("\nlong sheet, read and chunked page by page (chunkers.sheets.stream_chunks):")
    with tempfile.TemporaryDirectory() as tmp:
        for count in rows:
            m = long_sheet_memory(count, Path(tmp))
            print(f"  {m['rows']:>9,} rows  {m['file_mb']:6.1f} MB file  {m['pages']:4d} pages {m['chunks']:7d} chunks "
                  f"{m['characters'] / 1e6:6.1f} M chars  {m['seconds']:6.1f} s  "
                  f"peak RSS {m['peak_kib'] / 1024:6.1f} MiB (before reading, the file loaded: {m['before_kib'] / 1024:.1f} MiB)")


def ingest_memory(rows: int, suffix: str, tmp: Path, embedder: str | None = None) -> dict[str, float]:
    """Peak RSS of `indx ingest` of a folder holding one `rows`-row ledger, in a process of its own."""
    import os

    from fixtures.make_sheets import ledger

    corpus, home = tmp / f"corpus-{rows}{suffix}", tmp / f"home-{rows}{suffix}"
    corpus.mkdir()
    path = corpus / f"ledger-{rows}{suffix}"
    if suffix == ".csv":
        import csv

        import openpyxl

        sheet = openpyxl.load_workbook(io.BytesIO(ledger(rows)), read_only=True).worksheets[0]
        with path.open("w", newline="") as f:
            csv.writer(f).writerows(sheet.iter_rows(values_only=True))
    else:
        path.write_bytes(ledger(rows))
    env = {**os.environ, "INDX_HOME": str(home), **({"INDX_EMBEDDER": embedder} if embedder else {})}
    indx = Path(sys.executable).with_name("indx")
    started = time.perf_counter()
    with open(tmp / "ingest.log", "w") as log:
        child = subprocess.Popen([str(indx), "ingest", "--json", str(corpus)], env=env, stdout=subprocess.PIPE,
                                 stderr=log, text=True, cwd=tmp)
        out = child.stdout.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(child.pid, 0)
    if status:
        raise SystemExit(f"indx ingest failed ({status}):\n{out[-2000:]}\n{(tmp / 'ingest.log').read_text()[-3000:]}")
    summary = json.loads(out)
    return {"rows": rows, "file_mb": path.stat().st_size / 1e6, "seconds": time.perf_counter() - started,
            "peak_kib": usage.ru_maxrss, "summary": summary}


def report_ingest(rows: list[int], suffixes: list[str], embedder: str) -> None:
    import tempfile

    spec = None
    if embedder == "tiny":
        from embedder_models import save_tiny_sentence_transformer

        models = Path(tempfile.mkdtemp(prefix="bench-office-model-"))
        spec = f"sentence-transformers:{save_tiny_sentence_transformer(models / 'tiny-384', width=384)}"
    print(f"\nembedder: {spec or 'the default (MiniLM)'}")
    for suffix in suffixes:
        print(f"\nindx ingest of a folder holding one ledger ({suffix}), peak RSS of its process:")
        first = None
        for count in rows:
            with tempfile.TemporaryDirectory() as tmp:
                m = ingest_memory(count, suffix, Path(tmp), spec)
            first = first or m["peak_kib"]
            print(f"  {m['rows']:>9,} rows  {m['file_mb']:6.1f} MB file  {m['seconds']:7.1f} s  "
                  f"{m['summary']['chunks']:>7,} chunks  peak RSS {m['peak_kib'] / 1024:7.1f} MiB  "
                  f"({m['peak_kib'] / first:.2f}x the first size's)  stages {m['summary'].get('profile')}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-install", action="store_true", help="do not create the peer venv")
    parser.add_argument("--memory-rows", default="100000,1000000",
                        help="comma-separated ledger sizes whose peak RSS to measure ('' to skip)")
    parser.add_argument("--ingest-rows", default="100000,1000000",
                        help="comma-separated ledger sizes whose `indx ingest` peak RSS to measure ('' to skip)")
    parser.add_argument("--ingest-csv", action="store_true", help="measure the ledger as .csv too")
    parser.add_argument("--ingest-embedder", choices=("minilm", "tiny"), default="minilm",
                        help="the embedder of the ingest (tiny: a 384-wide 2-layer BERT, see the docstring)")
    parser.add_argument("--only", choices=("docx", "xlsx", "memory", "ingest"), help="run one part only")
    args = parser.parse_args()
    import tempfile

    python = ensure_peer(not args.no_install) if args.only in (None, "docx", "xlsx") else None
    parts = [("docx", word_files, ours_word, walk_word), ("xlsx", excel_files, ours_excel, walk_excel)]
    for kind, make_files, ours, walk in parts:
        if args.only not in (None, kind):
            continue
        files = make_files()
        ours(files[0][1])  # warm imports and the tokenizer once, outside the timing
        walk(files[0][1])
        sides: dict[str, list[float]] = {"ours": [], "walk": []}
        for _ in range(args.rounds):
            sides["ours"].append(timed(ours, files))
            sides["walk"].append(timed(walk, files))
        with tempfile.TemporaryDirectory() as tmp:
            peer, missing = run_peer(python, kind, files, args.rounds, Path(tmp))
        if peer is not None:
            sides["unstructured"] = peer
        report(kind, files, sides, missing)
    rows = [int(r) for r in args.memory_rows.split(",") if r.strip()]
    if rows and args.only in (None, "memory"):
        report_memory(rows)
    ingest_rows = [int(r) for r in args.ingest_rows.split(",") if r.strip()]
    if ingest_rows and args.only in (None, "ingest"):
        report_ingest(ingest_rows, [".xlsx", ".csv"] if args.ingest_csv else [".xlsx"], args.ingest_embedder)


if __name__ == "__main__":
    main()
