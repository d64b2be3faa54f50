"""The spreadsheet readers: Excel (`.xlsx`, `.xlsm`) and delimited text (`.csv`, `.tsv`).

One page per sheet (a CSV or TSV file is one sheet), in workbook order; a sheet longer than
`PAGE_CHARS` of text is cut into several pages at row boundaries (page metadata `rows`: the
first and last sheet row on the page), a table cut there going on at the top of the next page
under its header row, repeated. A sheet's rows are cut into table regions where a row is
empty: each region is one table whose first row is its header. Page text: each region's rows,
one line per row with cells separated by ` | `, regions separated by a blank line; the
`sheets` chunker cuts each region into table chunks of whole rows, the header row repeated
(the chunking library's table splitting).

Excel files open through the OOXML guard (zip bombs, entity bombs, encrypted and legacy
files are refused before any XML is parsed) and openpyxl in read-only mode; a large worksheet
part is checked and then read as a stream (`verified_streaming_package`), rows parsed as they
arrive and dropped, so `iter_sheets` yields page after page in a memory that does not grow
with the rows. Formulas give the values Excel cached when it last saved the file (a formula
never calculated reads as empty). Hidden sheets, rows and columns are marked
(`metadata["hidden"]`, `metadata["hidden_rows"]`, 1-based sheet row numbers,
`metadata["hidden_columns"]`, column letters) and left out of the page text, so no chunk
holds them (a hidden column's cells are dropped from their rows, the header's too). The
reader hands its pages to the `sheets` chunker as the read's parsed form (`Workbook`,
`DocumentRead.parsed`), so reading and chunking one file opens it once.
"""

import csv
import datetime as dt
import io
import math
import pickle
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from html import escape
from typing import IO, Any

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.readers import DocumentRead, PageTally, ReaderConfig, ReadFailed, reader_error
from indx_assets.pipeline.readers.ooxml_guard import PackageRefused
from indx_assets.pipeline.scratch import scratch_file

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CSV = "text/csv"
TSV = "text/tab-separated-values"
READER = "sheets"
CELL_SEPARATOR = " | "
REGION_SEPARATOR = "\n\n"


#: About how many characters of text a page holds: a longer sheet is cut into several pages at
#: row boundaries, a table cut by a page break continuing on the next page under its header row
#: (repeated, as a printed sheet repeats it), so reading and chunking a sheet of any length holds
#: one page of it at a time.
PAGE_CHARS = 256 << 10


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
    """One page of a spreadsheet: a whole sheet, or the part of a long sheet that fits a page."""

    number: int
    name: str
    hidden: bool
    regions: tuple[Region, ...]
    text: str
    hidden_rows: tuple[int, ...] = ()
    error: str | None = None
    #: the page's number in the document (sheets and their parts in workbook order); 0: the
    #: sheet's own number (a reader that makes one page per sheet, as the OpenDocument one)
    page: int = 0
    #: the first and last sheet row whose cells the page holds (a repeated header aside)
    rows: tuple[int, int] | None = None
    #: whether the sheet goes on over more pages than this one
    parted: bool = False
    #: the sheet's hidden columns (letters), left out of the text
    hidden_columns: tuple[str, ...] = ()


    def __post_init__(self) -> None:
        if not self.page:
            object.__setattr__(self, "page", self.number)


@dataclass(frozen=True, slots=True)
class Workbook:
    """The spreadsheet readers' parsed form of one file (`DocumentRead.parsed`): its pages."""

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
        self.chars = 0

    def add(self, cells: tuple[str, ...]) -> None:
        end = len(cells)
        while end and not cells[end - 1]:
            end -= 1  # trailing empty cells
        cells = tuple(c.replace("\n", " ") for c in cells[:end])
        line = CELL_SEPARATOR.join(cells)
        self.lines.append(line)
        self.chars += len(line) + 1
        self.html.append("".join(f"<td>{escape(c)}</td>" for c in cells))

    def region(self) -> Region:
        rows = [f"<tr>{cells}</tr>" for cells in self.html]
        if len(rows) > 1:  # the first row is the header: in <thead>, so a split table repeats it
            rows[0] = "<thead>" + rows[0].replace("<td>", "<th>").replace("</td>", "</th>") + "</thead>"
        text = "\n".join(self.lines)
        return Region(len(self.lines), self.first_row, text, "<table>" + "".join(rows) + "</table>")


