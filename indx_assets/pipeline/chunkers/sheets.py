"""The `sheets` chunker: each table region of a sheet (Excel, CSV, TSV) cut into table chunks.

It reuses the spreadsheet readers' own sheet model (`indx_assets.pipeline.readers.sheets.sheets_of`,
handed over as the read's parsed form when the reader just ran),
so every region's offsets in the page text are known exactly. Each region is a `Table` with
its HTML (first row in `<thead>`); the chunking library keeps a region that fits the token
budget whole and otherwise splits it into chunks of whole rows, each continuation starting
with the header row, so a number in a cell is never split. Hidden sheets, rows and columns
are not in the page text, so no chunk holds them. If the model disagrees with the page text
(another reader won the page) the page is declined. `stream_chunks` reads and cuts a
spreadsheet one page at a time (a long sheet's pages, see `readers.sheets.PAGE_CHARS`), for
a caller that hands each page on before reading the next.
"""

import csv
from collections.abc import Iterator
from typing import Any

from indx_interfaces import PageChunks, PageOutput

from indx_assets.pipeline.chunkers.base import ChunkerSettings, StructuredProvider, StructuredTextChunker, page_pieces
from indx_assets.pipeline.chunking.elements import Element, Table
from indx_assets.pipeline.readers.sheets import CSV, TSV, XLSX, Sheet


class SheetsChunker(StructuredTextChunker):
    media_types = frozenset({XLSX, CSV, TSV})
    reads_parsed = True

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...],
              parsed: object = None) -> tuple[PageChunks, ...]:
        """The port's `chunk`; `parsed` is the spreadsheet reader's `Workbook` of these bytes, if at hand."""
        if media_type not in self.media_types:
            return ()
        from indx_assets.pipeline.readers.ooxml_guard import PackageRefused
        from indx_assets.pipeline.readers.sheets import Workbook, sheets_of
        from indx_assets.pipeline.readers.text import NotText

        try:
            sheets = parsed.sheets if isinstance(parsed, Workbook) else sheets_of(content, media_type)
        except (PackageRefused, NotText, csv.Error):
            return ()
        by_page = {sheet.page: sheet for sheet in sheets}
        claims = []
        for page in outputs:
            sheet = by_page.get(page.page)
            claim = self.claim(sheet, page) if sheet is not None else None
            if claim is not None:
                claims.append(claim)
        return tuple(claims)

    def claim(self, sheet: Sheet, page: PageOutput) -> PageChunks | None:
        """The table chunks of one page of a sheet, or None when the page is not this sheet's."""
        if not page.readable or not page.text.strip() or sheet.text != page.text:
            return None  # nothing to cut, or another reader's text: offsets would not point into it
        pieces = page_pieces(page.text, _tables(sheet.regions), self.settings)
        return PageChunks(page.page, pieces) if pieces else None


def stream_chunks(content: bytes, media_type: str,
                  settings: ChunkerSettings | None = None) -> Iterator[tuple[PageOutput, PageChunks | None]]:
    """Each page of a spreadsheet with its table chunks, read and cut one page at a time: what
    `read_xlsx` (or `read_csv`, `read_tsv`) and this chunker make of it, in a memory that does
    not grow with the sheet's rows (`indx_assets.pipeline.readers.sheets.iter_sheets`). Raises
    what `iter_sheets` raises when the file cannot be opened."""
    from indx_assets.pipeline.readers.sheets import iter_sheets, page_output

    chunker = SheetsChunker(settings)
    for sheet in iter_sheets(content, media_type):
        page = page_output(sheet)
        yield page, chunker.claim(sheet, page)


def _tables(regions: Any) -> list[Element]:
    tables: list[Element] = []
    for region in regions:
        table = Table(region.text, text_as_html=region.html)
        table.metadata.start, table.metadata.end = region.start, region.end
        tables.append(table)
    return tables


class SheetsProvider(StructuredProvider):
    """The `sheets` entry point; options as for the `markdown` and `html` chunkers (`ChunkerSettings`)."""

    chunker_class = SheetsChunker
