"""The OpenDocument readers: `.odt` as a Word document, `.ods` as a workbook, `.odp` as a deck.

An OpenDocument file is a zip of XML. It opens through the OOXML guard (`verified_parts`: zip
bombs, lying sizes, corrupt entries and any DTD or entity declaration refused before any XML
is parsed), then `content.xml` and `styles.xml` are parsed by lxml without entity resolution
or network access. A password-protected file (its manifest lists `encryption-data`) is
`encrypted`. Each kind is mapped onto the model of its Office Open XML counterpart, so the
same chunkers cut it and the same rules hold:

- **Text** (`load_odt` -> the Word reader's `WordDocument`): `text:h` headings at their outline
  level (and paragraphs of the `Title` style at level 1), paragraphs, list items (nested
  lists too), tables (rows of ` | `-separated cells, HTML with `colspan`/`rowspan`, header
  rows in `<thead>`), text boxes and pictures of frames after the paragraph anchoring them,
  footnotes/endnotes and comments after the page's body, the master page's header and footer
  as every page's furniture. Pages start at a page break a paragraph's style asks for
  (`fo:break-before`/`fo:break-after`) and where LibreOffice recorded one when it last laid
  the document out (`text:soft-page-break`).
- **Spreadsheet** (`load_ods` -> the spreadsheet reader's `Workbook`): one page per sheet, cell
  values as Excel's are read (numbers, dates, booleans from their stored values, text as
  written), table regions between empty rows. Hidden sheets and hidden (collapsed or
  filtered) rows are recorded and left out. A sheet whose repeated rows and cells with
  content would make more than `MAX_REPEATED_CELLS` cells (a repetition bomb: a few bytes for
  billions of cells) fails, its reason saying so; the other sheets are read.
- **Presentation** (`load_odp` -> the PowerPoint reader's `Deck`): one page per slide; frames
  with text, custom shapes with text, tables and pictures, each with its box on the slide
  (groups flattened: ODF states every shape's position on the page), the title first, then
  top-to-bottom, left-to-right; speaker notes in the page metadata; hidden slides marked.
"""

import datetime as dt
import re
from dataclasses import replace
from html import escape
from typing import Any

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.media import ODP, ODS, ODT
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.docx import BLOCK_SEPARATOR, WordBlock, WordDocument, WordPage
from indx_assets.pipeline.readers.ooxml_guard import PackageRefused, verified_parts
from indx_assets.pipeline.readers.sheets import REGION_SEPARATOR, Sheet, Workbook, cell_text, regions_of, sheet_pages

READER = "odf"
#: Cells with content a sheet may gain by repetition (`number-rows-repeated`,
#: `number-columns-repeated`); past it the sheet fails (see the module docstring).
MAX_REPEATED_CELLS = 1_000_000
#: The widest row read (LibreOffice's and Excel's limit); content past it fails the sheet.
MAX_COLUMNS = 16_384

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "xlink": "http://www.w3.org/1999/xlink",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
}


def _q(name: str) -> str:
    """`text:p` -> `{urn:...text:1.0}p`."""
    prefix, _, local = name.partition(":")
    return f"{{{_NS[prefix]}}}{local}"


_P, _H, _SPAN, _A = _q("text:p"), _q("text:h"), _q("text:span"), _q("text:a")
_S, _TAB, _LINE_BREAK, _SOFT_BREAK = _q("text:s"), _q("text:tab"), _q("text:line-break"), _q("text:soft-page-break")
_LIST, _LIST_ITEM, _LIST_HEADER = _q("text:list"), _q("text:list-item"), _q("text:list-header")
_NOTE, _NOTE_BODY, _ANNOTATION = _q("text:note"), _q("text:note-body"), _q("office:annotation")
_TABLE, _ROW, _CELL, _COVERED = _q("table:table"), _q("table:table-row"), _q("table:table-cell"), _q("table:covered-table-cell")
_HEADER_ROWS = _q("table:table-header-rows")
_ROW_GROUPS = (_HEADER_ROWS, _q("table:table-rows"), _q("table:table-row-group"))
_FRAME, _TEXT_BOX, _IMAGE, _GROUP = _q("draw:frame"), _q("draw:text-box"), _q("draw:image"), _q("draw:g")
#: Containers whose children are body content in a text document.
_CONTAINERS = tuple(_q(n) for n in ("text:section", "text:index-body", "text:table-of-content", "text:illustration-index",
                                     "text:table-index", "text:object-index", "text:user-index",
                                     "text:alphabetical-index", "text:bibliography", "text:change-region"))
