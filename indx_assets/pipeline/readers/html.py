"""The HTML reader: visible text only, as a sequence of blocks.

One walk over the parsed tree (Lexbor, via selectolax) yields the page's blocks: headings,
paragraphs, list items, tables, code. The reader's page text is those blocks joined by a
blank line, and structure-aware chunkers reuse the same blocks, so their offsets agree with
the text the reader reported. Scripts, styles, templates and hidden nodes are dropped. A
document nested too deep to parse in reasonable time (`MAX_BLOCK_DEPTH`) is refused: its page
is `failed`, with the reason.

A large page is parsed a piece at a time (`html_cuts`), each piece's tree let go once walked, and
its text written to a temporary file (`scratch.scratch_file`) read back once whole (see `_Walker`); a table cut between
pieces (between its rows, or in a cell) is one block, its rows written as they are read
(`_Walker._table`, `_Walker._row`), and so is a `pre`
(`_Walker._code`); a piece whose tree is not what its cut promised (`PiecesDisagree`) makes the
page read again parsed whole; a file on disk is mapped (in UTF-8 as it is, in another encoding
once decoded into a temporary file), its pages dropped once parsed (`read_html_file`).
"""

import codecs
import io
import logging
import mmap
import os
import re
from array import array
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from typing import BinaryIO, NamedTuple, TypeVar
from dataclasses import dataclass, replace

from selectolax.lexbor import LexborHTMLParser, LexborNode

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.freed_memory import return_freed_memory
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.html_attrs import BREAK_AFTER, BREAK_BEFORE, hidden
from indx_assets.pipeline.readers.html_cuts import PIECE_BYTES, Piece, Source, html_pieces, map_releaser, windows
from indx_assets.pipeline.readers.text import (DecodedText, NotText, decode_text, is_utf8_file, same_utf8_text,
                                               transcode_file, utf8_text)
from indx_assets.pipeline.scratch import SpooledText, SpooledTexts, scratch_file
from indx_assets.pipeline.whitespace import collapse_whitespace

log = logging.getLogger(__name__)
#: What a walk makes of its page text (`_walk`'s `finish`).
T = TypeVar("T")

BLOCK_SEPARATOR = "\n\n"

_SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object", "embed", "canvas",
     "select", "button", "-comment"}
)
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "blockquote", "dl", "dt", "dd",
     "figure", "figcaption", "form", "fieldset", "address", "details", "summary", "ul", "ol", "li", "hr", "body",
     "caption", "center", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table"}
)
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_SPACE = re.compile(r"\s+")
_NOT_SPACE_BYTE = re.compile(rb"[^ \t\n\r\x0b\x0c]")  # `bytes.isspace`
#: The window the depth check reads the source in.
_WINDOW = 1 << 20
#: A walk of a source larger than this hands the memory its trees took back to the system
#: (8 MiB of paragraphs then peaks 6-8 MiB lower; a walk of a small page is not worth the trim).
TRIMMED_AFTER = 4 * PIECE_BYTES

#: Block elements nested deeper than this are refused. Each block start tag makes the parser
#: search the stack of open elements (for a `p` to close) down to the nearest table cell or
#: other scope boundary, so parsing costs the square of the depth: 20,000 nested `div`s take
#: half a second, 100,000 (a 500 kB file) half a minute. Real pages nest a few dozen deep.
MAX_BLOCK_DEPTH = 10_000
_DEPTH_TAG = re.compile(
    rb"<(/?)(address|article|aside|blockquote|center|details|dialog|dir|div|dl|fieldset|figcaption|figure|footer"
    rb"|form|header|hgroup|main|menu|nav|ol|section|summary|ul|applet|button|caption|html|marquee|object|table"
    rb"|td|template|th)\b"  # matched in the lower-cased text: twice as fast as IGNORECASE
)
#: Where the parser's search stops (the HTML standard's default scope, and `button`).
_SCOPES = frozenset({b"applet", b"button", b"caption", b"html", b"marquee", b"object", b"table", b"td", b"template", b"th"})
#: `</figcaption` and the character after it.
_LONGEST_DEPTH_TAG = 16


class HtmlTooDeep(ValueError):
    """The HTML nests block elements deeper than `MAX_BLOCK_DEPTH` (see there)."""


