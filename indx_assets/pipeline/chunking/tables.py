"""Splitting one table into chunks of whole rows, repeating its header rows on continuations.

Rows come from `metadata.text_as_html` when the table has it (leading rows inside `<thead>`
or made only of `<th>` cells are its header), else from the lines of its text (no header
known). A table whose text fits is one `Table` chunk, its text and HTML kept whole; sizing is
by text, the thing that is embedded (`unstructured` also splits a table whose HTML alone is
over the limit). Otherwise every chunk is a `TableChunk` of as many whole rows as fit, a row
too big on its own is text-split, and continuation chunks start with the header rows when
those take at most half the window.
"""

import html as html_lib
import itertools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indx_assets.pipeline.chunking.elements import ElementMetadata, Table, TableChunk
from indx_assets.pipeline.chunking.measure import Measure
from indx_assets.pipeline.chunking.options import ChunkingOptions
from indx_assets.pipeline.chunking.text_splitter import TextSplitter
from indx_assets.pipeline.scratch import SpooledText
from indx_assets.pipeline.whitespace import iter_lines

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Row:
    text: str
    html: str
    is_header: bool


def html_rows(text_as_html: str | SpooledText, piece_bytes: int | None = None,
              over: Callable[[str], bool] | None = None) -> Iterator[Row] | None:
    """The rows of an HTML table as they are read, or `None` when the HTML holds no row. A row
    is one of the table's own (a table nested in a cell is text of that cell) and its text is its
    cells' as the HTML reader puts them in the page text (`readers.html.cell_text`: a line break
    or a block between two words keeps them apart, hidden cells and rows are left out). A long
    table is parsed a piece at a time (`readers.html.table_trees`, pieces of `piece_bytes`; by
    default the reader's), and a row cut in a cell joined again (`_CutRow`): with no markup
    where `over` says its text is over every chunk, given a part at a time from then on
    (`_CutRow.given`: it is then split by its text alone)."""
    from indx_assets.pipeline.readers.html import PIECE_BYTES, HtmlTooDeep

    rows = _html_rows(text_as_html, PIECE_BYTES if piece_bytes is None else piece_bytes, over or (lambda text: False))
    try:
        first = next(rows, None)
    except HtmlTooDeep:
        return None
    return None if first is None else itertools.chain((first,), rows)


def _html_rows(text_as_html: str | SpooledText, piece_bytes: int, over: Callable[[str], bool]) -> Iterator[Row]:
    """`html_rows`' rows. Pieces whose trees are not what their cuts promised (`PiecesDisagree`,
    a fault of the cuts) cost the table its bound, never a row: the rest of its rows are read
    from its markup parsed whole, as the reader reads such a page."""
    from indx_assets.pipeline.readers.html import PiecesDisagree

    given = 0
    try:
        for row in _piece_rows(text_as_html, piece_bytes, over):
            yield row
            given += 1
    except PiecesDisagree as exc:
        log.warning("a table's rows read again from its markup parsed whole: %s", exc)
        whole = text_as_html.size if isinstance(text_as_html, SpooledText) else len(text_as_html)
        yield from itertools.islice(_piece_rows(text_as_html, whole, over), given, None)


def _piece_rows(text_as_html: str | SpooledText, piece_bytes: int, over: Callable[[str], bool]) -> Iterator[Row]:
    from indx_assets.pipeline.readers.html import table_trees

    cut: _CutRow | None = None  # a row cut in its last cell, its parts so far
    for piece in table_trees(text_as_html, piece_bytes):
        rows, reopens_cell = _tree_rows(piece.tree, every_row=True), piece.reopens_cell
        del piece  # (its tree's nodes die with `_tree_rows`' frame): one tree at a time
        if cut is not None:
            if not rows:
                raise _disagree("a row cut in its cell is not continued by the next piece")
            if reopens_cell and len(rows) == 1:  # a row cut again in this piece
                cut.continued_by(rows[0], reopens_cell)
                yield from cut.given()
                continue
            rows[0], cut = cut.ended_by(rows[0]), None
        if reopens_cell:
            if not rows:
                raise _disagree("a piece ends in a cell of no row")
            cut = _CutRow(rows.pop(), reopens_cell, over)
        yield from (row for row in rows if row.text)
        if cut is not None:
            yield from cut.given()
    if cut is not None:
        raise _disagree("the last piece of a table ends in a cell")


def _disagree(reason: str) -> Exception:
    from indx_assets.pipeline.readers.html import PiecesDisagree

    return PiecesDisagree(reason)