#: Nodes of a paragraph whose text is not the paragraph's own (read as blocks of their own, or not at all).
_NOT_INLINE = (_NOTE, _ANNOTATION, _FRAME, _q("office:annotation-end"), _q("text:tracked-changes"),
               _q("text:bookmark-ref"), _q("draw:custom-shape"))
_LENGTH = re.compile(r"^\s*(-?[0-9.]+)\s*(cm|mm|in|pt|pc|px)?\s*$")
_EMU_PER = {"cm": 360000.0, "mm": 36000.0, "in": 914400.0, "pt": 12700.0, "pc": 152400.0, "px": 9525.0, None: 360000.0}


def _xml(data: bytes) -> Any:
    from lxml import etree

    return etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))


class _Package:
    """The verified parts of an OpenDocument file, its content and styles parsed."""

    def __init__(self, content: bytes, kind: str) -> None:
        parts = verified_parts(content)
        manifest = parts.get("META-INF/manifest.xml", b"")
        if b"encryption-data" in manifest:
            raise PackageRefused("encrypted", "password-protected OpenDocument file (its manifest lists encryption data)")
        try:
            self.content = _xml(parts["content.xml"])
            self.styles = _xml(parts["styles.xml"]) if "styles.xml" in parts else None
        except KeyError as exc:
            raise PackageRefused("failed", f"not a readable OpenDocument {kind}: no {exc.args[0]}") from exc
        except SyntaxError as exc:  # lxml's XMLSyntaxError
            raise PackageRefused("failed", f"not a readable OpenDocument {kind}: {exc}") from exc
        self.parts = parts
        self.style_props = self._style_props()

    def _style_props(self) -> dict[str, dict[str, str]]:
        """Every named style's own attributes (its properties' and its own), and its parent's name."""
        props: dict[str, dict[str, str]] = {}
        for root in (self.styles, self.content):
            if root is None:
                continue
            for style in root.iter(_q("style:style")):
                attrs = {k.split("}")[-1]: v for k, v in style.attrib.items()}
                for child in style:
                    attrs.update({k.split("}")[-1]: v for k, v in child.attrib.items() if k.split("}")[-1] not in attrs})
                props[style.get(_q("style:name"), "")] = attrs
        return props

    def style_chain(self, name: str | None) -> list[dict[str, str]]:
        """The style `name` and its ancestors (at most 20: a loop is the file's, not ours)."""
        chain: list[dict[str, str]] = []
        while name and name in self.style_props and len(chain) < 20:
            attrs = self.style_props[name]
            chain.append({**attrs, "name": name})
            name = attrs.get("parent-style-name")
        return chain

    def body(self, tag: str) -> Any:
        body = self.content.find(f"{_q('office:body')}/{_q(tag)}")
        if body is None:
            raise PackageRefused("failed", f"not an OpenDocument {tag.split(':')[1]}: content.xml has no {tag}")
        return body


#: Where a paragraph's text crosses a recorded page break (a form feed: XML text never holds one).
_PAGE_MARK = "\f"


def _inline(el: Any, out: list[str], nested: list[Any]) -> None:
    """`el`'s own text into `out` (spaces, tabs and breaks as written, `_PAGE_MARK` where a page
    break is recorded); notes, comments and frames into `nested`, in order (their text is not
    the paragraph's)."""
    if el.text:
        out.append(el.text)
    for child in el:
        tag = child.tag
        if tag == _SOFT_BREAK:
            out.append(_PAGE_MARK)
        elif tag == _S:
            out.append(" " * int(child.get(_q("text:c"), "1") or 1))
        elif tag == _TAB:
            out.append("\t")
        elif tag == _LINE_BREAK:
            out.append("\n")
        elif tag in _NOT_INLINE:
            if tag in (_NOTE, _ANNOTATION, _FRAME, _q("draw:custom-shape")):
                nested.append(child)
        elif isinstance(tag, str):
            _inline(child, out, nested)
        if child.tail:
            out.append(child.tail)


