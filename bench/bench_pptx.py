"""PowerPoint benchmark: slides per second, our reader + `pptx` chunker vs a plain python-pptx walk.

    python bench/bench_pptx.py [--rounds 15]

Corpus: every `.pptx` in ../shared/corpus/unstructured/example-docs (and `language-docs/`),
plus the project's generated fixture deck (tests/fixtures/make_pptx.py). Each round, for
every file and interleaved so both sides see the same machine load:

- ours: `read_pptx` then `PptxChunker().chunk` on the same bytes, with the deck cache cleared
  first (so the round pays for the guard, the open and the walk once, as a fresh document
  does; the chunker reuses the reader's open, as it does in a real run);
- the floor: `Presentation(...)` and a walk over every shape (groups recursed) reading its
  frame, its text, every table cell's text and every picture's bytes: what any python-pptx
  consumer pays at least.

Prints the median slides/s of each side over the rounds and the ratio ours/floor (target:
at least 0.5), plus the median share of our time spent in the OOXML guard.
"""

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fixtures.make_pptx import deck  # noqa: E402

from indx_assets.pipeline.chunkers.pptx import PptxChunker  # noqa: E402
from indx_assets.pipeline.readers import ReaderConfig  # noqa: E402
from indx_assets.pipeline.readers.ooxml_guard import verified_package  # noqa: E402
from indx_assets.pipeline.readers.pptx import PPTX, read_pptx  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "unstructured" / "example-docs"


def corpus_files() -> list[tuple[str, bytes]]:
    paths = sorted(CORPUS.glob("*.pptx")) + sorted((CORPUS / "language-docs").glob("*.pptx"))
    return [(p.name, p.read_bytes()) for p in paths] + [("generated-fixture.pptx", deck())]


def ours(content: bytes) -> int:
    read = read_pptx(content, ReaderConfig())
    PptxChunker().chunk(content, PPTX, read.pages, parsed=read.parsed)
    return len(read.pages)


def _walk(shapes) -> None:  # type: ignore[no-untyped-def]
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    for shape in shapes:
        _ = (shape.left, shape.top, shape.width, shape.height)
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            _walk(shape.shapes)
        elif shape.has_text_frame:
            _ = shape.text_frame.text
        elif getattr(shape, "has_table", False) and shape.has_table:
            _ = [cell.text for row in shape.table.rows for cell in row.cells]
        elif shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
            try:
                _ = shape.image.blob
            except (ValueError, KeyError):
                pass  # a linked picture has no bytes


def floor(content: bytes) -> int:
    from pptx import Presentation

    presentation = Presentation(io.BytesIO(content))
    slides = list(presentation.slides)
    for slide in slides:
        _walk(slide.shapes)
    return len(slides)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    files = corpus_files()
    usable = []
    for name, content in files:
        try:
            slides = floor(content)
        except Exception as exc:  # the floor cannot open it: nothing to compare
            print(f"skipped {name}: python-pptx cannot open it ({type(exc).__name__})")
            continue
        if ours(content) != slides:
            print(f"note: {name}: slide counts differ")
        usable.append((name, content, slides))
    total_slides = sum(s for _, _, s in usable)
    print(f"{len(usable)} files, {total_slides} slides, {args.rounds} rounds")
    rates: dict[str, list[float]] = {"ours": [], "floor": []}
    guard_share: list[float] = []
    per_file: dict[str, list[float]] = {name: [] for name, _, _ in usable}
    for _ in range(args.rounds):
        spent = {"ours": 0.0, "floor": 0.0}
        guard = 0.0
        for name, content, _slides in usable:
            t0 = time.perf_counter()
            floor(content)
            t1 = time.perf_counter()
            ours(content)
            t2 = time.perf_counter()
            verified_package(content)
            t3 = time.perf_counter()
            spent["floor"] += t1 - t0
            spent["ours"] += t2 - t1
            guard += t3 - t2
            per_file[name].append((t2 - t1) / (t1 - t0))
        for side in rates:
            rates[side].append(total_slides / spent[side])
        guard_share.append(guard / spent["ours"])
    ours_rate, floor_rate = statistics.median(rates["ours"]), statistics.median(rates["floor"])
    print(f"{'file':36} {'median time ours/floor':>24}")
    for name, ratios in per_file.items():
        print(f"{name:36} {statistics.median(ratios):>24.2f}")
    print(f"ours  (guard + read_pptx + pptx chunker): {ours_rate:8.1f} slides/s (median of {args.rounds} rounds)")
    print(f"floor (python-pptx open + shape walk):    {floor_rate:8.1f} slides/s")
    print(f"ratio ours/floor: {ours_rate / floor_rate:.2f} (target >= 0.5)")
    print(f"share of our time in the OOXML guard: {statistics.median(guard_share):.0%}")


if __name__ == "__main__":
    main()