class _CutRow:
    """A row a table's pieces cut in a cell (`readers.html.TablePiece.reopens_cell`), its parts
    gathered until the piece that ends it: its text is its parts' joined by a space (a cell is cut
    after whitespace or before a block, so the whole row's cell text has one there), its markup
    theirs with the tags that closed and opened it again at each cut left out.

    Its markup is let go as soon as its text so far is `over` every chunk (a page laid out in
    one cell is such a row, of megabytes, never a chunk whole), and not joined when the whole
    row's is: `over` is taken to hold for a text that holds a text it holds for (a measure of size).
    From then on its text is given a part at a time (`given`), each a row of its own, split by
    its text alone: joined, the parts of a row of megabytes were held twice beside the page. A
    chunk of the row then ends where a part does, as a chunk of a long run ends where its
    segment does (`paragraphs.run_segments`)."""

    def __init__(self, row: Row, reopens_cell: bytes, over: Callable[[str], bool]) -> None:
        self.over = over
        self.texts: list[str] = []
        self.html: list[str] = []
        self.keeps_markup = True
        self.is_header = True
        self.start = ""  # what the row's part in the next piece starts with: the tags that open it again
        self._add(row, reopens_cell)

    def _add(self, row: Row, reopens_cell: bytes) -> None:
        from indx_assets.pipeline.readers.html import reopened_row_tags

        html = row.html
        if self.start:
            if not html.startswith(self.start):
                raise _disagree("a row continued in the next piece does not start with its reopening tags")
            html = html[len(self.start):]
        if reopens_cell:
            self.start, end = reopened_row_tags(reopens_cell)
            if not html.endswith(end):
                raise _disagree("a row cut in its cell does not end with its cell's close")
            html = html[: -len(end)]
        if row.text:
            self.texts.append(row.text)
            # (the parts held are joined only while none is given: together, under every chunk)
            if self.keeps_markup and self.over(" ".join(self.texts)):
                self.keeps_markup, self.html = False, []
        if self.keeps_markup:
            self.html.append(html)
        self.is_header = self.is_header and row.is_header

    def continued_by(self, row: Row, reopens_cell: bytes) -> None:
        """`row` is the next part, and the row goes on past its piece too."""
        self._add(row, reopens_cell)

    def given(self) -> Iterator[Row]:
        """The row's text so far as a row of its own, once it is over every chunk (none before:
        its markup is kept until then, and its text joined)."""
        if not self.keeps_markup and self.texts:
            yield Row(" ".join(self.texts), "", False)
            self.texts = []

    def ended_by(self, row: Row) -> Row:
        """The whole row, `row` its last part (the rest of it, if some was `given`)."""
        self._add(row, b"")
        text = " ".join(self.texts)
        html = "".join(self.html) if self.keeps_markup and not self.over(text) else ""
        return Row(text, html, self.is_header)


def _tree_rows(tree: "LexborHTMLParser", every_row: bool = False) -> list[Row]:
    """The rows of the table in `tree` that have text (`every_row`: all of them), or of its
    parts (a table the HTML reader cut between pieces is its parts' markup, and a piece of a long
    table is a part of it)."""
    from indx_assets.pipeline.readers.html import cell_text, row_cells, table_rows

    rows: list[Row] = []
    for table in tree.css("table"):
        if _in_table(table):
            continue
        for tr in table_rows(table):
            cells = row_cells(tr)
            texts = [t for t in map(cell_text, cells) if t]
            if not texts and not every_row:
                continue
            is_header = tr.parent is not None and tr.parent.tag == "thead" or all(c.tag == "th" for c in cells)
            rows.append(Row(" ".join(texts), tr.html or "", is_header))
    return rows


def _in_table(node: "LexborNode") -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag == "table":
            return True
        parent = parent.parent
    return False


def _text_rows(text: str) -> Iterator[Row]:
    for line in iter_lines(text):
        if line.strip():
            yield Row(line.strip(), f"<tr><td>{html_lib.escape(line.strip())}</td></tr>", False)


def _split_row(part: str) -> list[Row]:
    """A piece of a row too large for a chunk, as a row of its own."""
    return [Row(part, f"<tr><td>{html_lib.escape(part)}</td></tr>", False)]


#: Rows measured at once (a measure that is `additive` sizes each row alone).
_MEASURED_AT_ONCE = 1024