def _paragraphs_text(el: Any) -> str:
    """The text of every paragraph and heading under `el`, one line each (nested frames' too)."""
    lines = []
    for p in el.iter(_P, _H):
        out: list[str] = []
        _inline(p, out, [])
        lines.append("".join(out).replace(_PAGE_MARK, ""))
    return "\n".join(line for line in lines if line.strip()).strip()


def _table_rows(table: Any) -> list[Any]:
    rows: list[Any] = []
    for child in table:
        if child.tag == _ROW:
            rows.append(child)
        elif child.tag in _ROW_GROUPS:
            rows += _table_rows(child)
    return rows


def _text_table(table: Any) -> tuple[str, str]:
    """(text, html) of a text document's table, as the Word reader lays a table out."""
    header_rows = sum(len(_table_rows(h)) for h in table.iter(_HEADER_ROWS))
    rows = _table_rows(table)
    headers = header_rows or min(1, len(rows) - 1)
    html, lines = ["<table>"], []
    for r, row in enumerate(rows):
        cells = [(_paragraphs_text(c), c) for c in row if c.tag == _CELL]
        if r == 0 and headers:
            html.append("<thead>")
        tag = "th" if r < headers else "td"
        html.append("<tr>")
        for text, cell in cells:
            rowspan = int(cell.get(_q("table:number-rows-spanned"), "1") or 1)
            colspan = int(cell.get(_q("table:number-columns-spanned"), "1") or 1)
            attrs = (f' rowspan="{rowspan}"' if rowspan > 1 else "") + (f' colspan="{colspan}"' if colspan > 1 else "")
            html.append(f"<{tag}{attrs}>{escape(text).replace(chr(10), '<br>')}</{tag}>")
        html.append("</tr>")
        if r == headers - 1:
            html.append("</thead>")
        line = " | ".join(text.replace("\n", " ") for text, _ in cells)
        if line.strip(" |"):
            lines.append(line)
    html.append("</table>")
    return "\n".join(lines), "".join(html)


class _TextWalker:
    """Walks a text document's body into pages of Word blocks (see the module docstring)."""

    def __init__(self, package: _Package) -> None:
        self.package = package
        self.pages: list[list[WordBlock]] = [[]]
        self.notes: list[list[WordBlock]] = [[]]
        self.recorded = 0

    def new_page(self) -> None:
        if self.pages[-1] or self.notes[-1]:
            self.pages.append([])
            self.notes.append([])
            self.recorded += 1

    def _breaks(self, style: str | None) -> tuple[bool, bool]:
        chain = self.package.style_chain(style)
        before = next((s["break-before"] for s in chain if "break-before" in s), "auto") == "page"
        after = next((s["break-after"] for s in chain if "break-after" in s), "auto") == "page"
        return before, after

    def _level(self, el: Any) -> int:
        if el.tag == _H:
            return max(1, min(9, int(el.get(_q("text:outline-level"), "1") or 1)))
        for style in self.package.style_chain(el.get(_q("text:style-name"))):
            if style["name"] == "Title" or style.get("display-name") == "Title":
                return 1
            if style.get("default-outline-level"):
                return max(1, min(9, int(style["default-outline-level"])))
        return 0

    def walk(self, container: Any, listed: bool = False) -> None:
        for el in container:
            tag = el.tag
            if tag in (_P, _H):
                self.paragraph(el, listed)
            elif tag == _LIST:
                for item in el:
                    if item.tag in (_LIST_ITEM, _LIST_HEADER):
                        self.walk(item, listed=True)
            elif tag == _TABLE:
                text, html = _text_table(el)
                if text.strip():
                    self.pages[-1].append(WordBlock("table", text, html=html))
                for frame in el.iter(_FRAME):
                    self.frame(frame, tables=True)
            elif tag == _SOFT_BREAK:
                self.new_page()
            elif tag in _CONTAINERS:
                self.walk(el, listed)

    def paragraph(self, p: Any, listed: bool) -> None:
        before, after = self._breaks(p.get(_q("text:style-name")))
        if before:
            self.new_page()
        level = self._level(p)
        kind = "title" if level else "list_item" if listed else "text"
        out: list[str] = []
        nested: list[Any] = []
        _inline(p, out, nested)
        # a page break recorded inside the paragraph cuts it, each part on its page
        *before_breaks, last = "".join(out).split(_PAGE_MARK)
        for text in before_breaks:
            self.flush(kind, level, text)
            self.new_page()
        self.flush(kind, level, last)
        for el in nested:
            if el.tag == _NOTE:
                body = el.find(_NOTE_BODY)
                text = _paragraphs_text(body) if body is not None else ""
                if text:
                    self.notes[-1].append(WordBlock("footnote", text))
            elif el.tag == _ANNOTATION:
                text = _paragraphs_text(el)
                if text:
                    self.notes[-1].append(WordBlock("comment", text))
            else:
                self.frame(el, tables=False)
        if after:
            self.new_page()

    def flush(self, kind: str, level: int, text: str) -> None:
        text = text.strip()
        if text:
            self.pages[-1].append(WordBlock(kind, text, level=level if kind == "title" else 0))

    def frame(self, frame: Any, tables: bool) -> None:
        """A frame's text box (a block of its own, unless in a table cell, whose text holds it) or picture."""
        box = frame.find(_TEXT_BOX)
        if box is not None and not tables:
            text = _paragraphs_text(box)
            if text:
                self.pages[-1].append(WordBlock("textbox", text))
        for image in frame.iter(_IMAGE):
            data = self.package.parts.get(image.get(_q("xlink:href"), "").lstrip("./"))
            if data:  # an external picture has no part: never fetched
                alt = frame.findtext(_q("svg:desc")) or frame.findtext(_q("svg:title")) or ""
                self.pages[-1].append(WordBlock("image", "", image=data, alt_text=alt))


