"""Page furniture rules on laid-out pages built run by run (the PDF round trip is in test_pdf_chunker)."""

import pytest

from indx_assets.pipeline.chunkers.pdf_furniture import Furniture
from indx_assets.pipeline.readers.pdf_runs import PageGeometry, Run

SIZE = (600.0, 800.0)  # points; the bands are the top and bottom 96 points
BODY = "Body text of the page that is long enough to be a paragraph."


def page(*lines: tuple[str, float, float]) -> PageGeometry:
    """A page of (text, x, top) lines, 10 points tall, with a body line in the middle."""
    runs, text = [], ""
    for line, x, top in [*lines, (BODY, 50.0, 400.0)]:
        runs.append(Run(line, x, top, x + 5.0 * len(line), top + 10.0, len(text), len(text) + len(line)))
        text += line + "\n"
    return PageGeometry(tuple(runs), SIZE)


def kept(furniture: Furniture, geometry: PageGeometry) -> list[str]:
    return [run.text for run in furniture.split(geometry)[0] if run.text != BODY]


@pytest.mark.parametrize("number", ["12", "- 12 -", "Page 3 of 9", "3 / 9", "xiv"])
def test_the_outermost_footer_line_that_reads_as_a_page_number_is_furniture(number: str) -> None:
    runs, named = Furniture().split(page((number, 290.0, 770.0)))
    assert [r.text for r in runs] == [BODY] and named == {"page_footer": [number]}


@pytest.mark.parametrize("text", ["civil", "2020 results", "Figure 3"])
def test_words_are_not_page_numbers(text: str) -> None:
    assert kept(Furniture(), page((text, 290.0, 770.0))) == [text]


def test_a_number_above_the_footer_or_beside_text_is_content() -> None:
    # a figure's axis label above the page's last line, and a table cell beside its row label
    geometry = page(("40", 100.0, 730.0), ("Cancer Council", 50.0, 770.0), ("Total", 50.0, 40.0), ("7", 300.0, 40.0))
    assert kept(Furniture(), geometry) == ["40", "Cancer Council", "Total", "7"]


def test_a_line_that_runs_on_consecutive_pages_is_furniture_and_scattered_repeats_are_not() -> None:
    def report(number: int) -> PageGeometry:
        return page(("Annual Report 2025", 50.0, 30.0), (f"Chapter 2 - {number}", 400.0, 770.0))

    running = Furniture.learn((n, report(n)) for n in (4, 5, 6))
    runs, named = running.split(report(7))
    assert [r.text for r in runs] == [BODY]
    assert named == {"page_header": ["Annual Report 2025"], "page_footer": ["Chapter 2 - 7"]}
    # a passage the document repeats at the top of pages far apart stays content
    scattered = Furniture.learn((n, report(n)) for n in (4, 40, 90))
    assert kept(scattered, report(7)) == ["Annual Report 2025", "Chapter 2 - 7"]


def test_a_label_beside_an_entry_title_stays_even_when_every_page_repeats_it() -> None:
    entries = {n: page((f"Entry {chr(64 + n)}lpha", 50.0, 30.0), ("Same as before", 450.0, 30.0)) for n in (1, 2, 3)}
    furniture = Furniture.learn(entries.items())
    assert kept(furniture, entries[2]) == ["Entry Blpha", "Same as before"]


def test_a_two_page_document_repeats_its_header_on_every_page() -> None:
    pages = {n: page(("Harbour Authority", 50.0, 30.0)) for n in (1, 2)}
    assert kept(Furniture.learn(pages.items()), pages[1]) == []
    assert kept(Furniture.learn([(1, pages[1])]), pages[1]) == ["Harbour Authority"]  # once is not running
