"""The Word reader: `.docx`/`.docm` into pages of blocks, and the block model the `docx` chunker cuts.

`load_word` opens the file through the OOXML guard (zip bombs, entity bombs, encrypted and
legacy files are refused before any XML is parsed) and python-docx, then walks the body once,
in document order, into `WordBlock`s:
- `title` (a paragraph with an outline level, from its own properties or its style chain, or
  a `Title`/`Heading N` style; `level` 1-9), `text`, `list_item` (numbered or bulleted);
- `table`: rows with cells separated by ` | `, and the table as HTML with merged cells as
  `rowspan`/`colspan` (`html`); nested tables are flattened into their cell's text;
- `textbox`: the text of a text box, after the paragraph that anchors it;
- `image`: an embedded raster picture (linked pictures are never fetched);
- `footnote` / `comment`: the text of each footnote or comment, after the body of the page
  that references it;
- `header` / `footer`: the header and footer text of the section a page starts in, at the
  top and bottom of every page (page furniture: the chunker names it, never chunks it): the
  first page's on the section's first page when it has a title page (`w:titlePg`), the even
  pages' on an even page when the settings say `w:evenAndOddHeaders`, else the default
  (`_SectionFurniture.on`).

Pages: a new page starts at an explicit page break (`w:br w:type="page"`, `pageBreakBefore`),
after a section break that starts a new page (Word's default), and where Word recorded one when it last laid the document out (`w:lastRenderedPageBreak`);
breaks with nothing between them count once. A file with neither is one page. A paragraph
broken across pages is cut at the break, each part on its page.

Page text: the page's block texts joined by a blank line; each block knows its offsets.
The reader hands its `WordDocument` to the `docx` chunker as the read's parsed form
(`DocumentRead.parsed`), so reading and chunking one file opens it once.
"""

import logging
import re
from dataclasses import dataclass
from html import escape
from typing import Any

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.ooxml_guard import PackageRefused, verified_package