def _furniture(package: _Package) -> tuple[str, str]:
    """The header and footer text of the first master page (the one body text starts on)."""
    if package.styles is None:
        return "", ""
    master = next(package.styles.iter(_q("style:master-page")), None)
    if master is None:
        return "", ""
    header, footer = master.find(_q("style:header")), master.find(_q("style:footer"))
    return (_paragraphs_text(header) if header is not None else "", _paragraphs_text(footer) if footer is not None else "")


def _laid_out(blocks: list[WordBlock]) -> tuple[tuple[WordBlock, ...], str]:
    """The blocks with their offsets in the page text (texts joined by `BLOCK_SEPARATOR`)."""
    placed: list[WordBlock] = []
    texts: list[str] = []
    offset = 0
    for block in blocks:
        if block.kind == "image":
            placed.append(replace(block, start=offset, end=offset))
            continue
        if texts:
            offset += len(BLOCK_SEPARATOR)
        placed.append(replace(block, start=offset, end=offset + len(block.text)))
        texts.append(block.text)
        offset += len(block.text)
    return tuple(placed), BLOCK_SEPARATOR.join(texts)


def load_odt(content: bytes) -> WordDocument:
    """The text document in `content` as a Word document; raises `PackageRefused`."""
    package = _Package(content, "text")
    walker = _TextWalker(package)
    try:
        walker.walk(package.body("office:text"))
    except (ValueError, TypeError) as exc:  # a malformed attribute (an outline level that is no number)
        raise PackageRefused("failed", f"not a readable OpenDocument text: {type(exc).__name__}: {exc}") from exc
    header, footer = _furniture(package)
    laid = list(zip(walker.pages, walker.notes))
    if len(laid) > 1 and not laid[-1][0] and not laid[-1][1]:
        laid.pop()
    pages = []
    for number, (blocks, notes) in enumerate(laid, start=1):
        own = notes or any(b.kind != "image" for b in blocks)
        top = [WordBlock("header", header)] if header and own else []
        bottom = [WordBlock("footer", footer)] if footer and own else []
        placed, text = _laid_out(top + blocks + notes + bottom)
        pages.append(WordPage(number, placed, text))
    return WordDocument(tuple(pages), walker.recorded)


def read_odt(content: bytes, config: ReaderConfig) -> DocumentRead:
    """One page per page the file records, as the Word reader's (see the module docstring)."""
    try:
        document = load_odt(content)
    except PackageRefused as exc:
        return DocumentRead.failure(ODT, exc.status, exc.reason)
    pages = []
    for page in document.pages:
        body = [b for b in page.blocks if b.kind not in ("header", "footer", "image")]
        title = next((b.text for b in page.blocks if b.kind == "title"), None)
        pages.append(PageOutput(page.number, page.text, "ok" if body else "empty", READER,
                                metadata={"title": title} if title else {}))
    read = DocumentRead.from_pages(ODT, tuple(pages), recorded_page_breaks=document.recorded_breaks)
    return read.with_parsed(document)


