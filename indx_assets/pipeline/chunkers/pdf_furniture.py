"""Page furniture: the running headers, running footers and page numbers of a PDF.

A line is furniture when it lies in the top or bottom band of the displayed page (`BAND` of
its height), shares its baseline only with other furniture (a page number in the place where
the document's page numbers run need not), and either
- reads as a page number ("12", "- 12 -", "Page 12", "12 of 40", "xiv") and is the band's
  outermost line, or runs (below), or
- runs: the same text, numbers aside, at the same height on at least `MIN_PAGES` pages
  each at most `MAX_STRIDE` pages after the one before (every page, or every other one), or
  on every page of a shorter document: a running title, "Chapter 3 · 41", a copyright line.
  A passage a document repeats on scattered pages, or an entry's label beside its title
  ("Arcane Horror   Same as in DAO"), is content, not furniture.

The `pdf` chunker lays pages out without their furniture, so a page number neither ends the
chunk above it (stretching its box to the page's foot) nor stands alone as a chunk, and a
running title is not read into the first paragraph. Nothing is lost: the page's text keeps
the furniture, and each piece of the page names it in its metadata (`page_header`,
`page_footer`).
"""

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from indx_assets.pipeline.chunkers.pdf_layout import VisualLine, visual_lines
from indx_assets.pipeline.chunking.page_numbers import PAGE_NUMBER
from indx_assets.pipeline.readers.pdf_runs import PageGeometry, Run

#: The top and bottom bands, as a fraction of the displayed page height.
BAND = 0.12
#: Pages a line must run on (in the same band, at the same height, numbers aside) to be furniture.
MIN_PAGES = 3
#: The most pages from one occurrence of a running line to the next (2: left and right pages).
MAX_STRIDE = 2

_NUMBER = re.compile(r"\d+")

BandLine = tuple[str, VisualLine]  # ("header" | "footer", the line)
#: What makes two lines the same running line: band, text with numbers as "#", height in % of the page.
Key = tuple[str, str, int]


def band_lines(geometry: PageGeometry) -> list[BandLine]:
    """The visual lines that lie wholly in the page's top or bottom band."""
    height = geometry.display_size[1]
    top, foot = BAND * height, (1 - BAND) * height
    runs = [r for r in geometry.runs if (r.y1 <= top or r.y0 >= foot) and not r.hidden]
    return [("header" if line.y1 <= top else "footer", line) for line in visual_lines(runs)]


def _key(band: str, line: VisualLine, height: float) -> Key:
    return band, _NUMBER.sub("#", line.text.lower()), round(100 * line.y0 / height)


def _runs_on(pages: list[int], need: int) -> bool:
    """Whether `pages` (ascending) hold `need` pages each at most `MAX_STRIDE` after the last."""
    if need <= 1:
        return bool(pages)
    streak = 1
    for before, page in zip(pages, pages[1:]):
        streak = streak + 1 if page - before <= MAX_STRIDE else 1
        if streak >= need:
            return True
    return False


@dataclass(frozen=True)
class Furniture:
    """The running lines of one document (`learn`), and how to take furniture off a page (`split`)."""

    running: frozenset[Key] = frozenset()
    #: the band lines `learn` found, by the `id` of their page's geometry (kept with it, so an
    #: id reused by another geometry is not taken for it): `split` does not lay them out again
    bands: dict[int, tuple[PageGeometry, list[BandLine]]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def learn(cls, pages: Iterable[tuple[int, PageGeometry]]) -> "Furniture":
        """The running lines among the band lines of these (page number, geometry) pages."""
        count = 0
        seen: dict[Key, list[int]] = defaultdict(list)
        bands: dict[int, tuple[PageGeometry, list[BandLine]]] = {}
        for number, geometry in pages:
            count += 1
            lines = band_lines(geometry)
            bands[id(geometry)] = (geometry, lines)
            for key in {_key(band, line, geometry.display_size[1]) for band, line in lines}:
                seen[key].append(number)
        if count < 2:
            return cls()
        need = min(MIN_PAGES, count)
        return cls(frozenset(key for key, numbers in seen.items() if _runs_on(sorted(numbers), need)), bands)

    def _band_lines(self, geometry: PageGeometry) -> list[BandLine]:
        known = self.bands.get(id(geometry))
        return known[1] if known is not None and known[0] is geometry else band_lines(geometry)

    def split(self, geometry: PageGeometry) -> tuple[list[Run], dict[str, list[str]]]:
        """The page's runs without its furniture, and the furniture's lines by metadata key
        (`page_header`, `page_footer`), top to bottom."""
        height = geometry.display_size[1]
        lines = self._band_lines(geometry)
        running = {id(line) for band, line in lines if _key(band, line, height) in self.running}
        # a page number that does not run must be the band's outermost line: digits of a
        # figure or of text set vertically in the margin are not the page's number
        numbers = {id(line) for band, line in lines if PAGE_NUMBER.fullmatch(line.text)
                   and (_key(band, line, height) in self.running or _outermost(band, line, lines))}
        candidates = running | numbers

        def is_furniture(line: VisualLine) -> bool:
            if id(line) in running and id(line) in numbers:
                return True  # the page number, where the document's pages keep theirs
            return id(line) in candidates and all(id(o) in candidates for _, o in lines if _same_baseline(line, o))

        found = [(band, line) for band, line in lines if is_furniture(line)]
        if not found:
            return list(geometry.runs), {}
        # a run is known by its span in the page text (layout may copy runs, never re-span them)
        dropped = {(run.start, run.end) for _, line in found for run in line.runs}
        named: dict[str, list[str]] = {}
        for band, line in sorted(found, key=lambda found_line: found_line[1].y0):
            named.setdefault(f"page_{band}", []).append(line.text)
        return [r for r in geometry.runs if (r.start, r.end) not in dropped], named


def _outermost(band: str, line: VisualLine, lines: list[BandLine]) -> bool:
    """No other line of the band lies wholly between `line` and the page's edge."""
    if band == "header":
        return not any(b == band and o.y1 <= line.y0 for b, o in lines)
    return not any(b == band and o.y0 >= line.y1 for b, o in lines)


def _same_baseline(a: VisualLine, b: VisualLine) -> bool:
    return min(a.y1, b.y1) > max(a.y0, b.y0)
