"""Time and peak memory of cutting one large page, as the page grows: the chunk stage's scale.

    python bench/bench_chunk_scale.py [--mb 2,8] [--rounds 3] [--cases log,words,prose,list,html,markdown,code,page-numbers,printed-pages] [--against PYTHON] [--chain JSON]

Each case is a page of `--mb` MiB, read by its reader and cut by the installed chain
(`run_chain`, as `chunk_map` cuts it), in a process of its own: plain text of `log`, lines of a
server log with no blank line (one paragraph, no sentence end: `TextSplitter` cuts it at line
ends), `words`, one paragraph of words with no punctuation and no line break, `prose`,
paragraphs of sentences, and `list`, a word list (one short line a paragraph: every line a
lead-in line); `html`, short paragraphs of HTML; `markdown`, short sections (a heading and a
paragraph with emphasis); `code`, a server log pasted into Markdown as one indented code block
(one element, cut into many pieces); `page-numbers`, a paragraph of HTML, then page numbers, each block
ending a printed page (page furniture, all named on the one chunk before them);
`printed-pages`, HTML of printed pages, each a paragraph and its page number (with
`--chain '{"options": {"html": {"sentences": true}}}'`, every sentence asks whether it runs
over a page number). Prints, per case and size, the cut's seconds (median of `--rounds`),
its seconds per MiB against the smallest size's (1.00 when the time grows with the page, 4.00
when it grows with its square at 4x the size), the peak above the process before the cut as a
multiple of the page's size, and the peak once the cut's word fidelity is measured as well
(`fidelity.measure`, which `chunk_map` takes of every cut). `--against` names another
interpreter (another tree's venv) whose cases run in the same rounds, each beside this tree's.
`--chain` is a chain config (`INDX_CHAIN`) for both, such as an overlap:
`'{"options": {"text": {"overlap": 100}}}'`.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import json, re, sys, time
from pathlib import Path
from indx_assets.pipeline.chain import load_chain
from indx_assets.pipeline.chain_runner import run_chain
from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.readers import read_document_file

def status(key):
    return int(re.search(key + r":\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) << 10

path, media_type = Path(sys.argv[1]), sys.argv[2]
chain = load_chain()
with open(path, "rb") as f:
    read = read_document_file(f, media_type)
content = path.read_bytes()
run_chain(chain, b"", "text/plain", (PageOutput(page=1, text="A line to load the tokenizer.", status="ok"),))
open("/proc/self/clear_refs", "w").write("5")  # VmHWM from here, the tokenizer loaded
before, start = status("VmRSS"), time.perf_counter()
cut = run_chain(chain, content, media_type, read.pages, read.parsed)
seconds = time.perf_counter() - start
peak = status("VmHWM") - before
from types import SimpleNamespace
from indx_assets.pipeline.fidelity import measure
chunks = [SimpleNamespace(page=m.page, locator=str(i), chunk_type=m.piece.chunk_type or "content",
                          content=m.piece.text or "", metadata=m.piece.metadata) for i, m in enumerate(cut.chunks)]
measure(path.name, read.pages, chunks)
print(json.dumps({"seconds": seconds, "peak": peak, "measured": status("VmHWM") - before, "chunks": len(cut.chunks)}))
"""


def _write(path: Path, case: str, size: int) -> None:
    rng = random.Random(7)
    with open(path, "w") as f:
        written = 0
        while written < size:
            if case == "log":
                line = (f"2026-12-01 12:{rng.randrange(60):02d}:{rng.randrange(60):02d} 10.0.{rng.randrange(256)}."
                        f"{rng.randrange(256)} GET /harbour/wall?tide={rng.randrange(10000)} 200 {rng.randrange(99999)}\n")
            elif case == "words":
                line = "harbour wall tide " * 64
            elif case == "html":
                line = "<p>The harbour wall held the <b>tide</b> back, and the town slept.</p>\n"
            elif case == "page-numbers":  # after one paragraph: a page of page numbers alone is text
                line = f'<p style="page-break-after: always">- {rng.randrange(1, 1000)} -</p>\n' if written \
                    else "<p>The harbour log, printed a page a day.</p>\n"
            elif case == "printed-pages":
                number = written // 200 % 9999 + 1  # a page number has at most 4 digits
                line = (f"<p>The harbour wall held the tide back. The town slept behind it. Page {number} ends.</p>"
                        f'<p style="page-break-after: always">{number}</p>\n')
            elif case == "markdown":
                line = "## The harbour\n\nThe harbour wall held the *tide* back, and the boats rode at anchor.\n\n"
            elif case == "code":  # a log pasted into Markdown as one indented code block
                line = f"    2026-12-01 12:{rng.randrange(60):02d}:{rng.randrange(60):02d} GET /harbour/wall 200\n"
            elif case == "list":
                line = f"{rng.choice(('harbour', 'anchor', 'tide', 'pilot', 'buoy'))}{rng.randrange(10**6)}\n\n"
            else:
                line = "The harbour wall held the tide back. The town slept behind it, and the boats rode at anchor.\n\n"
            written += f.write(line[: size - written])


def _run(python: str, path: Path, chain: str) -> dict:
    # run in the file's folder: `-c` puts the working directory first on the path
    media_type = {".html": "text/html", ".md": "text/markdown"}.get(path.suffix, "text/plain")
    done = subprocess.run([python, "-c", PROBE, str(path), media_type], cwd=path.parent, capture_output=True, text=True,
                          check=True, env={**os.environ, "INDX_CHAIN": chain})
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", default="2,8", help="page sizes in MiB, smallest first")
    parser.add_argument("--cases", default="log,words,prose,list,html,markdown")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", help="another interpreter whose cases run beside this one's")
    parser.add_argument("--chain", default="", help="a chain config (INDX_CHAIN) for both")
    args = parser.parse_args()
    sizes = [int(mb) for mb in args.mb.split(",")]
    pythons = {"this tree": sys.executable, **({args.against: args.against} if args.against else {})}
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases.split(","):
            per_mib: dict[str, float] = {}
            for mb in sizes:
                path = Path(tmp) / f"{case}-{mb}.{ {'html': 'html', 'page-numbers': 'html', 'printed-pages': 'html', 'markdown': 'md', 'code': 'md'}.get(case, 'txt')}"
                _write(path, case, mb << 20)
                runs: dict[str, list[dict]] = {name: [] for name in pythons}
                for _ in range(args.rounds):
                    for name, python in pythons.items():
                        runs[name].append(_run(python, path, args.chain))
                for name, results in runs.items():
                    seconds = statistics.median(r["seconds"] for r in results)
                    peak = statistics.median(r["peak"] for r in results) / (mb << 20)
                    measured = statistics.median(r["measured"] for r in results) / (mb << 20)
                    per_mib.setdefault(name, seconds / mb)
                    print(f"{case:6s} {mb:4d} MiB  {name:>12.12s}: {seconds:8.2f} s, per MiB x{seconds / mb / per_mib[name]:5.2f}"
                          f" the {sizes[0]} MiB page's, peak {peak:6.2f}x the page ({measured:6.2f}x measured),"
                          f" {results[0]['chunks']:,} chunks",
                          flush=True)
                if args.against:
                    ours, theirs = (statistics.median(r["seconds"] for r in runs[n]) for n in pythons)
                    print(f"{case:6s} {mb:4d} MiB  this tree / {args.against}: {ours / theirs:.2f}x the time", flush=True)


if __name__ == "__main__":
    main()