# --- spreadsheets -------------------------------------------------------------------------


def _cell_value(cell: Any) -> str:
    """A cell as Excel's reader gives it: numbers, dates and booleans from their stored value."""
    kind = cell.get(_q("office:value-type"))
    try:
        if kind in ("float", "percentage", "currency"):
            return cell_text(float(cell.get(_q("office:value"), "")))
        if kind == "date":
            return cell_text(dt.datetime.fromisoformat(cell.get(_q("office:date-value"), "")))
        if kind == "boolean":
            return cell_text(cell.get(_q("office:boolean-value")) == "true")
    except ValueError:
        pass  # a stored value that does not parse: the text as displayed
    return _paragraphs_text(cell)


class _Repetitions:
    """Counts the cells with content a sheet gains by repetition, against `MAX_REPEATED_CELLS`."""

    def __init__(self) -> None:
        self.cells = 0

    def count(self, el: Any, attribute: str, width: int) -> int:
        """How often `el` repeats; `width`: its cells with content (0: an empty row or cell)."""
        count = max(1, int(el.get(_q(attribute), "1") or 1))
        self.cells += (count - 1) * width
        if self.cells > MAX_REPEATED_CELLS:
            raise ValueError(f"refused: repeated rows and cells expand to more than {MAX_REPEATED_CELLS:,} cells "
                             "with content (a repetition bomb?)")
        return count


def _sheet_rows(table: Any, hidden_rows: list[int]) -> Any:
    """`(row number, cell texts)` of a sheet's visible rows; a run of repeated empty rows is one
    empty row (it ends a region), as rows a workbook leaves out are."""
    number = 0
    repetitions = _Repetitions()
    for row in _table_rows(table):
        texts: list[str] = []
        empty = 0  # empty cells not yet laid out: only a cell with content after them places them
        for cell in row:
            if cell.tag not in (_CELL, _COVERED):
                continue
            text = _cell_value(cell)
            count = repetitions.count(cell, "table:number-columns-repeated", 1 if text else 0)
            if not text:
                empty += count  # a sheet's width is often repeated empty to its last column
                continue
            if len(texts) + empty + count > MAX_COLUMNS:
                raise ValueError(f"refused: a row with content past column {MAX_COLUMNS:,}")
            texts += [""] * empty + [text] * count
            empty = 0
        hidden = row.get(_q("table:visibility"), "visible") != "visible"
        repeated = repetitions.count(row, "table:number-rows-repeated", sum(1 for t in texts if t))
        if not texts:
            number += repeated
            yield number, ()
            continue
        for _ in range(repeated):
            number += 1
            if hidden:
                hidden_rows.append(number)
                continue
            yield number, tuple(texts)


def load_ods(content: bytes) -> Workbook:
    """The spreadsheet in `content` as a workbook; raises `PackageRefused`."""
    package = _Package(content, "spreadsheet")
    sheets = []
    for number, table in enumerate(package.body("office:spreadsheet").iterchildren(_TABLE), start=1):
        name = table.get(_q("table:name"), "")
        hidden = any(s.get("display") == "false" for s in package.style_chain(table.get(_q("table:style-name"))))
        hidden_rows: list[int] = []
        try:
            regions = () if hidden else regions_of(_sheet_rows(table, hidden_rows))
        except ValueError as exc:  # one refused sheet must not lose the others
            sheets.append(Sheet(number, name, hidden, (), "", error=str(exc)))
            continue
        sheets.append(Sheet(number, name, hidden, regions, REGION_SEPARATOR.join(r.text for r in regions),
                            tuple(hidden_rows)))
    return Workbook(tuple(sheets))


def read_ods(content: bytes, config: ReaderConfig) -> DocumentRead:
    """One page per sheet, as the spreadsheet reader's."""
    try:
        workbook = load_ods(content)
    except PackageRefused as exc:
        return DocumentRead.failure(ODS, exc.status, exc.reason)
    pages = tuple(replace(page, reader=READER) for page in sheet_pages(workbook.sheets))
    read = DocumentRead.from_pages(ODS, pages,
                                   hidden_sheets=[s.number for s in workbook.sheets if s.hidden])
    return read.with_parsed(workbook)


