"""Peak memory of storing and reading one large source: `source_documents` then `page_outputs`.

    python bench/bench_source_memory.py [--mb 256]

Each case runs in its own process (peak RSS is per process: VmHWM) against a fresh data
directory: a baseline with a one-line file, then a binary file of `--mb` MiB (NUL bytes, so the
text reader refuses it: the case of issue 17, where 1 GiB cost 5.5 GB) and a file of words of
the same size as plain text, Markdown and HTML (one page whose text is stored; `--formats`
picks them), and `html-paragraphs`: HTML of short paragraphs (an element every 80 bytes, where
the parser's tree and the walk over it dominate). Prints each case's peak above the baseline as
a multiple of the file's size; the bound for a file under INDX_MAX_FILE_MB is 2x.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import json, re, sys
from indx_assets.wiring.definitions import build_definitions
from indx_assets.app.runner import materialize_partitions, open_instance, sync_partitions
from indx_assets.wiring.settings import Settings

settings = Settings.from_env()
instance = open_instance(settings)
sync = sync_partitions(instance, settings)
build_definitions(settings)
results = materialize_partitions(instance, settings, sync.current, selection=["source_documents", "page_outputs"])
peak = int(re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) << 10
print(json.dumps({"peak": peak, "success": all(r.success for r in results)}))
"""


_PARAGRAPH = b"<p>The harbour wall held the <b>tide</b> back, and the town slept behind it.</p>\n"


def _write(path: Path, size: int, binary: bool, paragraphs: bool = False) -> None:
    block = _PARAGRAPH * 12945 if paragraphs else b"harbour wall tide " * 58254  # about 1 MiB
    with open(path, "wb") as f:
        if binary:
            f.write(b"\x00" * 64)
        written = 0
        while written < size:
            written += f.write(block[: size - written])


def _peak(folder: Path, name: str, size: int, binary: bool, suffix: str = ".txt") -> int:
    corpus, home = folder / f"corpus-{name}", folder / f"home-{name}"
    corpus.mkdir()
    _write(corpus / f"{name}{suffix}", size, binary, paragraphs=name == "html-paragraphs")
    env = {**os.environ, "INDX_HOME": str(home), "INDX_CORPUS": str(corpus)}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["success"], done.stderr[-2000:]
    return result["peak"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--formats", default="binary,text,markdown,html",
                        help="of binary, text, markdown, html, html-paragraphs")
    args = parser.parse_args()
    size = args.mb << 20
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        baseline = _peak(folder, "baseline", 32, binary=False)
        print(f"baseline (a one-line file): peak {baseline >> 20} MiB")
        cases = {"binary": (True, ".txt"), "text": (False, ".txt"), "markdown": (False, ".md"), "html": (False, ".html"),
                 "html-paragraphs": (False, ".html")}
        for name in args.formats.split(","):
            binary, suffix = cases[name]
            peak = _peak(folder, name, size, binary, suffix)
            print(f"{name} file of {args.mb} MiB: peak {peak >> 20} MiB, "
                  f"{(peak - baseline) / size:.2f}x its size above the baseline")


if __name__ == "__main__":
    main()
