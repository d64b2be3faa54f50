"""OCR benchmark: seconds per page and character error rate, tesserocr vs the tesseract CLI.

    python bench/bench_ocr.py [--repeats 3] [--dpi 150 200]

1. Speed: the scanned PDFs of the corpus read through the real ladder (`read_document`: the
   PDF reader, then OCR of its unreadable pages at each DPI), median seconds per page over
   `--repeats` runs. Beside it, the `tesseract` command-line program (Debian `tesseract-ocr`;
   skipped when absent) on the same pages rendered the same way, with the same
   `eng.traineddata` (`--tessdata-dir`), one thread (`OMP_THREAD_LIMIT=1`), timed from
   rendering to text (a PNG file and a process per page: the CLI's way of working).
2. Accuracy: character error rate (edit distance over the reference's length, whitespace runs
   as one space) of both engines on text PDFs of the corpus rendered to images, against the
   PDF's own text layer, and on the project's generated scans against the text drawn on them.
   The text layer is stream-ordered, so on multi-column pages part of the error is reading
   order, not recognition.

Reports medians and the CLI/tesserocr ratio; there is no target yet. Needs the `ocr` extra
and the corpus in ../shared (pages that are absent are skipped).
"""

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the generated-scan fixtures and the CER definition

from fixtures.make_scans import all_scans, character_error_rate  # noqa: E402

from indx_assets.pipeline.readers import ReaderConfig, read_document  # noqa: E402
from indx_assets.pipeline.readers.ocr import _tessdata_path, engine_for  # noqa: E402

PDF_DIR = ROOT.parent / "shared" / "corpus" / "unstructured" / "example-docs" / "pdf"
SCANS = ["loremipsum-flat.pdf", "single_table.pdf", "table-multi-row-column-cells.pdf"]
#: text PDFs (file, 1-based page) whose text layer is the reference
TEXT_PAGES = [
    ("layout-parser-paper-fast.pdf", 1),
    ("layout-parser-paper-fast.pdf", 2),
    ("multi-column-2p.pdf", 1),
    ("a1977-backus-p21.pdf", 1),
    ("fake-memo.pdf", 1),
    ("DA-1p.pdf", 1),
    ("chevron-page.pdf", 1),
]


def render(path: Path, page: int, dpi: int):
    """The page as a greyscale PIL image at `dpi`, as the OCR rung renders it."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        bitmap = document[page - 1].render(scale=dpi / 72, grayscale=True)
        return bitmap.to_pil().copy()
    finally:
        document.close()


def text_layer(path: Path, page: int) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        return document[page - 1].get_textpage().get_text_range()
    finally:
        document.close()


def page_count(path: Path) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        return len(document)
    finally:
        document.close()


def cli_ocr(image, dpi: int, cli: str) -> str:
    """Text of `image` from the tesseract CLI with the same model the library uses."""
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "page.png"
        image.save(png, dpi=(dpi, dpi), compress_level=1)
        done = subprocess.run(
            [cli, str(png), "stdout", "--tessdata-dir", str(_tessdata_path()), "-l", "eng", "--psm", "3", "--dpi", str(dpi)],
            capture_output=True,
            text=True,
            check=True,
            # Debian's tesseract is built with OpenMP, the tesserocr wheel is not: one thread
            # each compares the engines rather than thread pools fighting over 2 shared cores.
            env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        )
        return done.stdout


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bench_speed(dpis: list[int], repeats: int, cli: str | None) -> None:
    print("\n## Seconds per page on the corpus scans (median of %d runs)" % repeats)
    print(f"{'file':36} {'dpi':>4} {'tesserocr s/page':>17} {'CLI s/page':>11} {'CLI/tesserocr':>14}")
    for name in SCANS:
        path = PDF_DIR / name
        if not path.is_file():
            print(f"{name:36} absent, skipped")
            continue
        content, pages = path.read_bytes(), page_count(path)
        for dpi in dpis:
            config = ReaderConfig(ocr_dpi=dpi)
            ours = median_seconds(lambda: read_document(content, "application/pdf", config), repeats) / pages
            theirs = None
            if cli:
                theirs = median_seconds(
                    lambda: [cli_ocr(render(path, p, dpi), dpi, cli) for p in range(1, pages + 1)], repeats
                ) / pages
            ratio = f"{theirs / ours:14.2f}" if theirs else f"{'-':>14}"
            shown = f"{theirs:11.2f}" if theirs else f"{'-':>11}"
            print(f"{name:36} {dpi:4d} {ours:17.2f} {shown} {ratio}")


def bench_accuracy(dpis: list[int], cli: str | None) -> None:
    engine = engine_for(ReaderConfig())
    print("\n## Character error rate against the PDF text layer (text PDFs rendered to images)")
    print(f"{'page':40} {'dpi':>4} {'tesserocr CER':>14} {'CLI CER':>8}")
    ours_all: dict[int, list[float]] = {dpi: [] for dpi in dpis}
    theirs_all: dict[int, list[float]] = {dpi: [] for dpi in dpis}
    for name, page in TEXT_PAGES:
        path = PDF_DIR / name
        if not path.is_file():
            print(f"{name}:{page} absent, skipped")
            continue
        reference = text_layer(path, page)
        for dpi in dpis:
            image = render(path, page, dpi)
            ours = character_error_rate(engine.recognize(image, dpi=dpi).text, reference)
            ours_all[dpi].append(ours)
            shown = "-"
            if cli:
                theirs = character_error_rate(cli_ocr(image, dpi, cli), reference)
                theirs_all[dpi].append(theirs)
                shown = f"{theirs:.3f}"
            print(f"{name + ':' + str(page):40} {dpi:4d} {ours:14.3f} {shown:>8}")
    for dpi in dpis:
        if ours_all[dpi]:
            line = f"median at {dpi} dpi: tesserocr {statistics.median(ours_all[dpi]):.3f}"
            if theirs_all[dpi]:
                line += f", CLI {statistics.median(theirs_all[dpi]):.3f}"
            print(line)

    print("\n## Character error rate on the generated scans (against the text drawn)")
    print(f"{'scan':20} {'tesserocr CER':>14} {'CLI CER':>8}")
    for scan in all_scans():
        buffer = io.BytesIO(scan.encode("PNG"))
        read = read_document(buffer.getvalue(), "image/png")
        ours = character_error_rate(read.content, scan.text)
        shown = f"{character_error_rate(cli_ocr(scan.image, 200, cli), scan.text):.3f}" if cli else "-"
        print(f"{scan.name:20} {ours:14.3f} {shown:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dpi", type=int, nargs="+", default=[150, 200])
    args = parser.parse_args()
    cli = shutil.which("tesseract")
    import tesserocr

    print(f"tesserocr {tesserocr.__version__} ({tesserocr.tesseract_version().splitlines()[0]}), data {_tessdata_path()}")
    if cli:
        version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        print(f"CLI: {cli} ({version}), same eng.traineddata")
    else:
        print("CLI: tesseract not installed (apt-get install tesseract-ocr to compare); library only")
    if not PDF_DIR.is_dir():
        print(f"corpus not found at {PDF_DIR}; only the generated scans are measured")
    bench_speed(args.dpi, args.repeats, cli)
    bench_accuracy(args.dpi, cli)


if __name__ == "__main__":
    main()