def block_depth(html: str | Source) -> int:
    """The deepest nesting of block elements within one scope (a table cell and the like),
    counted from the tags alone: a cheap bound taken before the document is parsed. Bytes are
    lower-cased a window at a time (ASCII, as the tokenizer does), so no copy of a page is made."""
    depths = [0]  # one count per open scope
    deepest = 0
    source = html.encode("utf-8", errors="ignore") if isinstance(html, str) else html
    # a tag that starts in a window is matched whole in the window and a little past it
    for window in _windows(source, _LONGEST_DEPTH_TAG):
        window = window.lower()
        for match in _DEPTH_TAG.finditer(window, 0, _WINDOW + _LONGEST_DEPTH_TAG):
            if match.start() >= _WINDOW:
                break
            closing, tag = match.groups()
            if tag in _SCOPES:
                if not closing:
                    depths.append(0)
                elif len(depths) > 1:
                    depths.pop()
            elif closing:
                depths[-1] = max(0, depths[-1] - 1)
            else:
                depths[-1] += 1
                deepest = max(deepest, depths[-1])
    return deepest


def _windows(source: Source, past: int = 0) -> Iterator[bytes]:
    """`source` `_WINDOW` bytes at a time, each with `past` bytes after it, a map's pages let go
    behind each window: a scan of a large file's map holds a window of it, not the file."""
    return windows(source, _WINDOW, past, map_releaser(source) if isinstance(source, mmap.mmap) else None)


def let_go_reader(source: mmap.mmap) -> BinaryIO:
    """`source` read as a file front to back, its pages let go behind each read (`is_utf8_file`
    of a large file's map then holds a step of it, not the file)."""
    return _LettingGo(source)  # type: ignore[return-value]


class _LettingGo(io.RawIOBase):
    """`let_go_reader`'s file."""

    def __init__(self, source: mmap.mmap) -> None:
        super().__init__()
        self._source, self._release = source, map_releaser(source)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        data = self._source.read(-1 if size is None else size)
        self._release(self._source.tell())
        return data

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._source.seek(offset, whence)
        return self._source.tell()

    def tell(self) -> int:
        return self._source.tell()


def check_depth(html: str | Source) -> None:
    """`HtmlTooDeep` for nesting that would make parsing take quadratic time."""
    # with no more tags than the limit, nothing can nest past it: skip the scan
    if isinstance(html, str):
        tags = html.count("<")
    else:  # a window at a time: a map has no `count`
        tags = sum(window.count(b"<") for window in _windows(html))
    if tags > MAX_BLOCK_DEPTH and (depth := block_depth(html)) > MAX_BLOCK_DEPTH:
        raise HtmlTooDeep(f"the HTML nests block elements {depth:,} deep (at most {MAX_BLOCK_DEPTH:,} are read): "
                          "parsing it would take time growing with the square of that depth")


def parse_html(html: str | bytes, checked: bool = False) -> LexborHTMLParser:
    """The parsed document, from its text or its UTF-8 bytes (what the parser reads: a text is
    encoded to them first); `HtmlTooDeep` (see `check_depth`, skipped when `checked`)."""
    if not checked:
        check_depth(html)
    tree = LexborHTMLParser(html)
    # The parser keeps the bytes it read, for `clone` alone (which nothing here calls): let
    # them go, so a page is not held as its bytes beside its tree.
    tree.raw_html = b""
    return tree


class TablePiece(NamedTuple):
    """A piece of a table's markup, parsed (`table_trees`): its tree, and, where the piece ends
    in the last cell of its last row, which the next piece's first row continues, the markup that
    opens the table again down to that cell (`reopens_cell`: `html_cuts.Piece.table`; see
    `reopened_row_tags`), else nothing."""

    tree: LexborHTMLParser
    reopens_cell: bytes = b""


def table_trees(markup: str | SpooledText, piece_bytes: int = PIECE_BYTES) -> Iterator[TablePiece]:
    """The parsed pieces of a table's `markup` (a table block's, `HtmlBlock.html`), a piece at a
    time when it is longer than a piece (`html_pieces`: cut between rows, or in a cell as the
    page is, so a page laid out in one cell is cut too; each piece after the first opening the
    table again), each tree let go once the next is asked for. The pieces are cut from a map of
    the markup's bytes spooled to a scratch file (`scratch.SpooledText`: a long table's markup
    from the walk is already; from the bytes held, where its folder takes no file).
    `HtmlTooDeep` as `parse_html`."""
    if isinstance(markup, str):
        if len(markup) <= piece_bytes:
            yield TablePiece(parse_html(markup))
            return
        try:
            spooled = SpooledText()
        except OSError:  # the scratch folder is full or gone
            yield from _piece_trees(markup.encode("utf-8", errors="ignore"), piece_bytes)
            return
        with closing(spooled):
            spooled.write(markup)
            yield from table_trees(spooled, piece_bytes)
        return
    if markup.size <= piece_bytes:
        yield TablePiece(parse_html(markup.read()))
        return
    with markup.mapped() as source:
        yield from _piece_trees(source, piece_bytes)