@dataclass(frozen=True, slots=True)
class PageRegions:
    """A page's worth of a sheet (`paged_regions`)."""

    regions: tuple[Region, ...]
    rows: tuple[int, int] | None
    hidden_rows: tuple[int, ...]


def _placed(regions: list[Region]) -> tuple[Region, ...]:
    """`regions` with their offsets in the page text (regions joined by a blank line)."""
    placed: list[Region] = []
    offset = 0
    for region in regions:
        if placed:
            offset += len(REGION_SEPARATOR)
        placed.append(replace(region, start=offset, end=offset + len(region.text)))
        offset += len(region.text)
    return tuple(placed)


def paged_regions(rows: Iterable[tuple[int, tuple[str, ...] | None]], page_chars: float = PAGE_CHARS) -> Iterator[PageRegions]:
    """Table regions of `(row number, cell texts)` rows (cells `None`: a hidden row, left out),
    runs of rows with any text, cut into pages of about `page_chars` characters as the rows
    stream past: a page ends after the region or the row that reaches the size, and a region
    cut there goes on at the top of the next page under its header row, repeated. At least
    one page, possibly with no regions."""
    page: list[Region] = []
    size, first, last = 0, 0, 0
    hidden: list[int] = []
    current: _RegionBuilder | None = None
    header: tuple[tuple[str, ...], int] | None = None  # the open region's header and its row
    carried = False  # the next row of the open region starts a new page's part of it

    def cut() -> PageRegions:
        nonlocal page, size, first, last, hidden
        out = PageRegions(_placed(page), (first, last) if first else None, tuple(hidden))
        page, size, first, last, hidden = [], 0, 0, 0, []
        return out

    for number, cells in rows:
        if cells is None:
            hidden.append(number)
            continue
        if not any(cells):
            if current is not None:
                page.append(current.region())
                size += current.chars + len(REGION_SEPARATOR)
                current = None
                if size >= page_chars:
                    yield cut()
            header, carried = None, False
            continue
        if current is None:
            current = _RegionBuilder(number)
            if carried and header is not None:
                current = _RegionBuilder(header[1])
                current.add(header[0])
            else:
                header = (cells, number)
            carried = False
        current.add(cells)
        first, last = first or number, number
        if size + current.chars >= page_chars and len(current.lines) > 1:
            page.append(current.region())
            current, carried = None, True
            yield cut()
    if current is not None:
        page.append(current.region())
    if page or hidden or not carried:
        yield cut()


def regions_of(rows: Iterable[tuple[int, tuple[str, ...] | None]]) -> tuple[Region, ...]:
    """Every table region of `rows` on one page, however long (see `paged_regions`)."""
    return next(paged_regions(rows, page_chars=math.inf)).regions


def _sheet_text(regions: tuple[Region, ...]) -> str:
    return REGION_SEPARATOR.join(r.text for r in regions)


_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_SHEET_DATA = f"{{{_MAIN}}}sheetData"
#: What openpyxl finds in place of a worksheet read as a stream (it only looks for its size).
_STAND_IN = f'<worksheet xmlns="{_MAIN}"/>'.encode()
_MAX_COLUMN = 16_384  # XFD, the last column a sheet can have


