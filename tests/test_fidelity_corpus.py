"""Word fidelity (`indx_assets.pipeline.fidelity`, what `indx verify` reports) of every PDF, PPTX, Word,
HTML, Markdown and text file of the shared corpus, cut with the default chain (skipped when absent).

Every page must hold no foreign word (sub/superscript notation aside) and keep at least 99 %
of its words in its chunks or its named furniture. A PDF that does not is held to what it did
when recorded in `PDF_AT_MOST` (no more foreign or lost words), so a regression fails; every
corpus PDF meets the thresholds now, so none is recorded.
"""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from indx_assets.pipeline.document import Document
from indx_assets.pipeline.fidelity import MIN_KEPT, DocumentFidelity, measure
from indx_assets.pipeline.read_and_chunk import Encoded, to_document

FORMATS = {".pdf": "pdf", ".pptx": "pptx", ".docx": "docx", ".html": "html", ".md": "markdown", ".txt": "text",
           ".csv": "sheets", ".tsv": "sheets"}
#: The fewest files of each kind the corpus holds (5 Word files; its MANIFEST.tsv the only sheet).
MIN_FILES = {"docx": 5, "sheets": 1}

#: PDFs below the thresholds: the most (foreign, lost) words they may have. None since the
#: `pdf` chunker reads formulas' sub/superscripts and accents on their line (2026-12-01: the
#: last three, fr_olap, multi-column and multi-column-2p, had 6/16, 14/27 and 5/12).
PDF_AT_MOST: dict[str, tuple[int, int]] = {}


def _files(corpus: Path, kind: str) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.is_file() and FORMATS.get(p.suffix.lower()) == kind)


def _measured(encoded: Encoded) -> DocumentFidelity:
    document: Document = to_document(encoded)
    return measure(encoded.source_id, encoded.read.pages, document.chunks)


def _failures(result: DocumentFidelity) -> str:
    lines = []
    for page in result.pages:
        if not page.passes:
            found = "; ".join(f"{e.kind} {e.word!r} at {e.locator}" for e in page.examples)
            lines.append(f"{result.source_id} page {page.page}: {page.foreign} foreign, "
                         f"{page.kept:.1%} kept ({found})")
    return "\n".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pptx", "docx", "sheets", "html", "markdown", "text"])
def test_every_page_of_the_corpus_keeps_its_words_whole(corpus: Path, cut_corpus_file: Callable[[Path], Encoded],
                                                        kind: str) -> None:
    files = _files(corpus, kind)
    assert len(files) >= MIN_FILES.get(kind, 8), f"the corpus has {len(files)} {kind} files"
    results = [_measured(cut_corpus_file(path)) for path in files]
    assert sum(r.totals()["words"] for r in results) > 500
    failures = [_failures(r) for r in results if not r.passes]
    assert not failures, "\n".join(failures)


@pytest.mark.slow
def test_corpus_pdfs_keep_their_words_no_worse_than_recorded(corpus: Path,
                                                              cut_corpus_file: Callable[[Path], Encoded]) -> None:
    files = _files(corpus, "pdf")
    assert len(files) >= 24
    docs = corpus / "example-docs"
    regressions, measured = [], {}
    for path in files:
        result = _measured(cut_corpus_file(path))
        name = str(path.relative_to(docs))
        totals = result.totals()
        measured[name] = (totals["foreign"], totals["lost"])
        at_most = PDF_AT_MOST.get(name)
        if at_most is None and not result.passes:
            regressions.append(_failures(result))
        elif at_most is not None and (totals["foreign"] > at_most[0] or totals["lost"] > at_most[1]):
            regressions.append(f"{name}: {totals['foreign']} foreign, {totals['lost']} lost words, "
                               f"recorded {at_most}\n{_failures(result)}")
    assert not regressions, "\n".join(regressions)
    assert set(PDF_AT_MOST) <= set(measured)  # a recorded file that left the corpus would pass unseen
    assert MIN_KEPT == 0.99


@pytest.mark.parametrize("kind", ["html", "markdown", "text"])
def test_a_page_measured_a_stretch_at_a_time_is_measured_as_it_is_whole(
        corpus: Path, cut_corpus_file: Callable[[Path], Encoded], kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long page whose chunks do not hold exactly its words is measured a stretch at a time
    (`fidelity._stretches`). Cut into stretches of 40 characters (so nearly every chunk's end
    is one's end), every page of the corpus whose chunks drop a word, run two together or repeat
    one is measured as it is whole: the same counts, the same words found, the same verdict."""
    from dataclasses import replace

    from indx_assets.pipeline import fidelity
    from indx_assets.pipeline.read_and_chunk import page_origins

    monkeypatch.setattr(fidelity, "STRETCH_CHARS", 40)
    stretches = []  # how many stretches each page measured so was cut into

    def counted(*args: object) -> Iterator[tuple[int, int, list[fidelity.ChunkText]]]:
        stretches.append(0)
        for stretch in cut_into(*args):
            stretches[-1] += 1
            yield stretch

    def measured(page: fidelity.PageFidelity) -> tuple[object, ...]:
        return (*(getattr(page, name) for name in fidelity.COUNTS), page.passes,
                sorted((e.kind, e.word) for e in page.examples))

    cut_into = fidelity._stretches
    monkeypatch.setattr(fidelity, "_stretches", counted)
    compared = 0
    for path in _files(corpus, kind):
        encoded = cut_corpus_file(path)
        origins = page_origins(encoded.read)
        chunks = to_document(encoded).chunks
        for page in encoded.read.pages:
            held = [c for c in chunks if c.page == page.page and c.chunk_type == "content" and " " in c.content.strip()]
            if len(page.text) <= 80 or not held:
                continue
            middle = held[len(held) // 2]
            first, _, rest = middle.content.strip().partition(" ")
            faults = {"dropped": rest, "run together": first + rest, "repeated": f"{first} {middle.content}"}
            for fault, content in faults.items():
                faulty = [replace(c, content=content) if c is middle else c for c in chunks if c.page == page.page]
                whole = fidelity.measure_page(page.page, page.text, faulty)
                stretched = fidelity.measure_page(page.page, page.text, faulty, origin=origins[page.page])
                # the same counts and words found; a word's example is where its stretch has it (a
                # word the page holds twice is shown where it was lost, not at its first place)
                assert measured(stretched) == measured(whole), f"{path.name} page {page.page}, a word {fault}"
                compared += 1
    assert compared >= 9 and sum(n > 1 for n in stretches) >= compared // 2, (compared, stretches)
