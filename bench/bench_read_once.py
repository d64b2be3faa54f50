"""Read once, cut once: a batched ingest of N PDFs, pages loaded and documents opened per
document, and wall time, against the code of another checkout in the same run.

    python bench/bench_read_once.py --baseline-src ../before [--docs 100] [--rounds 3] [--full]

`--baseline-src` is a source tree of the code to compare with, in this package layout (the
installed entry points name its chunker modules; e.g. `git worktree add ../before main`); each round ingests the same generated PDFs (text pages, 1 to 8 each: reports,
a two-column article, a table, an invoice) from an empty data directory once with each code,
in its own subprocess, the two interleaved. PDFium opens and page loads are counted by wrapping
pypdfium2's `PdfDocument` in the worker (instrumentation only, the same for both codes). By
default the run stops after `chunk_map` (reading and cutting, where the two differ); `--full`
adds embedding and the LanceDB write. Printed: medians over the rounds and the ratio after /
before.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def write_corpus(root: Path, n: int) -> int:
    """`n` generated text PDFs under `root`; their total page count."""
    import pypdfium2
    from fixtures import make_pdfs as fx

    root.mkdir(parents=True)
    makers = [lambda p, i: fx.paged_report(p, pages=1 + i % 8), lambda p, i: fx.two_column(p),
              lambda p, i: fx.paged_report(p, pages=1 + (i * 3) % 8), lambda p, i: fx.table(p),
              lambda p, i: fx.invoice(p)]
    pages = 0
    for i in range(n):
        path = root / f"doc-{i:04d}.pdf"
        makers[i % len(makers)](path, i)
        document = pypdfium2.PdfDocument(path)
        pages += len(document)
        document.close()
    return pages


def worker(corpus: str, home: str, full: bool) -> None:
    """Ingest `corpus` into `home` with whichever `indx_assets` is importable; print the counts."""
    import pypdfium2

    counts = {"opened": 0, "loaded": 0}
    opened, loaded = pypdfium2.PdfDocument.__init__, pypdfium2.PdfDocument.get_page

    def counting_init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened(self, *args, **kwargs)
        counts["opened"] += 1

    def counting_get_page(self, index):  # type: ignore[no-untyped-def]
        counts["loaded"] += 1
        return loaded(self, index)

    pypdfium2.PdfDocument.__init__ = counting_init  # type: ignore[method-assign]
    pypdfium2.PdfDocument.get_page = counting_get_page  # type: ignore[method-assign]

    import indx_assets

    from indx_assets.app import runner
    from indx_assets.pipeline.chain import load_chain
    from indx_assets.wiring.settings import Settings

    # the installed entry points name the chunkers' modules: a tree of another package layout
    # would be cut by this tree's chunkers (or by none)
    tree = Path(indx_assets.__file__).parent
    chain = load_chain()
    strays = [link.name for link in chain.links
              if not Path(sys.modules[type(link.chunker).__module__].__file__ or "").is_relative_to(tree)]
    if strays or "pdf" not in chain.names:
        raise SystemExit(f"the chain's chunkers {strays or chain.names} are not {tree}'s: compare trees of one package layout")
    if full:
        from indx_assets.pipeline.embedder import MiniLMEmbedder

        MiniLMEmbedder().embed_texts(["warm up"])  # the model load is not part of the measurement
    settings = Settings(home=Path(home), storage_uri=str(Path(home) / "assets"), lancedb_uri=str(Path(home) / "lancedb"),
                        corpus_roots=(corpus,))
    selection = None if full else ["source_documents", "page_outputs", "chunk_map"]
    with runner.open_instance(settings) as instance:
        started = time.perf_counter()
        sync = runner.sync_partitions(instance, settings)
        results = runner.materialize_partitions(instance, settings, sync.current, selection=selection)
        wall = time.perf_counter() - started
    assert all(r.success for r in results), "a run failed"
    print(json.dumps({"wall": wall, **counts, "code": str(Path(indx_assets.__file__).parent)}))


def run(src: Path | None, corpus: Path, home: Path, full: bool) -> dict:
    env = dict(os.environ)
    if src is not None:  # that tree's indx_assets comes first on the path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH", "")]))
    command = [sys.executable, __file__, "--worker", str(corpus), str(home), *(["--full"] if full else [])]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"worker failed ({src or 'this tree'}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-src", type=Path, help="a source tree of the code to compare with")
    parser.add_argument("--full", action="store_true", help="embed and write the table too")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker, args.full)
        return

    contenders = {"after": None, **({"before": args.baseline_src.resolve()} if args.baseline_src else {})}
    measured: dict[str, list[dict]] = {name: [] for name in contenders}
    with tempfile.TemporaryDirectory() as tmp:
        pages = write_corpus(Path(tmp) / "pdfs", args.docs)
        for r in range(args.rounds):
            for name, src in (contenders.items() if r % 2 == 0 else reversed(list(contenders.items()))):
                result = run(src, Path(tmp) / "pdfs", Path(tmp) / f"{name}-{r}", args.full)
                measured[name].append(result)
                print(f"round {r + 1} {name}: {result['wall']:.2f} s, {result['opened']} opens, "
                      f"{result['loaded']} page loads ({result['code']})", file=sys.stderr)
    stages = "every stage" if args.full else "source_documents + page_outputs + chunk_map"
    print(f"{args.docs} PDFs, {pages} pages, one batch of {min(args.docs, 100)}, {stages}, {args.rounds} rounds (medians)")
    walls = {}
    for name, results in measured.items():
        walls[name] = statistics.median(r["wall"] for r in results)
        opened = statistics.median(r["opened"] for r in results) / args.docs
        loaded = statistics.median(r["loaded"] for r in results) / pages
        print(f"{name:>6}: wall {walls[name]:7.2f} s; per document {opened:.2f} opens; per page {loaded:.2f} loads")
    if "before" in walls:
        print(f"wall after / before: {walls['after'] / walls['before']:.2f}x")


if __name__ == "__main__":
    main()