def _sheet_rows(source: IO[bytes], worksheet: Any, hidden_columns: list[int]) -> Iterator[tuple[int, tuple[str, ...] | None]]:
    """`(row number, cell texts)` of a read-only worksheet's rows, streamed from `source`, its
    XML; a hidden row's cells are `None`, a hidden column's cells are left out (its 1-based
    number is added to `hidden_columns` before the first row is yielded: the columns' widths
    and visibility come first in the sheet's XML). Rows the file leaves out are empty rows: one
    empty row stands for them (it ends a region).

    openpyxl's read-only worksheet exposes neither row nor column attributes, so this drives
    its sheet parser's row reading (`WorkSheetParser.parse_row`, what `ReadOnlyWorksheet`
    itself iterates) over its own `iterparse`, which also drops each row's element once it is
    read: openpyxl keeps every row's (cleared) element and every formatted row's attributes,
    memory that grows with the rows. The parser is the standard library's C one, not
    openpyxl's (defusedxml's pure-Python parser when defusedxml is installed, which took
    half of a long sheet's reading): the OOXML guard has refused any part declaring a DTD or
    an entity before it is parsed (`ooxml_guard.xml_refusal`, `_verify_streamed`), which is
    what defusedxml would refuse.
    """
    from xml.etree.ElementTree import iterparse

    from openpyxl.worksheet._reader import COL_TAG, ROW_TAG, WorkSheetParser

    workbook = worksheet.parent
    parser = WorkSheetParser(source, worksheet._shared_strings, data_only=True, epoch=workbook.epoch,
                             date_formats=workbook._date_formats, timedelta_formats=workbook._timedelta_formats)
    previous = 0
    data = None
    hidden: set[int] = set()
    for event, element in iterparse(source, events=("start", "end")):
        if event == "start":
            if element.tag == _SHEET_DATA:
                data = element
            continue
        if element.tag == COL_TAG:
            if element.get("hidden") in ("1", "true"):
                first, last = int(element.get("min", "0")), int(element.get("max", "0"))
                hidden.update(range(max(first, 1), min(last, _MAX_COLUMN) + 1))
                hidden_columns[:] = sorted(hidden)
            continue
        if element.tag != ROW_TAG:
            continue
        number, cells = parser.parse_row(element)
        attrs = parser.row_dimensions.pop(str(number), None)
        if data is not None:
            data.clear()  # the row just read is sheetData's only child: nothing is kept
        if number > previous + 1:
            yield previous + 1, ()
        previous = number
        if attrs is not None and attrs.get("hidden") in ("1", "true"):
            yield number, None
            continue
        texts = [""] * max((c["column"] for c in cells), default=0)
        for cell in cells:
            texts[cell["column"] - 1] = cell_text(cell["value"])
        if hidden:
            texts = [text for column, text in enumerate(texts, start=1) if column not in hidden]
        yield number, tuple(texts)


def _is_worksheet(name: str) -> bool:
    return name.startswith("xl/worksheets/") and name.endswith(".xml")


def _sheet_pages(number: int, name: str, hidden: bool, rows: Iterable[tuple[int, tuple[str, ...] | None]],
                 page: int, hidden_columns: list[int] | None = None) -> Iterator[Sheet]:
    """The pages of one visible sheet, numbered from `page` (one page ahead is read, so a
    page knows whether the sheet goes on); `hidden_columns` is filled as `rows` are read."""
    from openpyxl.utils import get_column_letter

    def sheet(part: PageRegions, page: int, parted: bool) -> Sheet:
        columns = tuple(get_column_letter(c) for c in hidden_columns or ())
        return Sheet(number, name, hidden, part.regions, _sheet_text(part.regions), part.hidden_rows,
                     page=page, rows=part.rows, parted=parted, hidden_columns=columns)

    parts = paged_regions(rows)
    part, parted = next(parts), False
    for following in parts:
        yield sheet(part, page, True)
        part, page, parted = following, page + 1, True
    yield sheet(part, page, parted)


def iter_workbook(content: bytes) -> Iterator[Sheet]:
    """The pages of the workbook in `content`, streamed (see `PAGE_CHARS`): a worksheet's XML
    is read as a stream through the OOXML guard, so memory does not grow with its rows. Raises
    `PackageRefused` before the first page when the workbook cannot be opened."""
    import openpyxl

    from indx_assets.pipeline.readers.ooxml_guard import verified_streaming_package

    package = verified_streaming_package(content, _is_worksheet, _STAND_IN)
    try:
        workbook = openpyxl.load_workbook(package.package, read_only=True, data_only=True, keep_links=False)
    except Exception as exc:  # openpyxl raises whatever the damaged part provokes
        raise PackageRefused("failed", f"not a readable Excel workbook: {type(exc).__name__}: {exc}") from exc
    return _workbook_pages(workbook, package)