def table_chunks(table: Table, opts: ChunkingOptions, table_id: str) -> Iterator[Table | TableChunk]:
    """The chunks of one isolated table (none when it holds no text), each as its rows are read."""
    text = table.text.strip()
    if not text:
        return
    measure = opts.measure
    if measure.sizes([text], opts.hard_max)[0] <= opts.hard_max:  # (a table of megabytes counted only that far)
        markup = table.metadata.text_as_html
        yield Table(text, metadata=_metadata(table, opts, markup.read() if isinstance(markup, SpooledText) else markup))
        return
    from_html = html_rows(table.metadata.text_as_html,
                          over=lambda text: measure.sizes([text], opts.hard_max)[0] > opts.hard_max) \
        if table.metadata.text_as_html else None
    rows: Iterator[Row] = from_html or _text_rows(text)
    row_sep = " " if from_html else "\n"
    headers: list[Row] = []
    if opts.repeat_table_headers:
        read: list[Row] = []  # the leading header rows, and the row after them
        for row in rows:
            read.append(row)
            if not row.is_header:
                break
        rows = itertools.chain(read, rows)
        headers = [r for r in read if r.is_header]
        if headers and max(measure.size(r.text) for r in headers) > (opts.hard_max + 1) // 2:
            headers = []  # a header that big would crowd out the rows it labels
    header_text = row_sep.join(r.text for r in headers)
    header_size = measure.size(header_text) + measure.join_cost(row_sep) if headers else 0
    for index, group_rows in enumerate(_row_groups(rows, measure, row_sep, opts.hard_max, header_size)):
        body = row_sep.join(r.text for r in group_rows)
        repeat = bool(headers) and index > 0
        chunk_text = f"{header_text}{row_sep}{body}" if repeat else body
        head_html = "<thead>" + "".join(r.html for r in headers) + "</thead>" if repeat else ""
        metadata = _metadata(table, opts, f"<table>{head_html}{''.join(r.html for r in group_rows)}</table>")
        metadata.is_continuation = True if index > 0 else None
        metadata.table_id = table_id
        metadata.chunk_index = index
        metadata.num_carried_over_header_rows = len(headers) if repeat else 0
        metadata.header_prefix_len = len(header_text) + len(row_sep) if repeat else 0
        yield TableChunk(chunk_text, metadata=metadata)


def _row_groups(rows: Iterator[Row], measure: Measure, row_sep: str, hard_max: int, header_size: int) -> Iterator[list[Row]]:
    """The rows packed into chunks of as many whole rows as fit: in `hard_max`, less the
    repeated header's `header_size` after the first chunk. A row over that alone is split into
    pieces of its text, each a chunk."""
    join = measure.join_cost(row_sep)
    given = False  # whether a chunk was given: the ones after it repeat the header

    def window() -> int:
        return hard_max - header_size if given else hard_max

    group: list[Row] = []
    group_size = 0
    for batch in iter(lambda: list(itertools.islice(rows, _MEASURED_AT_ONCE)), []):
        row_sizes = measure.sizes([r.text for r in batch]) if measure.additive else None
        for i, row in enumerate(batch):
            if group:
                if row_sizes is not None:
                    fits = group_size + join + row_sizes[i] <= window()
                else:
                    fits = measure.size(row_sep.join(r.text for r in [*group, row])) <= window()
                if fits:
                    group.append(row)
                    group_size += join + (row_sizes[i] if row_sizes is not None else 0)
                    continue
                yield group
                given, group, group_size = True, [], 0
            size = row_sizes[i] if row_sizes is not None else measure.size(row.text)
            if size <= window():
                group, group_size = [row], size
                continue
            # one row alone is over the window: split its text; each piece is its own chunk (the
            # window is the same for all but a first piece of the table, narrowed after it as the
            # pieces are cut: a row of megabytes is not copied for the rest of it)
            splitter = TextSplitter(measure, max(1, window()))
            for part, _ in splitter.iter_split(row.text):
                yield _split_row(part)
                given = True
                splitter.maxlen = max(1, window())
    if group:
        yield group


def _metadata(table: Table, opts: ChunkingOptions, text_as_html: str | None) -> ElementMetadata:
    src = table.metadata
    metadata = ElementMetadata(
        page_number=src.page_number,
        bbox=src.bbox,
        text_as_html=text_as_html,
        section_title=src.section_title,
        parent_id=src.parent_id,
        category_depth=src.category_depth,
    )
    if opts.include_orig_elements:
        metadata.orig_elements = [table]
    return metadata