def _piece_trees(source: Source, piece_bytes: int) -> Iterator[TablePiece]:
    """`table_trees` of a table's UTF-8 bytes, or of a map of them (its pages let go as cut)."""
    check_depth(source)
    released = map_releaser(source) if isinstance(source, mmap.mmap) else None
    parsed = 0
    for piece in html_pieces(source, piece_bytes, released):
        parsed += len(piece.markup)
        yield TablePiece(parse_html(piece.markup, checked=True), piece.table if piece.cell else b"")
        if parsed >= TRIMMED_AFTER:  # the trees freed so far handed back, as a walk's are (`_walk`)
            parsed = 0
            return_freed_memory()


def utf8_source(content: bytes, decoded: DecodedText) -> bytes:
    """The document as the UTF-8 bytes the parser reads (`LexborHTMLParser` encodes a text to
    them): `content` itself when it is that already (UTF-8 without a byte-order mark), so a
    large page is not held as bytes, text and bytes again while it is parsed."""
    if decoded.encoding == "utf-8" and not content.startswith(codecs.BOM_UTF8):
        return content
    return decoded.text.encode("utf-8", errors="ignore")  # as the parser encodes a text


@dataclass(frozen=True, slots=True)
class HtmlBlock:
    """One block of visible text. `kind`: title, text, list_item, table or code. `html`: a
    table's markup (from `page_blocks`, a long table's spooled: `_Walker._table_markup`).
    `ends_page`: the document's CSS starts a printed page after it."""

    kind: str
    text: str
    level: int = 0
    html: str | SpooledText | None = None
    ends_page: bool = False


class BlockSpan(NamedTuple):
    """A block as `page_blocks` gives it: an `HtmlBlock` whose text is its span of the page
    text (`start`, `end`), which the caller holds."""

    kind: str
    level: int
    start: int
    end: int
    html: str | SpooledText | None
    ends_page: bool


def _hidden(node: LexborNode) -> bool:
    return hidden(node.tag or "", node.attributes)


def _children(node: LexborNode) -> Iterator[LexborNode]:
    child = node.child
    while child is not None:
        yield child
        child = child.next


#: Elements whose text must not run into their neighbours' when flattened to inline text.
_BREAKING = _BLOCKS | {"tr", "td", "th"}


def _visible_text(node: LexborNode) -> str:
    """Text under `node`, hidden parts dropped, whitespace left as found.

    Iterative (an explicit stack), so hostile nesting depth cannot exhaust Python's stack.
    Block elements and cells are set apart by a line break so their words never fuse.
    """
    parts: list[str] = []
    stack: list[LexborNode | str] = list(reversed(list(_children(node))))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
        elif item.tag == "-text":
            parts.append(item.text_content or "")
        elif item.tag == "br":
            parts.append("\n")
        elif item.tag not in _SKIPPED and not _hidden(item):
            if item.tag in _BREAKING:
                parts.append("\n")
                stack.append("\n")
            stack.extend(reversed(list(_children(item))))
    return "".join(parts)


def table_rows(table: LexborNode) -> Iterator[LexborNode]:
    """The visible rows of `table` itself; rows of tables nested in its cells belong to their cells."""
    for child in _children(table):
        if _hidden(child):
            continue
        if child.tag == "tr":
            yield child
        elif child.tag in ("thead", "tbody", "tfoot"):
            yield from (row for row in _children(child) if row.tag == "tr" and not _hidden(row))


def row_cells(tr: LexborNode) -> list[LexborNode]:
    """The visible cells of the row `tr`."""
    return [td for td in _children(tr) if td.tag in ("td", "th") and not _hidden(td)]


def cell_text(td: LexborNode) -> str:
    """The visible text of a cell, collapsed (what the page text holds of it)."""
    return _SPACE.sub(" ", _visible_text(td)).strip()


def _row_cells(table: LexborNode) -> Iterator[list[str]]:
    """The text of each visible row's visible cells. A table block's text is its rows that
    have any, a line each: their cells joined by " | "."""
    for tr in table_rows(table):
        yield [cell_text(td) for td in row_cells(tr)]


