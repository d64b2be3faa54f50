"""The spreadsheet readers: Excel (`.xlsx`, `.xlsm`) and delimited text (`.csv`, `.tsv`).

One page per sheet (a CSV or TSV file is one sheet), in workbook order. A sheet's rows are
cut into table regions where a row is empty: each region is one table whose first row is its
header. Page text: each region's rows, one line per row with cells separated by ` | `,
regions separated by a blank line; the `sheets` chunker cuts each region into table chunks of
whole rows, the header row repeated (the chunking library's table splitting).

Excel files open through the OOXML guard (zip bombs, entity bombs, encrypted and legacy
files are refused before any XML is parsed) and openpyxl in read-only mode, rows streamed
from the sheet's XML; formulas give the values Excel cached when it last saved the file
(a formula never calculated reads as empty). Hidden sheets and hidden rows are marked
(`metadata["hidden"]`, `metadata["hidden_rows"]`, 1-based sheet row numbers) and left out of
the page text, so no chunk holds them. The reader hands its sheets to the `sheets` chunker as
the read's parsed form (`Workbook`, `DocumentRead.parsed`), so reading and chunking one file
opens it once.
"""

import csv
import datetime as dt
import io
from dataclasses import dataclass, replace
from html import escape
from typing import Any

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.ooxml_guard import PackageRefused, verified_package

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV = "text/csv"
TSV = "text/tab-separated-values"
READER = "sheets"
CELL_SEPARATOR = " | "
REGION_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class Region:
    """One contiguous table of a sheet: how many rows (the first is the header), where it
    starts in the sheet and in the page text, its text and HTML (the cells are not kept twice)."""

    row_count: int
    first_row: int
    text: str
    html: str
    start: int = 0
    end: int = 0


@dataclass(frozen=True, slots=True)
class Sheet:
    number: int
    name: str
    hidden: bool
    regions: tuple[Region, ...]
    text: str
    hidden_rows: tuple[int, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Workbook:
    """The spreadsheet readers' parsed form of one file (`DocumentRead.parsed`): its sheets."""

    sheets: tuple[Sheet, ...]


def cell_text(value: Any) -> str:
    """A cell value as a user reads it: integers without `.0`, dates in ISO form, text as is."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value).strip()


class _RegionBuilder:
    """One region's text and HTML, built row by row as the rows stream past (the cells are
    not held: a sheet costs its text and HTML, not a Python object per cell)."""

    def __init__(self, first_row: int) -> None:
        self.first_row = first_row
        self.lines: list[str] = []
        self.html: list[str] = []

    def add(self, cells: tuple[str, ...]) -> None:
        end = len(cells)
        while end and not cells[end - 1]:
            end -= 1  # trailing empty cells
        cells = tuple(c.replace("\n", " ") for c in cells[:end])
        self.lines.append(CELL_SEPARATOR.join(cells))
        self.html.append("".join(f"<td>{escape(c)}</td>" for c in cells))

    def region(self) -> Region:
        rows = [f"<tr>{cells}</tr>" for cells in self.html]
        if len(rows) > 1:  # the first row is the header: in <thead>, so a split table repeats it
            rows[0] = "<thead>" + rows[0].replace("<td>", "<th>").replace("</td>", "</th>") + "</thead>"
        text = "\n".join(self.lines)
        return Region(len(self.lines), self.first_row, text, "<table>" + "".join(rows) + "</table>")


def regions_of(rows: Any) -> tuple[Region, ...]:
    """Table regions of `(row number, cell texts)` rows: runs of rows with any text, laid out
    with their offsets in the sheet's text (regions joined by a blank line)."""
    regions: list[Region] = []
    current: _RegionBuilder | None = None
    for number, cells in rows:
        if any(cells):
            if current is None:
                current = _RegionBuilder(number)
            current.add(cells)
        elif current is not None:
            regions.append(current.region())
            current = None
    if current is not None:
        regions.append(current.region())
    placed, offset = [], 0
    for region in regions:
        if placed:
            offset += len(REGION_SEPARATOR)
        placed.append(replace(region, start=offset, end=offset + len(region.text)))
        offset += len(region.text)
    return tuple(placed)


def _sheet_text(regions: tuple[Region, ...]) -> str:
    return REGION_SEPARATOR.join(r.text for r in regions)


