"""The `sheets` chunker: each table region of a sheet (Excel, CSV, TSV) cut into table chunks.

It reuses the spreadsheet readers' own sheet model (`indx_assets.pipeline.readers.sheets.sheets_of`,
handed over as the read's parsed form when the reader just ran),
so every region's offsets in the page text are known exactly. Each region is a `Table` with
its HTML (first row in `<thead>`); the chunking library keeps a region that fits the token
budget whole and otherwise splits it into chunks of whole rows, each continuation starting
with the header row, so a number in a cell is never split. Hidden sheets and hidden rows are
not in the page text, so no chunk holds them. If the model disagrees with the page text
(another reader won the page) the page is declined.
"""

from typing import Any

from indx_interfaces import PageChunks, PageOutput

from indx_assets.pipeline.chunkers.base import StructuredProvider, StructuredTextChunker, page_pieces
from indx_assets.pipeline.chunking.elements import Element, Table
from indx_assets.pipeline.readers.sheets import CSV, TSV, XLSX


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
        except (PackageRefused, NotText):
            return ()
        claims = []
        for page in outputs:
            if not page.readable or not page.text.strip() or not 1 <= page.page <= len(sheets):
                continue
            sheet = sheets[page.page - 1]
            if sheet.text != page.text:
                continue  # another reader's text: offsets would not point into it
            pieces = page_pieces(page.text, _tables(sheet.regions), self.settings)
            if pieces:
                claims.append(PageChunks(page.page, pieces))
        return tuple(claims)


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