# --- presentations ------------------------------------------------------------------------

_DRAWOOO_DISPLAY = "{http://openoffice.org/2010/draw}display"
#: Drawing shapes whose own paragraphs are their text.
_TEXT_SHAPES = tuple(_q(f"draw:{n}") for n in ("custom-shape", "rect", "ellipse", "polygon", "polyline", "path",
                                                 "caption", "circle", "regular-polygon", "line", "connector"))
_TRANSFORM = re.compile(r"(rotate|translate)\s*\(([^)]*)\)")


def _emu(value: str | None) -> float | None:
    """An ODF length (`2.16cm`, `1in`, ...) in EMU, the unit of the PowerPoint model."""
    match = _LENGTH.match(value or "")
    if match is None:
        return None
    return float(match.group(1)) * _EMU_PER[match.group(2)]


def _shape_frame(el: Any) -> Any:
    """The shape's frame on the slide; a rotated shape (`draw:transform`) by the box around it."""
    import math

    from indx_assets.pipeline.readers.pptx_geometry import Frame

    w, h = _emu(el.get(_q("svg:width"))), _emu(el.get(_q("svg:height")))
    if w is None or h is None:
        return None
    transform = el.get(_q("draw:transform"))
    if not transform:
        x, y = _emu(el.get(_q("svg:x"))), _emu(el.get(_q("svg:y")))
        return None if x is None or y is None else Frame(x, y, w, h)
    angle, dx, dy = 0.0, 0.0, 0.0
    for op, args in _TRANSFORM.findall(transform):
        values = args.replace(",", " ").split()
        if op == "rotate" and values:
            angle = float(values[0])
        elif op == "translate" and len(values) == 2:
            dx, dy = _emu(values[0]) or 0.0, _emu(values[1]) or 0.0
    # rotate about the shape's origin (counter-clockwise on the page for a positive angle), then move
    corners = [(cx * math.cos(angle) + cy * math.sin(angle) + dx, -cx * math.sin(angle) + cy * math.cos(angle) + dy)
               for cx, cy in ((0, 0), (w, 0), (0, h), (w, h))]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return Frame(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys), (-math.degrees(angle)) % 360.0)


def _slide_table(table: Any) -> tuple[str, tuple[tuple[Any, ...], ...]]:
    from indx_assets.pipeline.readers.pptx import TableCell

    rows = []
    for row in _table_rows(table):
        rows.append(tuple(
            TableCell(_paragraphs_text(c), int(c.get(_q("table:number-rows-spanned"), "1") or 1),
                      int(c.get(_q("table:number-columns-spanned"), "1") or 1), merged=c.tag == _COVERED)
            for c in row if c.tag in (_CELL, _COVERED)))
    text = "\n".join(" | ".join(c.text.replace("\n", " ") for c in row if not c.merged) for row in rows).strip()
    return text, tuple(rows)