class PiecesDisagree(RuntimeError):
    """A piece's tree is not what its cut promised (`html_cuts.Piece`): a fault of the cuts, not
    of the page, which `_walk` then reads again parsed whole."""


def _open_element(root: LexborNode, tag: str) -> LexborNode:
    """The table or `pre` a piece ends inside (see `html_cuts.Piece`): what stays open at a
    piece's end is the last child of what holds it, from the body down, and nothing follows it."""
    node: LexborNode | None = root
    while node is not None and node.tag != tag:
        node = node.last_child
    if node is None:
        raise PiecesDisagree(f"a piece cut inside a {tag} holds none open at its end")
    return node


def _reopened_tags(table: bytes, element: str = "table") -> tuple[str, str]:
    """What the markup of a table (or of its row `tr` it is cut in, `element`) starts with in a
    piece that opens it again with `table` (see `html_cuts.Cut`), and ends with in the piece
    before: the parser's serialization of that markup, parsed alone, and the end tags of the
    elements it leaves open (the table's, its row group's, a row's and its cell's and those open
    in it; not the empty `button` or `object` that set the list of active formatting elements or
    the form pointer: see `html_cuts._Scan._off_stack`)."""
    tree = parse_html(table, checked=True)
    reopened = tree.body.child if tree.body is not None else None
    if reopened is None or reopened.tag != "table":
        raise PiecesDisagree(f"a table's reopening tags parse to {(reopened.html if reopened else '')!r}")
    while reopened is not None and reopened.tag != element:
        reopened = reopened.last_child
    html = (reopened.html or "") if reopened is not None else ""
    open_tags: list[str] = []
    node = reopened
    while node is not None and node.tag not in ("-text", "button", "object"):
        open_tags.append(node.tag or "")
        node = node.last_child
    end = "".join(f"</{tag}>" for tag in reversed(open_tags))
    if reopened is None or len(open_tags) < 2 or not html.endswith(end):
        raise PiecesDisagree(f"a {element}'s reopening tags parse to {html!r}")
    return html[: -len(end)], end


def reopened_row_tags(table: bytes) -> tuple[str, str]:
    """What a row cut in its last cell (`TablePiece.reopens_cell`, the tags that open it again)
    starts with in the next piece's markup and ends with in this piece's: the row's markup is the
    one's without its end and the other's without its start, as the whole parse has it."""
    return _reopened_tags(table, "tr")


#: The kinds of block (`HtmlBlock.kind`).
_KINDS = ("text", "title", "list_item", "table", "code")


class _Spans:
    """The blocks of a walk: each block's kind, level and span in the page text, the markup of
    its tables and which blocks end a printed page, held in arrays (a page of short paragraphs
    has a block every 80 bytes: as tuples of objects, they cost more than the page), the
    markup of its small tables spooled (`SpooledTexts`), in page order."""

    def __init__(self) -> None:
        self._kinds = bytearray()
        self._levels = bytearray()
        self._ends = array("q")  # start, end, start, end, ...
        self._marked = array("q")  # the blocks with a small table's markup, in order
        self._markup = SpooledTexts()  # ... and that markup, each its block's
        self._spooled: dict[int, SpooledText] = {}  # a long table's markup, spooled on its own
        self._page_ends: set[int] = set()

    def append(self, kind: str, level: int, start: int, end: int, markup: str | SpooledText | None) -> None:
        if isinstance(markup, SpooledText):
            self._spooled[len(self._kinds)] = markup
        elif markup is not None:
            self._marked.append(len(self._kinds))
            self._markup.append(markup)
        self._kinds.append(_KINDS.index(kind))
        self._levels.append(level)
        self._ends.extend((start, end))

    def end_page(self) -> None:
        """The last block ends a printed page."""
        self._page_ends.add(len(self._kinds) - 1)

    def __iter__(self) -> Iterator[BlockSpan]:
        """Each block's kind, level, start, end, markup and whether it ends a printed page."""
        marked = 0  # the next block with a small table's markup: `_marked[marked]`
        for i, kind in enumerate(self._kinds):
            markup: str | SpooledText | None = self._spooled.get(i)
            if marked < len(self._marked) and self._marked[marked] == i:
                markup = self._markup[marked]
                marked += 1
            yield BlockSpan(_KINDS[kind], self._levels[i], self._ends[2 * i], self._ends[2 * i + 1], markup,
                            i in self._page_ends)


#: What a walk leaves on its stack after an element's children: the kind of block it closes.
_Close = tuple[str, int]
#: ... and, after that, where the element's CSS starts a printed page.
_END_PAGE = "end page"