def _visible_rows(worksheet: Any, hidden_rows: list[int]) -> Any:
    """`(row number, cell texts)` of a read-only worksheet's visible rows, streamed.

    openpyxl's read-only worksheet does not expose row attributes, so this drives its sheet
    parser (`WorkSheetParser`, what `ReadOnlyWorksheet` itself iterates) and reads each row's
    `hidden` attribute as the row is parsed; hidden row numbers are appended to `hidden_rows`.
    Rows the file leaves out are empty rows: one empty row stands for them (it ends a region).
    """
    from openpyxl.worksheet._reader import WorkSheetParser

    workbook = worksheet.parent
    with worksheet._get_source() as source:
        parser = WorkSheetParser(source, worksheet._shared_strings, data_only=True, epoch=workbook.epoch,
                                 date_formats=workbook._date_formats, timedelta_formats=workbook._timedelta_formats)
        previous = 0
        for number, cells in parser.parse():
            if number > previous + 1:
                yield previous + 1, ()
            previous = number
            attrs = parser.row_dimensions.get(str(number))
            if attrs is not None and attrs.get("hidden") in ("1", "true"):
                hidden_rows.append(number)
                continue
            texts = [""] * max((c["column"] for c in cells), default=0)
            for cell in cells:
                texts[cell["column"] - 1] = cell_text(cell["value"])
            yield number, tuple(texts)


def _build_workbook(content: bytes) -> tuple[Sheet, ...]:
    import openpyxl

    package = verified_package(content)
    try:
        workbook = openpyxl.load_workbook(package, read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises whatever the damaged part provokes
        raise PackageRefused("failed", f"not a readable Excel workbook: {type(exc).__name__}: {exc}") from exc
    sheets = []
    try:
        for number, worksheet in enumerate(workbook.worksheets, start=1):
            hidden = worksheet.sheet_state != "visible"
            hidden_rows: list[int] = []
            try:
                regions = () if hidden else regions_of(_visible_rows(worksheet, hidden_rows))
            except Exception as exc:  # one damaged sheet must not lose the others
                sheets.append(Sheet(number, worksheet.title, hidden, (), "", error=f"{type(exc).__name__}: {exc}"))
                continue
            sheets.append(Sheet(number, worksheet.title, hidden, regions, _sheet_text(regions), tuple(hidden_rows)))
    finally:
        workbook.close()
    return tuple(sheets)


def load_workbook(content: bytes) -> tuple[Sheet, ...]:
    """The sheets of the workbook in `content`; raises `PackageRefused` when it cannot be opened."""
    return _build_workbook(content)


def load_delimited(content: bytes, delimiter: str) -> tuple[Sheet, ...]:
    """A CSV/TSV file as one sheet; raises `indx_assets.pipeline.readers.text.NotText` for binary bytes."""
    from indx_assets.pipeline.readers.text import decode_text

    text = decode_text(content).text
    rows = ((n, tuple(cell.strip() for cell in row)) for n, row in enumerate(csv.reader(io.StringIO(text), delimiter=delimiter), 1))
    regions = regions_of(rows)
    return (Sheet(1, "", False, regions, _sheet_text(regions)),)


def sheets_of(content: bytes, media_type: str) -> tuple[Sheet, ...]:
    """The sheets of a spreadsheet of `media_type` (see `load_workbook`, `load_delimited`)."""
    if media_type == XLSX:
        return load_workbook(content)
    return load_delimited(content, "\t" if media_type == TSV else ",")


def _pages(sheets: tuple[Sheet, ...]) -> tuple[PageOutput, ...]:
    pages = []
    for sheet in sheets:
        metadata: dict[str, Any] = {"hidden": sheet.hidden}
        if sheet.name:
            metadata["sheet"] = sheet.name
        if sheet.hidden_rows:
            metadata["hidden_rows"] = list(sheet.hidden_rows)
        if sheet.error is not None:
            pages.append(PageOutput(sheet.number, "", "failed", READER, reason=sheet.error, metadata=metadata))
        elif sheet.hidden:
            pages.append(PageOutput(sheet.number, "", "empty", READER, reason="hidden sheet, left out", metadata=metadata))
        else:
            pages.append(PageOutput(sheet.number, sheet.text, "ok" if sheet.text.strip() else "empty", READER,
                                    metadata=metadata))
    return tuple(pages)


def sheet_pages(sheets: tuple[Sheet, ...]) -> tuple[PageOutput, ...]:
    """One page per sheet, as the spreadsheet readers make them (the OpenDocument reader's too)."""
    return _pages(sheets)


def read_xlsx(content: bytes, config: ReaderConfig) -> DocumentRead:
    """One page per sheet; refused packages become a document status."""
    try:
        sheets = load_workbook(content)
    except PackageRefused as exc:
        return DocumentRead.failure(XLSX, exc.status, exc.reason)
    read = DocumentRead.from_pages(XLSX, _pages(sheets), hidden_sheets=[s.number for s in sheets if s.hidden])
    return read.with_parsed(Workbook(sheets))


def _read_delimited(media_type: str, content: bytes) -> DocumentRead:
    from indx_assets.pipeline.readers.text import NotText

    try:
        sheets = sheets_of(content, media_type)
    except NotText as exc:
        return DocumentRead.failure(media_type, "failed", str(exc))
    except csv.Error as exc:
        return DocumentRead.failure(media_type, "failed", f"not readable as {media_type}: {exc}")
    return DocumentRead.from_pages(media_type, _pages(sheets)).with_parsed(Workbook(sheets))


def read_csv(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read_delimited(CSV, content)


def read_tsv(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read_delimited(TSV, content)
