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
from collections.abc import Iterable, Iterator
from typing import Any

from indx_interfaces import ChunkPiece, PageChunks, PageOutput

from indx_assets.pipeline.chunkers.base import ChunkerSettings, ReaderModelChunker, StructuredProvider, page_pieces
from indx_assets.pipeline.chunking.elements import Element, Table
from indx_assets.pipeline.readers.sheets import CSV, TSV, XLSX, Sheet


class SheetsChunker(ReaderModelChunker[Sheet]):
    media_types = frozenset({XLSX, CSV, TSV})
    page_local = True  # a page's chunks are its own sheet part's regions (`chain_runner.cuts_page_by_page`)

    def model_pages(self, content: bytes, media_type: str, parsed: object) -> dict[int, Sheet] | None:
        """The sheets by page (`parsed`, the spreadsheet reader's `Workbook` or, from a read in
        steps, `SheetSpool` of these bytes, if at hand: the file is not parsed again)."""
        from indx_assets.pipeline.readers.ooxml_guard import PackageRefused
        from indx_assets.pipeline.readers.sheets import SheetSpool, Workbook, sheets_of
        from indx_assets.pipeline.readers.text import NotText

        try:
            if isinstance(parsed, Workbook):
                sheets: Iterable[Sheet] = parsed.sheets
            elif isinstance(parsed, SheetSpool):
                sheets = parsed
            else:
                sheets = sheets_of(content, media_type)
        except (PackageRefused, NotText, csv.Error):
            return None
        return {sheet.page: sheet for sheet in sheets}

    def model_pieces(self, sheet: Sheet) -> tuple[ChunkPiece, ...]:
        return page_pieces(sheet.text, _tables(sheet.regions), self.settings)


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