class _Walker:
    """Visits parsed trees in document order and writes their blocks straight into one page
    text (blocks joined by `BLOCK_SEPARATOR`): a block is a span of that text, not a string of
    its own, and inline text is collapsed as it arrives (`inline`), as `collapse_whitespace` would the
    block's inline text joined. `blocks` keeps each block's span when asked (`keep_blocks`).

    The text goes to `sink` (a binary file) as UTF-8 and is read back once the walk is done
    (`_walk`): a string grown between the parses of a large page's pieces had the trees'
    allocations between its growth steps, so malloc copied it and kept the heap it left (a page of
    64 MiB of words cost twice its size); read back, it grows as a text file's does."""

    def __init__(self, sink: BinaryIO, keep_blocks: bool) -> None:
        self.blocks: _Spans | None = _Spans() if keep_blocks else None
        self.sink = sink
        self.length = 0  # of the page text so far, in characters
        self.start: int | None = None  # where the open block's text starts in the page
        self.space = False  # whitespace since the open block's last word
        self.count = 0
        self.last_ends_page = False
        self.any_ends_page = False
        #: a table cut between pieces (see `_table`): where its text starts (None: no row yet),
        #: its markup so far when blocks are kept (`_table_markup`), what the next piece
        #: reopens it with, and a row cut in its last cell (see `_row`): its cells while none
        #: has text, unwritten, else whether that cell's text written so far has any
        self.table_start: int | None = None
        self.table_html: list[str] | SpooledText = []
        self.table_reopened = b""
        self.row_held: list[str] | None = None
        self.cell_has_text: bool | None = None
        #: the code block of a `pre` (see `_code`): where its text starts (None: no text but
        #: whitespace yet, held in `code_lead`), the line ends at its end so far (written only
        #: if text follows), and whether a piece ended inside it (the next piece continues it)
        self.code_start: int | None = None
        self.code_lead = ""
        self.code_newlines = 0
        self.pre_open = False

    def _write(self, text: str) -> None:
        self.sink.write(text.encode("utf-8"))
        self.length += len(text)

    def _open(self) -> None:
        if self.count:
            self._write(BLOCK_SEPARATOR)
        self.start = self.length

    def inline(self, piece: str) -> None:
        if not piece:
            return
        words = collapse_whitespace(piece)
        if words:
            if self.start is None:
                self._open()
            elif self.space or piece[0].isspace():  # `\s` is `str.isspace`
                self._write(" ")
            self._write(words)
            self.space = piece[-1].isspace()
        else:
            self.space = True

    def flush(self, kind: str = "text", level: int = 0, html: str | SpooledText | None = None) -> None:
        self.space = False
        if self.start is None:
            return
        if self.blocks is not None:
            self.blocks.append(kind, level, self.start, self.length, html)
        self.start = None
        self.count += 1
        self.last_ends_page = False

    def end_page(self) -> None:
        self.flush()
        if self.count and not self.last_ends_page:
            self.last_ends_page = self.any_ends_page = True
            if self.blocks is not None:
                self.blocks.end_page()

    def _code(self, text: str) -> None:
        """Add a part of a `pre`'s text to its code block, written as it comes: the block is the
        whole text with the line ends at both ends left out, and none if it is all whitespace
        (`text.strip("\n")`, kept if `.strip()`), so a `pre` cut between pieces is one block."""
        if self.code_start is None:
            if not text.strip():
                self.code_lead += text
                return
            text, self.code_lead = (self.code_lead + text).lstrip("\n"), ""
            if self.count:
                self._write(BLOCK_SEPARATOR)
            self.code_start = self.length
        body = text.rstrip("\n")
        if body:
            self._write("\n" * self.code_newlines)
            self._write(body)
            self.code_newlines = len(text) - len(body)
        else:
            self.code_newlines += len(text)

    def _code_end(self) -> None:
        """The `pre`'s close: its code block ends, if it has one."""
        if self.code_start is not None:
            self.start = self.code_start
            self.flush("code")
        self.code_start, self.code_lead, self.code_newlines = None, "", 0

    def _table(self, table: LexborNode, continues: bool, ends_in_table: bytes, ends_in_cell: bool) -> None:
        """A table's block: its rows' text, a line each, written as they are read. A table cut
        between pieces is one block: the part in a piece that `continues` the one before adds its
        rows to it, and the part a piece `ends_in_table` leaves it open; its markup is the parts'
        joined where the pieces reopened it (`_reopened_tags`), as the whole page's parse has it.
        A piece that ends in a cell (`ends_in_cell`) leaves its last row open (`_row`)."""
        if not continues:
            self.table_start, self.table_html, self.row_held, self.cell_has_text = None, [], None, None
        rows = list(_row_cells(table))  # (a piece's)
        continued = self.row_held is not None or self.cell_has_text is not None
        if (continued and not (rows and rows[0])) or (ends_in_cell and not (rows and rows[-1])):
            raise PiecesDisagree("a table cut in a cell has no row on one side of the cut")
        for i, cells in enumerate(rows):
            self._row(cells, continues=continued and i == 0, open_cell=ends_in_cell and i == len(rows) - 1)
        if self.blocks is not None:  # the markup, only where blocks are kept: as large as the table
            html = table.html or ""
            if continues:
                start, _ = _reopened_tags(self.table_reopened)
                if not html.startswith(start):
                    raise PiecesDisagree("a reopened table's markup does not start with its reopening tags")
                html = html[len(start):]
            if ends_in_table:
                _, end = _reopened_tags(ends_in_table)
                if not html.endswith(end):
                    raise PiecesDisagree("a table open at a piece's end does not end with its row group's close")
                html = html[: -len(end)]
            self._table_markup(html, spool=bool(ends_in_table))
        self.table_reopened = ends_in_table
        if not ends_in_table and self.table_start is not None:
            markup, self.table_html = self.table_html, []
            self.start, self.table_start = self.table_start, None
            self.flush("table", html="".join(markup) if isinstance(markup, list) else markup)  # (kept only with blocks)

    def _table_markup(self, html: str, spool: bool) -> None:
        """Add a part of a table's markup. A table that goes on past its piece (`spool`) is long:
        its markup is spooled to a scratch file (`SpooledText`), where the chunker reads its rows
        again a piece at a time; held as parts and joined, it cost the walk three times its size
        beside the page text. (Where no scratch file can be made, it is held.)"""
        if spool and isinstance(self.table_html, list):
            try:
                spooled = SpooledText()
            except OSError:  # the scratch folder is full or gone
                spooled = None
            if spooled is not None:
                for part in self.table_html:
                    spooled.write(part)
                self.table_html = spooled
        if isinstance(self.table_html, list):
            self.table_html.append(html)
        else:
            self.table_html.write(html)

    def _row(self, cells: list[str], continues: bool = False, open_cell: bool = False) -> None:
        """Write a table's row, if it has text, as a line of its block (the first opens it): its
        cells' text joined by " | ". A row cut in a cell is written as its parts come: the part
        that `continues` it starts with the rest of that cell's text, which follows a block's
        start or whitespace (so a space sets it apart from the cell's text before it, where both
        have any); the part with an `open_cell` at its end is written once a cell has text, else
        held."""
        if continues and self.cell_has_text is not None:
            if cells[0] and self.cell_has_text:
                self._write(" ")
            self._write(" | ".join(cells))
            has_text = (self.cell_has_text or bool(cells[0])) if len(cells) == 1 else bool(cells[-1])
            self.cell_has_text = has_text if open_cell else None
            return
        if continues:
            held, self.row_held = self.row_held or [""], None
            cells = [*held[:-1], *cells]  # (the held cells have no text)
        if not any(cells):
            self.row_held = cells if open_cell else None
            return
        if self.table_start is None:
            if self.count:
                self._write(BLOCK_SEPARATOR)
            self.table_start = self.length
        else:
            self._write("\n")
        self._write(" | ".join(cells))
        self.cell_has_text = bool(cells[-1]) if open_cell else None

    def walk(self, root: LexborNode, ends_in_table: bytes = b"", ends_in_pre: bool = False,
             ends_in_cell: bool = False) -> None:
        """Visit the tree under `root` in document order, with an explicit stack (no recursion).
        A piece that ends inside a table (`ends_in_table`: its tags, see `html_cuts.Piece`; in a
        cell: `ends_in_cell`) leaves that table open, and the next piece's first table continues
        it; so with a `pre` (`ends_in_pre`) and the next piece's first `pre`."""
        open_table = _open_element(root, "table").mem_id if ends_in_table else None
        open_pre = _open_element(root, "pre").mem_id if ends_in_pre else None
        continues = bool(self.table_reopened)
        continues_pre, self.pre_open = self.pre_open, False
        stack: list[LexborNode | _Close | str] = list(reversed(list(_children(root))))
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):
                self.flush(*item)
                continue
            if isinstance(item, str):
                self.end_page()
                continue
            tag = item.tag
            if tag == "-text":
                self.inline(item.text_content or "")
                continue
            if tag == "br":
                self.inline(" ")
                continue
            if tag in _SKIPPED or _hidden(item):
                continue
            style = item.attributes.get("style") or ""
            if BREAK_BEFORE.search(style):
                self.end_page()
            if BREAK_AFTER.search(style):
                stack.append(_END_PAGE)  # popped after the element's children and its close
            if tag == "table":
                self.flush()
                ends_here = item.mem_id == open_table
                self._table(item, continues, ends_in_table if ends_here else b"", ends_in_cell and ends_here)
                continues = False
            elif tag == "pre":
                self.flush()
                continues_pre = False
                self._code(_visible_text(item))
                if item.mem_id == open_pre:
                    self.pre_open = True
                else:
                    self._code_end()
            else:
                close: _Close | None = None
                if tag in _HEADINGS:
                    close = ("title", _HEADINGS[tag])
                elif tag == "li":
                    close = ("list_item", 0)
                elif tag in _BLOCKS:
                    close = ("text", 0)
                if close is not None:
                    self.flush()
                    stack.append(close)
                stack.extend(reversed(list(_children(item))))
        if continues_pre:
            raise PiecesDisagree("a piece ended inside a pre that the next does not open again")


