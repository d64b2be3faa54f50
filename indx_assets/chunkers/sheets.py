"""The `sheets` chunker: each table region of a sheet (Excel, CSV, TSV) cut into table chunks.

It reuses the spreadsheet readers' own sheet model (`indx_assets.readers.sheets.sheets_of`),
so every region's offsets in the page text are known exactly. Each region is a `Table` with
its HTML (first row in `<thead>`); the chunking library keeps a region that fits the token
budget whole and otherwise splits it into chunks of whole rows, each continuation starting
with the header row, so a number in a cell is never split. Hidden sheets and hidden rows are
not in the page text, so no chunk holds them. If the model disagrees with the page text
(another reader won the page) the page is declined.
"""

from indx_assets.chunking.elements import Element, Table
from indx_assets.chunking.pieces import StructuredProvider, StructuredTextChunker
from indx_assets.port import PageOutput
from indx_assets.readers.sheets import CSV, TSV, XLSX


class SheetsChunker(StructuredTextChunker):
    media_types = frozenset({XLSX, CSV, TSV})

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._media_type = XLSX

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]):  # type: ignore[no-untyped-def]
        self._media_type = media_type
        return super().chunk(content, media_type, outputs)

    def page_elements(self, content: bytes, page: PageOutput) -> list[Element] | None:
        from indx_assets.readers.ooxml_guard import PackageRefused
        from indx_assets.readers.sheets import sheets_of
        from indx_assets.readers.text import NotText

        try:
            sheets = sheets_of(content, self._media_type)
        except (PackageRefused, NotText):
            return None
        if not 1 <= page.page <= len(sheets) or sheets[page.page - 1].text != page.text:
            return None
        elements: list[Element] = []
        for region in sheets[page.page - 1].regions:
            table = Table(region.text, text_as_html=region.html)
            table.metadata.start, table.metadata.end = region.start, region.end
            elements.append(table)
        return elements


class SheetsProvider(StructuredProvider):
    """The `sheets` entry point; options as for the `markdown` and `html` chunkers (`ChunkerSettings`)."""

    chunker_class = SheetsChunker