log = logging.getLogger(__name__)

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
DOCM = "application/vnd.ms-word.document.macroEnabled.12"
READER = "docx"
#: Between the blocks of a page's text.
BLOCK_SEPARATOR = "\n\n"

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_V = "{urn:schemas-microsoft-com:vml}"
_RT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
#: The nodes of a paragraph that make its text or mark a page, a note or a comment.
_T, _TAB, _BR, _CR, _NBH = f"{_W}t", f"{_W}tab", f"{_W}br", f"{_W}cr", f"{_W}noBreakHyphen"
_RENDERED_BREAK, _FOOTNOTE_REF, _COMMENT_REF = f"{_W}lastRenderedPageBreak", f"{_W}footnoteReference", f"{_W}commentReference"
_PARAGRAPH_NODES = (_T, _TAB, _BR, _CR, _NBH, _RENDERED_BREAK, _FOOTNOTE_REF, _COMMENT_REF)
#: What a paragraph's own text leaves out: text boxes (read as blocks of their own), deleted
#: text and the fallback copy of an alternate content.
_TEXTBOX = f"{_W}txbxContent"
_NOT_OWN_TEXT = (_TEXTBOX, f"{_W}del", f"{_MC}Fallback")
_PICTURES = (f"{_A}blip", f"{_V}imagedata")
#: What one walk of a paragraph looks at (`_Walker.paragraph`).
_SCANNED = (*_PARAGRAPH_NODES, *_NOT_OWN_TEXT, *_PICTURES)
_TYPE, _VAL = f"{_W}type", f"{_W}val"
_P, _PPR, _TBL, _SDT, _SDT_CONTENT = f"{_W}p", f"{_W}pPr", f"{_W}tbl", f"{_W}sdt", f"{_W}sdtContent"
_WRAPPERS = (_SDT, f"{_W}customXml", f"{_W}smartTag")
_PSTYLE, _OUTLINE, _NUMPR, _SECTPR = f"{_W}pStyle", f"{_W}outlineLvl", f"{_W}numPr", f"{_W}sectPr"
_PAGE_BREAK_BEFORE, _TITLE_PAGE = f"{_W}pageBreakBefore", f"{_W}titlePg"
_HEADER_REF, _FOOTER_REF = f"{_W}headerReference", f"{_W}footerReference"
_HEADING_STYLE = re.compile(r"^(?:heading\s*([1-9])|title)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class WordBlock:
    kind: str  # title | text | list_item | table | textbox | image | footnote | comment | header | footer
    text: str
    level: int = 0
    html: str | None = None
    image: bytes | None = None
    alt_text: str = ""
    #: offsets of `text` in its page's text (images: where they stand, empty span)
    start: int = 0
    end: int = 0


@dataclass(frozen=True, slots=True)
class WordPage:
    number: int
    blocks: tuple[WordBlock, ...]
    text: str


@dataclass(frozen=True, slots=True)
class WordDocument:
    pages: tuple[WordPage, ...]
    #: how many pages come from breaks the file records (0: the file records none)
    recorded_breaks: int


@dataclass(frozen=True, slots=True)
class _Style:
    level: int  # heading level, 0 for none
    listed: bool


def _styles(document: Any) -> dict[str, _Style]:
    """Heading level and list membership of every paragraph style, following `basedOn`."""
    raw: dict[str, tuple[str, int | None, bool, str | None]] = {}
    for style in document.styles.element.iterchildren(f"{_W}style"):
        sid = style.get(f"{_W}styleId")
        if not sid:
            continue
        name_el = style.find(f"{_W}name")
        name = name_el.get(f"{_W}val", "") if name_el is not None else ""
        ppr = style.find(f"{_W}pPr")
        outline = ppr.find(f"{_W}outlineLvl") if ppr is not None else None
        level = int(outline.get(f"{_W}val", "9")) + 1 if outline is not None else None
        listed = ppr is not None and ppr.find(f"{_W}numPr") is not None
        based = style.find(f"{_W}basedOn")
        raw[sid] = (name, level, listed, based.get(f"{_W}val") if based is not None else None)

    def resolve(sid: str, depth: int = 0) -> _Style:
        name, level, listed, based = raw[sid]
        heading = _HEADING_STYLE.match(name.strip())
        if heading:
            level = int(heading.group(1) or 1)
        if based in raw and depth < 20 and (level is None or not listed):
            parent = resolve(based, depth + 1)
            level = parent.level if level is None else level
            listed = listed or parent.listed
        return _Style(level if level is not None and 1 <= level <= 9 else 0, listed)

    return {sid: resolve(sid) for sid in raw}


def _cell_text(el: Any) -> str:
    """Text of every paragraph under `el` (nested tables and text boxes included, each once),
    one line per paragraph."""
    lines = [_plain_text(p) for p in el.iter(f"{_W}p") if not _below_any(p, el, (f"{_MC}Fallback",))]
    return "\n".join(line for line in lines if line.strip()).strip()


def _plain_text(p: Any) -> str:
    """A paragraph's text: runs, tabs and line breaks; text boxes (their own paragraphs) and
    deleted text left out."""
    out = []
    nested = next(p.iter(*_NOT_OWN_TEXT), None) is not None
    for node in p.iter(_T, _TAB, _BR, _CR, _NBH):
        if nested and _below_any(node, p, _NOT_OWN_TEXT):
            continue
        if node.tag == _T:
            out.append(node.text or "")
        elif node.tag == _TAB:
            out.append("\t")
        elif node.tag == _NBH:
            out.append("-")
        else:
            out.append("\n")
    return "".join(out)


def _table(tbl: Any) -> tuple[str, str]:
    """(text, html) of a table: rows of ` | `-separated cells; the HTML keeps merged cells
    (`rowspan`/`colspan`) and puts the header rows (those marked to repeat on each page, else
    the first) in `<thead>`, so a split table repeats them."""
    grid: list[list[tuple[str, int, bool]]] = []  # per row: (text, colspan, continues a vertical merge)
    marked: list[bool] = []
    for tr in tbl.iterchildren(f"{_W}tr"):
        trpr = tr.find(f"{_W}trPr")
        marked.append(trpr is not None and trpr.find(f"{_W}tblHeader") is not None)
        row = []
        for tc in tr.iterchildren(f"{_W}tc"):
            tcpr = tc.find(f"{_W}tcPr")
            span_el = tcpr.find(f"{_W}gridSpan") if tcpr is not None else None
            merge_el = tcpr.find(f"{_W}vMerge") if tcpr is not None else None
            span = int(span_el.get(f"{_W}val", "1") or 1) if span_el is not None else 1
            continued = merge_el is not None and merge_el.get(f"{_W}val", "continue") == "continue"
            row.append((_cell_text(tc), span, continued))
        grid.append(row)
    columns = [[sum(span for _, span, _ in row[:i]) for i in range(len(row))] for row in grid]
    headers = 0
    while headers < len(marked) and marked[headers]:
        headers += 1
    headers = headers or min(1, len(grid) - 1)  # a lone row is a body, not a header
    html, lines = ["<table>"], []
    for r, row in enumerate(grid):
        if r == 0 and headers:
            html.append("<thead>")
        tag = "th" if r < headers else "td"
        html.append("<tr>")
        for i, (text, span, continued) in enumerate(row):
            if continued:
                continue
            rowspan = 1
            for below, below_columns in zip(grid[r + 1 :], columns[r + 1 :]):
                hit = next((c for c, at in zip(below, below_columns) if at == columns[r][i]), None)
                if hit is None or not hit[2]:
                    break
                rowspan += 1
            attrs = (f' rowspan="{rowspan}"' if rowspan > 1 else "") + (f' colspan="{span}"' if span > 1 else "")
            html.append(f"<{tag}{attrs}>{escape(text).replace(chr(10), '<br>')}</{tag}>")
        html.append("</tr>")
        if r == headers - 1:
            html.append("</thead>")
        line = " | ".join(text.replace("\n", " ") for text, _, continued in row if not continued)
        if line.strip(" |"):
            lines.append(line)
    html.append("</table>")
    return "\n".join(lines), "".join(html)


class _Walker:
    """Walks the body into pages of blocks (see the module docstring)."""

    def __init__(self, document: Any) -> None:
        self.document = document
        self.part = document.part
        self.styles = _styles(document)
        self.footnotes = self._notes("footnotes", f"{_W}footnote")
        self.comments = self._notes("comments", f"{_W}comment")
        self.pages: list[list[WordBlock]] = [[]]
        self.notes: list[list[WordBlock]] = [[]]
        self.recorded = 0
        #: the section each page starts in (sections end at a paragraph's `w:sectPr`)
        self.section = 0
        self.page_sections = [0]
        #: per section, whether it starts on a new page: a section's own `w:type` says how it
        #: starts (`nextPage` when absent), so the break after section i is section i+1's
        self.starts_page = [_starts_page(sect) for sect in document.element.body.iter(f"{_W}sectPr")]

    def _notes(self, reltype: str, tag: str) -> dict[str, str]:
        for rel in self.part.rels.values():
            if rel.reltype == _RT + reltype and not rel.is_external:
                from lxml import etree

                root = etree.fromstring(rel.target_part.blob, etree.XMLParser(resolve_entities=False, no_network=True))
                out = {}
                for note in root.iterchildren(tag):
                    if note.get(f"{_W}type") in ("separator", "continuationSeparator", "continuationNotice"):
                        continue
                    text = _cell_text(note)
                    if text:
                        out[note.get(f"{_W}id", "")] = text
                return out
        return {}

    def new_page(self) -> None:
        if self.pages[-1] or self.notes[-1]:
            self.pages.append([])
            self.notes.append([])
            self.page_sections.append(self.section)
            self.recorded += 1

    def add(self, block: WordBlock) -> None:
        self.pages[-1].append(block)

    def walk(self, container: Any) -> None:
        for el in container.iterchildren():
            tag = el.tag
            if tag == _P:
                self.paragraph(el)
            elif tag == _TBL:
                text, html = _table(el)
                if text.strip():
                    self.add(WordBlock("table", text, html=html))
                self.anchored(el, tables=True)
            elif tag in _WRAPPERS:
                content = next(el.iterchildren(_SDT_CONTENT), None) if tag == _SDT else el
                if content is not None:
                    self.walk(content)

    def paragraph(self, p: Any) -> None:
        ppr = next(p.iterchildren(_PPR), None)
        level, listed, section_ends = 0, False, False
        if ppr is not None:
            # one pass over the properties (a handful of children), not a `find` per property
            style = outline = None
            for prop in ppr.iterchildren():
                tag = prop.tag
                if tag == _PSTYLE and style is None:
                    style = self.styles.get(prop.get(_VAL))
                elif tag == _OUTLINE and outline is None:
                    outline = int(prop.get(_VAL, "9")) + 1
                elif tag == _NUMPR:
                    listed = True
                elif tag == _PAGE_BREAK_BEFORE and prop.get(_VAL, "true") not in ("0", "false"):
                    self.new_page()
                elif tag == _SECTPR:
                    section_ends = True
            if outline is not None:
                level = outline if outline <= 9 else 0
            elif style is not None:
                level = style.level
            listed = listed or (style is not None and style.listed)
        kind = "title" if level else "list_item" if listed else "text"
        parts: list[str] = []
        boxes: list[Any] = []
        pictures: list[Any] = []
        # One walk of the paragraph's content (its properties hold only tab stops and marks):
        # text nodes, breaks and references in order, text boxes and pictures gathered for
        # `anchored`. Document order puts a text box (or deleted text, or a fallback) before
        # what it holds, so a node's ancestry is worth looking at only once one has been seen.
        nested = False
        for child in p.iterchildren():
            if child is ppr:
                continue
            for node in child.iter(*_SCANNED):
                tag = node.tag
                if tag in _NOT_OWN_TEXT:
                    nested = True
                    if tag == _TEXTBOX:
                        boxes.append(node)
                    continue
                if tag in _PICTURES:
                    pictures.append(node)
                    continue
                if nested and _below_any(node, p, _NOT_OWN_TEXT):
                    continue
                if tag == _T:
                    parts.append(node.text or "")
                elif tag == _TAB:
                    parts.append("\t")
                elif tag == _NBH:
                    parts.append("-")
                elif tag == _FOOTNOTE_REF:
                    self.note("footnote", self.footnotes.get(node.get(f"{_W}id", "")))
                elif tag == _COMMENT_REF:
                    self.note("comment", self.comments.get(node.get(f"{_W}id", "")))
                elif tag == _RENDERED_BREAK or (tag == _BR and node.get(_TYPE) == "page"):
                    self.flush(kind, level, parts)
                    parts = []
                    self.new_page()
                else:
                    parts.append("\n")
        self.flush(kind, level, parts)
        self.add_anchored(p, boxes, pictures)
        if section_ends:
            self.section += 1
            if self.section < len(self.starts_page) and self.starts_page[self.section]:
                self.new_page()

    def note(self, kind: str, text: str | None) -> None:
        if text:
            self.notes[-1].append(WordBlock(kind, text))

    def flush(self, kind: str, level: int, parts: list[str]) -> None:
        text = "".join(parts).strip()
        if text:
            self.add(WordBlock(kind, text, level=level if kind == "title" else 0))

    def anchored(self, el: Any, tables: bool) -> None:
        """Text boxes and pictures anchored in `el`, after it. In a table (`tables`) only the
        pictures: a text box in a cell is already part of the cell's text."""
        boxes = () if tables else list(el.iter(_TEXTBOX))
        self.add_anchored(el, boxes, list(el.iter(*_PICTURES)))

    def add_anchored(self, el: Any, boxes: Any, pictures: Any) -> None:
        """The text boxes (`w:txbxContent`) and pictures (`a:blip`, `v:imagedata`) found in
        `el`, in document order, as blocks: a text box or a picture inside a fallback copy is
        left out (it repeats its alternate content), a text box inside a text box too."""
        for box in boxes:
            if _below_any(box, el, (f"{_MC}Fallback", _TEXTBOX)):
                continue  # the VML copy of a DrawingML text box, or a box inside a box
            text = _cell_text(box)
            if text:
                self.add(WordBlock("textbox", text))
        for blip in pictures:
            if _below_any(blip, el, (f"{_MC}Fallback",)):
                continue
            rid = blip.get(f"{_R}embed") if blip.tag == f"{_A}blip" else blip.get(f"{_R}id")
            if not rid:
                log.info("picture links an external image; skipped, never fetched")
                continue
            try:
                blob = self.part.related_parts[rid].blob
            except (KeyError, AttributeError):
                log.warning("picture relationship %s is missing; skipped", rid)
                continue
            doc_pr = next((a.find(f"{_WP}docPr") for a in blip.iterancestors(f"{_WP}inline", f"{_WP}anchor")), None)
            alt = (doc_pr.get("descr") or "") if doc_pr is not None else ""
            if blob:
                self.add(WordBlock("image", "", image=blob, alt_text=alt))


def _starts_page(sect: Any) -> bool:
    kind = sect.find(f"{_W}type")
    return kind is None or kind.get(f"{_W}val", "nextPage") in ("nextPage", "oddPage", "evenPage")


def _below_any(node: Any, top: Any, tags: tuple[str, ...]) -> bool:
    """Whether `node` sits inside an element with one of `tags`, below `top`."""
    for ancestor in node.iterancestors():
        if ancestor is top:
            return False
        if ancestor.tag in tags:
            return True
    return False


#: The header/footer types a section may reference (`w:headerReference w:type`, ECMA-376 §17.10.5).
_FURNITURE_TYPES = ("default", "first", "even")


@dataclass(frozen=True, slots=True)
class _SectionFurniture:
    """A section's header and footer texts by type, and whether its first page has its own."""

    headers: dict[str, str]
    footers: dict[str, str]
    title_page: bool

    def on(self, first_of_section: bool, even: bool, even_and_odd: bool) -> tuple[str, str]:
        """(header, footer) of a page: the first page's when the section has a title page
        (`w:titlePg`), else the even pages' on an even page when the document sets
        `w:evenAndOddHeaders`, else the default; a type the document never defines is blank."""
        kind = "first" if first_of_section and self.title_page else "even" if even and even_and_odd else "default"
        return self.headers.get(kind, ""), self.footers.get(kind, "")


def _section_furniture(document: Any) -> list[_SectionFurniture]:
    """Each section's furniture (`w:sectPr` elements as python-docx lists them): a section
    without a header or footer of some type has the previous section's of that type ("same as
    previous"). Read from the section properties' references directly: python-docx's
    `Section.header` finds each section's predecessor by an XPath over the whole body."""
    related = document.part.related_parts
    texts: dict[str, str] = {}

    def text_of(rid: str) -> str:
        if rid not in texts:
            part = related.get(rid)
            element = getattr(part, "_element", None)
            texts[rid] = _cell_text(element) if element is not None else ""
        return texts[rid]

    furniture: list[_SectionFurniture] = []
    headers: dict[str, str] = {}
    footers: dict[str, str] = {}
    for sect in document.element.sectPr_lst:
        headers, footers = dict(headers), dict(footers)
        for tag, texts_of_type in ((_HEADER_REF, headers), (_FOOTER_REF, footers)):
            for ref in sect.iterchildren(tag):
                kind = ref.get(_TYPE, "default")
                if kind in _FURNITURE_TYPES:
                    texts_of_type[kind] = text_of(ref.get(f"{_R}id", ""))
        title = next(sect.iterchildren(_TITLE_PAGE), None)
        furniture.append(_SectionFurniture(headers, footers, title is not None and _on(title)))
    return furniture


def _even_and_odd(document: Any) -> bool:
    """Whether the document's settings give even pages headers and footers of their own."""
    for rel in document.part.rels.values():
        if rel.reltype == _RT + "settings" and not rel.is_external:
            settings = getattr(rel.target_part, "element", None)
            flag = next(settings.iterchildren(f"{_W}evenAndOddHeaders"), None) if settings is not None else None
            return flag is not None and _on(flag)
    return False


def _on(flag: Any) -> bool:
    """An OOXML on/off property: on unless its `w:val` says off."""
    return flag.get(_VAL, "true") not in ("0", "false", "off")


def _laid_out(blocks: list[WordBlock]) -> tuple[tuple[WordBlock, ...], str]:
    placed, texts, offset = [], [], 0
    for b in blocks:
        if b.kind == "image":
            placed.append(WordBlock(b.kind, b.text, b.level, b.html, b.image, b.alt_text, offset, offset))
            continue
        if texts:
            offset += len(BLOCK_SEPARATOR)
        start, offset = offset, offset + len(b.text)
        texts.append(b.text)
        placed.append(WordBlock(b.kind, b.text, b.level, b.html, b.image, b.alt_text, start, offset))
    return tuple(placed), BLOCK_SEPARATOR.join(texts)


#: Main-part content types of Word files python-docx reads like a `.docx` but refuses by
#: name: macro-enabled documents and templates (their macros are never run).
_WORD_LIKE_MAIN_PARTS = (
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
)


def _open_word(package: Any) -> Any:
    """python-docx's `Document` for `package`, also for `.docm` (and templates), whose main
    part python-docx reads alike but `docx.Document` refuses by content type."""
    from docx.opc.part import PartFactory
    from docx.package import Package
    from docx.parts.document import DocumentPart

    for content_type in _WORD_LIKE_MAIN_PARTS:
        PartFactory.part_type_for.setdefault(content_type, DocumentPart)
    part = Package.open(package).main_document_part
    if not isinstance(part, DocumentPart):
        raise ValueError(f"not a Word document: its main part is {part.content_type}")
    return part.document


def _build(content: bytes) -> WordDocument:
    package = verified_package(content)
    try:
        document = _open_word(package)
        walker = _Walker(document)
        walker.walk(document.element.body)
        furniture = _section_furniture(document) or [_SectionFurniture({}, {}, False)]
        even_and_odd = _even_and_odd(document)
    except PackageRefused:
        raise
    except Exception as exc:  # python-docx and lxml raise whatever the damaged part provokes
        raise PackageRefused("failed", f"not a readable Word document: {type(exc).__name__}: {exc}") from exc
    pages = []
    laid = list(zip(walker.pages, walker.notes, walker.page_sections))
    if len(laid) > 1 and not laid[-1][0] and not laid[-1][1]:
        laid.pop()  # a break at the very end (a last section break) opens no page
    previous_section = None
    for number, (blocks, notes, section) in enumerate(laid, start=1):
        first_of_section, previous_section = section != previous_section, section
        # a page with nothing of its own has no header or footer either (nothing to chunk)
        own_text = notes or any(b.kind != "image" for b in blocks)
        own = furniture[min(section, len(furniture) - 1)]
        header, footer = own.on(first_of_section, number % 2 == 0, even_and_odd) if own_text else ("", "")
        furniture_top = [WordBlock("header", header)] if header else []
        furniture_bottom = [WordBlock("footer", footer)] if footer else []
        placed, text = _laid_out(furniture_top + blocks + notes + furniture_bottom)
        pages.append(WordPage(number, placed, text))
    return WordDocument(tuple(pages), walker.recorded)


def load_word(content: bytes) -> WordDocument:
    """The Word document in `content`; raises `PackageRefused` (status + reason) when it cannot
    be opened. The reader hands it to the `docx` chunker as the read's parsed form
    (`DocumentRead.parsed`), so the two share one open."""
    return _build(content)


def read_docx(content: bytes, config: ReaderConfig) -> DocumentRead:
    """One page per recorded page (see the module docstring); refused packages become a status."""
    try:
        document = load_word(content)
    except PackageRefused as exc:
        return DocumentRead.failure(DOCX, exc.status, exc.reason)
    pages = []
    for page in document.pages:
        body = [b for b in page.blocks if b.kind not in ("header", "footer", "image")]
        metadata: dict[str, Any] = {}
        title = next((b.text for b in page.blocks if b.kind == "title"), None)
        if title:
            metadata["title"] = title
        status = "ok" if body else "empty"
        pages.append(PageOutput(page.number, page.text, status, READER, metadata=metadata))
    read = DocumentRead.from_pages(DOCX, tuple(pages), recorded_page_breaks=document.recorded_breaks)
    return read.with_parsed(document)