def html_blocks(html: str | bytes, piece_bytes: int = PIECE_BYTES) -> tuple[HtmlBlock, ...]:
    """The visible blocks of an HTML document (its text or UTF-8 bytes, see `parse_html`), in
    document order (`HtmlTooDeep`: see `parse_html`). A large document is parsed a piece at a
    time (`html_pieces`, at most `piece_bytes` each where it can be cut)."""
    return tuple(iter_html_blocks(html, piece_bytes))


def iter_html_blocks(html: str | bytes, piece_bytes: int = PIECE_BYTES) -> Iterator[HtmlBlock]:
    """`html_blocks`, each block made as it is asked for: the page's text is walked whole
    first, but only the blocks' places in it are held, not a string and an object per block."""
    page, blocks = _walk(html.encode("utf-8", errors="ignore") if isinstance(html, str) else html, piece_bytes,
                         keep_blocks=True)
    for kind, level, start, end, markup, ends_page in blocks:
        # (a long table's markup read back: only `page_blocks`, for the chunker, gives it spooled)
        yield HtmlBlock(kind, page[start:end], level, markup.read() if isinstance(markup, SpooledText) else markup,
                        ends_page)


def page_blocks(html: Source, page_text: str, piece_bytes: int = PIECE_BYTES) -> Iterator[BlockSpan] | None:
    """`iter_html_blocks` of the UTF-8 `html` (bytes, or a map of a file of them, whose pages are
    let go as they are walked) whose page text the caller holds (`page_text`, as the reader read
    it): the walk's text is compared with it rather than kept beside it, and each block is given
    as its span of it (a long block's text need never be held whole). None when the walk's text
    is not `page_text`."""
    released = map_releaser(html) if isinstance(html, mmap.mmap) else None
    same, blocks = _walk(html, piece_bytes, keep_blocks=True, released=released,
                         finish=lambda sink: same_utf8_text(sink, page_text))
    return iter(blocks) if same else None