def _slide_shapes(package: _Package, page: Any, size: tuple[float, float] | None) -> list[Any]:
    """The slide's shapes with text, tables and pictures, in document order (groups flattened)."""
    from indx_assets.pipeline.readers.pptx import Picture, SlideShape
    from indx_assets.pipeline.readers.pptx_geometry import normalise

    shapes = []
    stack = list(reversed(list(page)))
    while stack:
        el = stack.pop()
        if el.tag == _GROUP:
            stack.extend(reversed(list(el)))
            continue
        table = picture = None
        kind, text = "text", ""
        if el.tag == _FRAME:
            box, image, grid = el.find(_TEXT_BOX), el.find(_IMAGE), el.find(_TABLE)
            if box is not None:
                text = _paragraphs_text(box)
            elif grid is not None:
                kind = "table"
                text, table = _slide_table(grid)
            elif image is not None:
                href = image.get(_q("xlink:href"), "").lstrip("./")
                blob = package.parts.get(href)
                if not blob:
                    continue  # an external picture: never fetched
                kind, picture = "picture", Picture(blob, image.get(_q("draw:mime-type"), ""), href)
        elif el.tag in _TEXT_SHAPES:
            text = _paragraphs_text(el)
        else:
            continue  # notes, forms, animations: not shapes on the slide
        if kind != "picture" and not text:
            continue
        placeholder = el.get(_q("presentation:class"))
        frame = _shape_frame(el)
        hidden = el.get(_DRAWOOO_DISPLAY) == "none" or el.get(_q("draw:display")) == "none"
        common = dict(kind=kind, shape_id=el.get(_q("draw:id"), ""),
                      name=el.get(_q("draw:name"), ""), text=text, frame=frame,
                      frame_source="own" if frame is not None else "none", title=placeholder == "title",
                      placeholder=placeholder, alt_text=el.findtext(_q("svg:desc")) or "", table=table, picture=picture)
        if frame is None or size is None:
            problem = "no_slide_size" if frame is not None else "no_frame"
            shapes.append(SlideShape(bbox=None, bbox_reason="hidden" if hidden else "unresolved", problem=problem, **common))
            continue
        placement = normalise(frame, *size)
        if hidden:
            shapes.append(SlideShape(bbox=None, bbox_reason="hidden", **common))
        elif placement.bbox is None:
            shapes.append(SlideShape(bbox=None, bbox_reason="unresolved", problem=placement.problem, **common))
        else:
            shapes.append(SlideShape(bbox=placement.bbox, bbox_reason=None, clamped=placement.clamped, **common))
    return shapes


def _slide_size(package: _Package, master_name: str | None) -> tuple[float, float] | None:
    if package.styles is None:
        return None
    masters = {m.get(_q("style:name")): m for m in package.styles.iter(_q("style:master-page"))}
    master = masters[master_name] if master_name in masters else next(iter(masters.values()), None)
    layouts = {p.get(_q("style:name")): p for p in package.styles.iter(_q("style:page-layout"))}
    layout = layouts.get(master.get(_q("style:page-layout-name"))) if master is not None else None
    props = layout.find(_q("style:page-layout-properties")) if layout is not None else None
    if props is None:
        return None
    w, h = _emu(props.get(_q("fo:page-width"))), _emu(props.get(_q("fo:page-height")))
    return (w, h) if w and h else None


def load_odp(content: bytes) -> Any:
    """The presentation in `content` as a PowerPoint `Deck`; raises `PackageRefused`."""
    from indx_assets.pipeline.readers.pptx import Deck, DeckSlide, _reading_order, _with_offsets

    package = _Package(content, "presentation")
    slides = []
    size: tuple[float, float] | None = None
    for number, page in enumerate(package.body("office:presentation").iterchildren(_q("draw:page")), start=1):
        size = _slide_size(package, page.get(_q("draw:master-page-name")))
        hidden = any(s.get("visibility") == "hidden" for s in package.style_chain(page.get(_q("draw:style-name"))))
        try:
            shapes, text = _with_offsets(_reading_order(_slide_shapes(package, page, size), int(size[1]) if size else None))
        except (ValueError, TypeError) as exc:  # one damaged slide must not lose the others
            slides.append(DeckSlide(number, hidden, (), "", error=f"{type(exc).__name__}: {exc}"))
            continue
        notes_el = page.find(_q("presentation:notes"))
        notes = "\n".join(_paragraphs_text(f) for f in notes_el.iter(_FRAME)
                          if f.get(_q("presentation:class")) == "notes") if notes_el is not None else ""
        title = next((s.text for s in shapes if s.title), "")
        slides.append(DeckSlide(number, hidden, shapes, text, notes.strip(), title))
    width, height = (int(size[0]), int(size[1])) if size else (None, None)
    return Deck(tuple(slides), width, height)


def read_odp(content: bytes, config: ReaderConfig) -> DocumentRead:
    """One page per slide, as the PowerPoint reader's."""
    from indx_assets.pipeline.readers.pptx import deck_pages

    try:
        deck = load_odp(content)
    except PackageRefused as exc:
        return DocumentRead.failure(ODP, exc.status, exc.reason)
    pages = tuple(replace(page, reader=READER) for page in deck_pages(deck))
    return DocumentRead.from_pages(ODP, pages, slide_width=deck.width, slide_height=deck.height,
                                   hidden_slides=[s.number for s in deck.slides if s.hidden]).with_parsed(deck)