def _workbook_pages(workbook: Any, package: Any) -> Iterator[Sheet]:
    page = 1
    try:
        for number, worksheet in enumerate(workbook.worksheets, start=1):
            hidden = worksheet.sheet_state != "visible"
            if hidden:
                yield Sheet(number, worksheet.title, hidden, (), "", page=page)
                page += 1
                continue
            path = worksheet._worksheet_path
            first = page
            try:
                with package.open_streamed(path) if path in package.streamed else worksheet._get_source() as source:
                    columns: list[int] = []
                    rows = _sheet_rows(source, worksheet, columns)
                    for sheet in _sheet_pages(number, worksheet.title, hidden, rows, page, columns):
                        yield sheet
                        page += 1
            except Exception as exc:  # one damaged sheet must not lose the others (nor its pages so far)
                yield Sheet(number, worksheet.title, hidden, (), "", error=f"{type(exc).__name__}: {exc}",
                            page=page, parted=page > first)
                page += 1
    finally:
        workbook.close()


def load_workbook(content: bytes) -> tuple[Sheet, ...]:
    """The pages of the workbook in `content`; raises `PackageRefused` when it cannot be opened."""
    return tuple(iter_workbook(content))


def iter_delimited(content: bytes, delimiter: str) -> Iterator[Sheet]:
    """The pages of a CSV/TSV file, one sheet (see `PAGE_CHARS`); raises
    `indx_assets.pipeline.readers.text.NotText` for binary bytes."""
    from indx_assets.pipeline.readers.text import decode_text

    text = decode_text(content).text
    rows = ((n, tuple(cell.strip() for cell in row)) for n, row in enumerate(csv.reader(io.StringIO(text), delimiter=delimiter), 1))
    return _sheet_pages(1, "", False, rows, 1)


def iter_sheets(content: bytes, media_type: str) -> Iterator[Sheet]:
    """The pages of a spreadsheet of `media_type`, streamed (see `iter_workbook`, `iter_delimited`)."""
    if media_type == XLSX:
        return iter_workbook(content)
    return iter_delimited(content, "\t" if media_type == TSV else ",")


def sheets_of(content: bytes, media_type: str) -> tuple[Sheet, ...]:
    """The pages of a spreadsheet of `media_type` (see `iter_sheets`)."""
    return tuple(iter_sheets(content, media_type))


def page_output(sheet: Sheet) -> PageOutput:
    """The page a sheet (or a part of one) reads as."""
    metadata: dict[str, Any] = {"hidden": sheet.hidden}
    if sheet.name:
        metadata["sheet"] = sheet.name
    if sheet.hidden_rows:
        metadata["hidden_rows"] = list(sheet.hidden_rows)
    if sheet.hidden_columns:
        metadata["hidden_columns"] = list(sheet.hidden_columns)
    if sheet.parted and sheet.rows:
        metadata["rows"] = list(sheet.rows)
    if sheet.error is not None:
        return PageOutput(sheet.page, "", "failed", READER, reason=sheet.error, metadata=metadata)
    if sheet.hidden:
        return PageOutput(sheet.page, "", "empty", READER, reason="hidden sheet, left out", metadata=metadata)
    return PageOutput(sheet.page, sheet.text, "ok" if sheet.text.strip() else "empty", READER, metadata=metadata)


def sheet_pages(sheets: tuple[Sheet, ...]) -> tuple[PageOutput, ...]:
    """The pages of `sheets`, as the spreadsheet readers make them (the OpenDocument reader's too)."""
    return tuple(page_output(sheet) for sheet in sheets)