def _walk(source: Source, piece_bytes: int, keep_blocks: bool, released: Callable[[int], None] | None = None,
          finish: Callable[[BinaryIO], T] = utf8_text) -> tuple[T, _Spans]:
    """What `finish` makes of the page text of every piece of `source` (`html_pieces`; by
    default the text itself), each piece's tree let go once walked, and its blocks' spans when
    `keep_blocks` (see `_Walker`; else none). A piece whose tree is not what its cut promised
    (`PiecesDisagree`, a fault of the cuts) costs the page its bound, never its text: the page
    is read again, parsed whole."""
    check_depth(source)
    try:
        return _walk_pieces(html_pieces(source, piece_bytes, released), keep_blocks, finish)
    except PiecesDisagree as exc:
        log.warning("HTML read again parsed whole: %s", exc)
        return _walk_pieces(html_pieces(source, len(source)), keep_blocks, finish)
    finally:
        if len(source) > TRIMMED_AFTER:
            # the parser's trees, freed a piece at a time, stay in the C heap: handed back, so
            # that what is made next (the page's text, its chunks) does not land beside them
            return_freed_memory()


def _walk_pieces(pieces: Iterator[Piece], keep_blocks: bool, finish: Callable[[BinaryIO], T]) -> tuple[T, _Spans]:
    """`_walk` of `pieces` parsed and walked one by one; `PiecesDisagree` where a piece's tree
    is not what its cut promised."""
    with scratch_file() as sink:
        walker = _Walker(sink, keep_blocks)
        for markup, ends_in_table, ends_in_pre, ends_in_cell in pieces:
            tree = parse_html(markup, checked=True)
            del markup
            root = tree.body or tree.root
            if root is not None:
                walker.walk(root, ends_in_table, ends_in_pre, ends_in_cell)
            del tree, root
        if walker.table_reopened or walker.pre_open:
            raise PiecesDisagree("the last piece ends inside a table or pre")
        if walker.any_ends_page:
            walker.end_page()  # a document set in printed pages ends one where it ends
        walker.flush()
        sink.seek(0)
        return finish(sink), walker.blocks or _Spans()