def _refused(media_type: str, exc: Exception) -> DocumentRead | None:
    """What a spreadsheet reads as when reading it raised `exc`: a refused package, bytes that
    are not text, a malformed CSV; None for anything else (a reader defect)."""
    from indx_assets.pipeline.readers.text import NotText

    if isinstance(exc, PackageRefused):
        return DocumentRead.failure(media_type, exc.status, exc.reason)
    if isinstance(exc, NotText):
        return DocumentRead.failure(media_type, "failed", str(exc))
    if isinstance(exc, csv.Error):
        return DocumentRead.failure(media_type, "failed", f"not readable as {media_type}: {exc}")
    return None


def _metadata(media_type: str, hidden_sheets: list[int]) -> dict[str, object]:
    return {"hidden_sheets": hidden_sheets} if media_type == XLSX else {}


def _read_sheets(media_type: str, content: bytes) -> DocumentRead:
    """One page per sheet, or per part of a long one (`PAGE_CHARS`); what cannot be read becomes a document status."""
    try:
        sheets = sheets_of(content, media_type)
    except Exception as exc:
        refused = _refused(media_type, exc)
        if refused is None:
            raise
        return refused
    read = DocumentRead.from_pages(media_type, sheet_pages(sheets), **_metadata(media_type, [s.number for s in sheets if s.hidden]))
    return read.with_parsed(Workbook(sheets))


def read_xlsx(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read_sheets(XLSX, content)


def _read_delimited(media_type: str, content: bytes) -> DocumentRead:
    return _read_sheets(media_type, content)


class SheetSpool:
    """The sheets (pages) a read in steps read (`SheetStream`), each pickled to a temporary file
    as it is read and read back one at a time, in page order: the read's parsed form, handed to
    the `sheets` chunker page by page, so a long sheet's regions are never all in memory. The
    file is a `scratch.scratch_file`: in the data directory while a stage reads, and nameless,
    so it is gone however the process ends, kill -9 included."""

    def __init__(self) -> None:
        self._file = scratch_file()
        self.count = 0

    def add(self, sheet: Sheet) -> None:
        self._file.seek(0, io.SEEK_END)
        pickle.dump(sheet, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self.count += 1

    def __iter__(self) -> Iterator[Sheet]:
        self._file.seek(0)
        for _ in range(self.count):
            yield pickle.load(self._file)

    def close(self) -> None:
        self._file.close()


class SheetStream:
    """A spreadsheet read page by page (`stream_sheets`): `pages()` yields each page's output as
    its sheet part is read, spooling the part for the chunker (`SheetSpool`); once they are all
    read, `read()` is the document's read without its pages (status, reason, metadata), its
    parsed form the spool. A file found unreadable part way raises `ReadFailed` from `pages()`."""

    def __init__(self, media_type: str, sheets: Iterator[Sheet]) -> None:
        self.media_type = media_type
        self._sheets = sheets
        self._tally = PageTally()
        self._hidden: list[int] = []
        self.spool = SheetSpool()

    def pages(self) -> Iterator[PageOutput]:
        sheets = iter(self._sheets)
        while True:
            try:
                sheet = next(sheets, None)
                if sheet is None:
                    return
                if sheet.hidden:
                    self._hidden.append(sheet.number)
                page = page_output(sheet)
                self._tally.add(page)
            except Exception as exc:
                raise ReadFailed(_refused(self.media_type, exc) or reader_error(self.media_type, exc)) from exc
            # outside the reader's failures: a spool that cannot be written (a full disk) fails
            # the run, which tries again, rather than storing the file as unreadable
            self.spool.add(sheet)
            yield page

    def read(self) -> DocumentRead:
        return self._tally.read(self.media_type, **_metadata(self.media_type, self._hidden)).with_parsed(self.spool)


def stream_sheets(content: bytes, media_type: str) -> SheetStream | DocumentRead:
    """The spreadsheet in `content` read page by page (`SheetStream`, its sheet parts spooled),
    or, when it cannot be opened, what it reads as (as `read_xlsx`, `read_csv`, `read_tsv` would
    return it)."""
    try:
        return SheetStream(media_type, iter_sheets(content, media_type))
    except Exception as exc:
        return _refused(media_type, exc) or reader_error(media_type, exc)


def read_csv(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read_delimited(CSV, content)


def read_tsv(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read_delimited(TSV, content)