def read_html(content: bytes, config: ReaderConfig) -> DocumentRead:
    return read_html_file(io.BytesIO(content), config)


def read_html_file(file: BinaryIO, config: ReaderConfig) -> DocumentRead:
    """The page of an HTML file. Its UTF-8 bytes are parsed a piece at a time (`html_pieces`),
    each piece's tree let go once walked and its text written straight into the page's; a file
    on disk is mapped, not read (one not in UTF-8 is first decoded a step at a time into a
    temporary file in UTF-8, which is mapped), and its pages dropped from memory once parsed."""
    media_type = "text/html"
    try:
        with _mapped(file) as mapped:
            if mapped is None:
                return _read_decoded(file)
            source, encoding = mapped
            if encoding == "utf-8" and not _NOT_SPACE_BYTE.search(source):  # `not content.strip()`, no copy
                return DocumentRead.from_pages(media_type, (PageOutput(page=1, status="empty", reader="html"),))

            text, _ = _walk(source, PIECE_BYTES, keep_blocks=False, released=map_releaser(source))
        return _page(text, encoding)
    except (NotText, HtmlTooDeep) as exc:
        return DocumentRead.from_pages(media_type, (PageOutput(page=1, status="failed", reader="html", reason=str(exc)),))


@contextmanager
def _mapped(file: BinaryIO) -> Iterator[tuple[mmap.mmap, str] | None]:
    """A read-only map of `file`'s text in UTF-8 and the file's encoding when it is a non-empty
    file on disk, else `None`: a map's pages can be let go once parsed; bytes read are held until
    the end. A file in UTF-8 (`is_utf8_file`) is mapped itself; another is decoded into a
    temporary file first (`transcode_file`; an empty one is read as bytes are)."""
    try:
        fileno = file.fileno()
    except (AttributeError, OSError):  # io.BytesIO: UnsupportedOperation is an OSError
        yield None
        return
    if file.tell() != 0 or os.fstat(fileno).st_size == 0:
        yield None
        return
    if is_utf8_file(file):
        with mmap.mmap(fileno, 0, access=mmap.ACCESS_READ) as source:
            yield source, "utf-8"
        return
    with scratch_file() as utf8:
        encoding = transcode_file(file, utf8)
        utf8.flush()
        if utf8.tell() == 0:  # nothing to map: no visible text
            file.seek(0)
            yield None
            return
        with mmap.mmap(utf8.fileno(), 0, access=mmap.ACCESS_READ) as source:
            yield source, encoding


def _read_decoded(file: BinaryIO) -> DocumentRead:
    """The page of an HTML file read whole and decoded (`decode_text`): bytes in memory, or
    text not in UTF-8, whose decoded text is encoded to the UTF-8 bytes the parser reads."""
    media_type = "text/html"
    content = file.read()
    if not content or content.isspace():  # what `not content.strip()` says, without a copy
        return DocumentRead.from_pages(media_type, (PageOutput(page=1, status="empty", reader="html"),))
    decoded = decode_text(content)
    encoding, source = decoded.encoding, utf8_source(content, decoded)
    del decoded, content  # parsed from its UTF-8 bytes: the decoded text is not held through the parse
    text, _ = _walk(source, PIECE_BYTES, keep_blocks=False)
    del source
    return _page(text, encoding)


def _page(text: str, encoding: str) -> DocumentRead:
    if not text:
        page = PageOutput(page=1, status="empty", reader="html", reason="no visible text")
    else:
        page = PageOutput(page=1, text=text, status="ok", reader="html")
    return DocumentRead.from_pages("text/html", (page,), encoding=encoding)
