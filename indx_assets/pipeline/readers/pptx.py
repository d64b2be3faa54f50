"""The PowerPoint reader: one `PageOutput` per slide, and the slide model the `pptx` chunker cuts.

`load_deck` opens a PPTX through the OOXML guard (zip bombs, entity bombs, encrypted and legacy
files are refused before any XML is parsed) and python-pptx, then walks every slide once into
a `Deck`: per slide, the shapes that carry text, tables and raster pictures, each with the frame
the file states (groups applied, placeholder frames inherited from layout then master) and in
reading order: the title first, then top-to-bottom, left-to-right. The reader turns a deck into
pages; the chunker turns the same deck into pieces, so the page text and the pieces agree and
piece offsets point into the page text. The reader hands its deck to the chunker as the read's
parsed form (`DocumentRead.parsed`), so reading and then chunking one document opens it once.

Page text: the slide's shape texts in reading order, separated by blank lines; a table is laid
out row by row with cells separated by ` | `. Speaker notes are kept out of the page text and
handed to chunkers in `PageOutput.metadata["notes"]`; a hidden slide has `metadata["hidden"]`.
"""

import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from indx_assets.pipeline.chunker_port import BBox, PageOutput
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.ooxml_guard import PackageRefused, verified_package
from indx_assets.pipeline.readers.pptx_geometry import Frame, GroupTransform, frame_of, group_transform, normalise

log = logging.getLogger(__name__)

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
READER = "pptx"

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_TEXT_NODES = (f"{_A}t", f"{_A}br")
#: Shapes whose tops differ by less than this share of the slide height count as one row.
_ROW_BAND = 0.005
#: Placeholder types that match each other when a frame is looked up (ECMA-376 §19.7.10).
_PH_FAMILY = {"ctrTitle": "title", "title": "title", "subTitle": "body", "obj": "body", "body": "body"}


@dataclass(frozen=True, slots=True)
class TableCell:
    text: str
    row_span: int = 1
    col_span: int = 1
    #: covered by a neighbour's span (its text, if any, is not shown)
    merged: bool = False


@dataclass(frozen=True, slots=True)
class Picture:
    blob: bytes
    content_type: str
    partname: str


@dataclass(frozen=True, slots=True)
class SlideShape:
    """One thing on a slide a chunker may make a piece of."""

    kind: str  # "text" | "table" | "picture"
    shape_id: str
    name: str
    text: str
    frame: Frame | None
    bbox: BBox | None
    #: why there is no box: `hidden` (the file hides it) or `unresolved`
    bbox_reason: str | None
    frame_source: str  # "own", "layout", "master" or "none"
    problem: str | None = None  # why unresolved: no_frame, zero_size, invalid_frame, off_slide, no_slide_size
    clamped: bool = False
    title: bool = False
    placeholder: str | None = None
    alt_text: str = ""
    table: tuple[tuple[TableCell, ...], ...] | None = None
    picture: Picture | None = None
    #: character offsets of `text` in the slide text (None for pictures)
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True, slots=True)
class DeckSlide:
    number: int
    hidden: bool
    shapes: tuple[SlideShape, ...]
    text: str
    notes: str = ""
    title: str = ""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Deck:
    slides: tuple[DeckSlide, ...]
    width: int | None
    height: int | None


def _nv(el: Any) -> Any:
    """The shape's non-visual properties (`p:nvSpPr`, `p:nvPicPr`, ...): always its first child."""
    return el[0] if len(el) else None


def _placeholder(el: Any) -> tuple[str, str] | None:
    nv = _nv(el)
    ph = nv.find(f"{_P}nvPr/{_P}ph") if nv is not None else None
    if ph is None:
        return None
    return ph.get("type", "obj"), ph.get("idx", "0")


def _xfrm(el: Any) -> Any:
    tag = el.tag
    if tag == f"{_P}graphicFrame":
        return el.find(f"{_P}xfrm")
    if tag == f"{_P}grpSp":
        return el.find(f"{_P}grpSpPr/{_A}xfrm")
    return el.find(f"{_P}spPr/{_A}xfrm")


def _flag(value: str | None) -> bool:
    return value in ("1", "true")


def _paragraphs_text(container: Any) -> str:
    """Text of the `a:p` paragraphs under `container`, one line per paragraph, `a:br` as a newline."""
    lines = []
    for paragraph in container.iterchildren(f"{_A}p"):
        lines.append("".join("\n" if node.tag == f"{_A}br" else (node.text or "") for node in paragraph.iter(*_TEXT_NODES)))
    return "\n".join(lines).strip()


class _PlaceholderFrames:
    """Frames of a master's or layout's placeholders, by idx and by type family."""

    def __init__(self, tree: Any, parent: "_PlaceholderFrames | None") -> None:
        self.by_idx: dict[str, tuple[Frame, str]] = {}
        self.by_family: dict[str, tuple[Frame, str]] = {}
        source = "layout" if parent is not None else "master"
        for el in tree.iter(f"{_P}sp", f"{_P}pic", f"{_P}graphicFrame"):
            ph = _placeholder(el)
            if ph is None:
                continue
            ph_type, idx = ph
            own = frame_of(_xfrm(el))
            found = (own, source) if own is not None else (parent.lookup(ph_type, None) if parent else None)
            if found is None:
                continue
            self.by_idx.setdefault(idx, found)
            self.by_family.setdefault(_PH_FAMILY.get(ph_type, ph_type), found)

    def lookup(self, ph_type: str, idx: str | None) -> tuple[Frame, str] | None:
        if idx is not None and idx in self.by_idx:
            return self.by_idx[idx]
        return self.by_family.get(_PH_FAMILY.get(ph_type, ph_type))


class _SlideWalker:
    """Walks one slide's shape tree into `SlideShape`s (document order)."""

    def __init__(self, slide: Any, layout_frames: _PlaceholderFrames | None, size: tuple[int, int] | None) -> None:
        self.part = slide.part
        self.layout_frames = layout_frames
        self.size = size

    def walk(self, tree: Any) -> Iterator[SlideShape]:
        yield from self._children(tree, (), False)

    def _children(self, parent: Any, groups: tuple[GroupTransform | None, ...], hidden: bool) -> Iterator[SlideShape]:
        for el in parent.iterchildren():
            tag = el.tag
            if tag == f"{_MC}AlternateContent":
                # What a consumer without the extension draws (e.g. a picture of an equation).
                fallback = el.find(f"{_MC}Fallback")
                if fallback is not None:
                    yield from self._children(fallback, groups, hidden)
                continue
            if tag not in (f"{_P}sp", f"{_P}pic", f"{_P}graphicFrame", f"{_P}grpSp"):
                continue  # nvGrpSpPr, grpSpPr, connectors (no text), content parts
            nv = _nv(el)
            c_nv = nv[0] if nv is not None and len(nv) else None
            shape_hidden = hidden or (c_nv is not None and _flag(c_nv.get("hidden")))
            if tag == f"{_P}grpSp":
                # A group without a frame (None) leaves its children without one: they are unresolved.
                yield from self._children(el, groups + (group_transform(_xfrm(el)),), shape_hidden)
                continue
            shape = self._shape(el, c_nv, groups, shape_hidden)
            if shape is not None:
                yield shape

    def _frame(self, el: Any, groups: tuple[GroupTransform | None, ...]) -> tuple[Frame | None, str, str | None]:
        frame, source = frame_of(_xfrm(el)), "own"
        placeholder = _placeholder(el)
        if frame is None and placeholder is not None and self.layout_frames is not None:
            found = self.layout_frames.lookup(*placeholder)
            if found is not None:
                frame, source = found
        if frame is None:
            return None, "none", placeholder[0] if placeholder else None
        for transform in reversed(groups):
            if transform is None:
                return None, "none", placeholder[0] if placeholder else None
            frame = transform.apply(frame)
        return frame, source, placeholder[0] if placeholder else None

    def _shape(self, el: Any, c_nv: Any, groups: tuple[GroupTransform | None, ...], hidden: bool) -> SlideShape | None:
        tag = el.tag
        table: tuple[tuple[TableCell, ...], ...] | None = None
        picture: Picture | None = None
        if tag == f"{_P}sp":
            body = el.find(f"{_P}txBody")
            text = _paragraphs_text(body) if body is not None else ""
            if not text:
                return None
            kind = "text"
        elif tag == f"{_P}graphicFrame":
            tbl = el.find(f"{_A}graphic/{_A}graphicData/{_A}tbl")
            if tbl is None:
                return None  # charts, diagrams, OLE objects: no text of their own here
            table = _table_cells(tbl)
            text = "\n".join(" | ".join(c.text.replace("\n", " ") for c in row if not c.merged) for row in table).strip()
            if not any(c.text for row in table for c in row):
                return None
            kind = "table"
        else:  # p:pic
            picture = self._picture(el, c_nv)
            if picture is None:
                return None
            text, kind = "", "picture"
        frame, source, ph_type = self._frame(el, groups)
        shape_id = c_nv.get("id", "") if c_nv is not None else ""
        common = dict(
            kind=kind,
            shape_id=shape_id,
            name=c_nv.get("name", "") if c_nv is not None else "",
            text=text,
            frame=frame,
            frame_source=source,
            title=_PH_FAMILY.get(ph_type or "") == "title",
            placeholder=ph_type,
            alt_text=(c_nv.get("descr") or "") if c_nv is not None else "",
            table=table,
            picture=picture,
        )
        if frame is None or self.size is None:
            problem = "no_slide_size" if frame is not None else "no_frame"
            return SlideShape(bbox=None, bbox_reason="hidden" if hidden else "unresolved", problem=problem, **common)  # type: ignore[arg-type]
        placement = normalise(frame, *self.size)
        if hidden:
            return SlideShape(bbox=None, bbox_reason="hidden", **common)  # type: ignore[arg-type]
        if placement.bbox is None:
            return SlideShape(bbox=None, bbox_reason="unresolved", problem=placement.problem, **common)  # type: ignore[arg-type]
        return SlideShape(bbox=placement.bbox, bbox_reason=None, clamped=placement.clamped, **common)  # type: ignore[arg-type]

    def _picture(self, el: Any, c_nv: Any) -> Picture | None:
        blip = el.find(f"{_P}blipFill/{_A}blip")
        if blip is None:
            return None
        rid = blip.get(f"{_R}embed")
        if not rid:
            # Only linked (r:link): the image lives outside the file and is never fetched.
            log.info("picture %s links an external image; skipped, never fetched", c_nv.get("name") if c_nv is not None else "?")
            return None
        try:
            part = self.part.related_part(rid)
        except (KeyError, ValueError):
            log.warning("picture relationship %s is missing; skipped", rid)
            return None
        blob = getattr(part, "blob", b"")
        if not blob:
            return None
        return Picture(blob, getattr(part, "content_type", ""), str(getattr(part, "partname", "")))


def _table_cells(tbl: Any) -> tuple[tuple[TableCell, ...], ...]:
    rows = []
    for tr in tbl.iterchildren(f"{_A}tr"):
        cells = []
        for tc in tr.iterchildren(f"{_A}tc"):
            body = tc.find(f"{_A}txBody")
            cells.append(
                TableCell(
                    text=_paragraphs_text(body) if body is not None else "",
                    row_span=int(tc.get("rowSpan", "1") or 1),
                    col_span=int(tc.get("gridSpan", "1") or 1),
                    merged=_flag(tc.get("hMerge")) or _flag(tc.get("vMerge")),
                )
            )
        rows.append(tuple(cells))
    return tuple(rows)


def _reading_order(shapes: list[SlideShape], height: int | None) -> list[SlideShape]:
    """Title first, then top-to-bottom (rows `_ROW_BAND` of the slide tall), left-to-right; shapes
    without a frame keep their document order after the rest."""
    band = (height or 1) * _ROW_BAND

    def key(item: tuple[int, SlideShape]) -> tuple[float, ...]:
        z, shape = item
        if shape.frame is None:
            return (2, 0.0, 0.0, z)
        return (0 if shape.title else 1, round(shape.frame.y / band), shape.frame.x, z)

    return [shape for _, shape in sorted(enumerate(shapes), key=key)]


def _with_offsets(shapes: list[SlideShape]) -> tuple[tuple[SlideShape, ...], str]:
    placed, texts, offset = [], [], 0
    for shape in shapes:
        if shape.text:
            if texts:
                offset += 2
            start, end = offset, offset + len(shape.text)
            texts.append(shape.text)
            offset = end
            shape = replace(shape, start=start, end=end)
        placed.append(shape)
    return tuple(placed), "\n\n".join(texts)


def _shape_tree(element: Any) -> Any:
    """The `p:spTree` of a slide, layout or master element."""
    tree = element.find(f"{_P}cSld/{_P}spTree")
    if tree is None:
        raise ValueError("no shape tree (p:cSld/p:spTree)")
    return tree


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:  # asking for notes_slide otherwise would create one
        return ""
    placeholder = slide.notes_slide.notes_placeholder
    body = placeholder.element.find(f"{_P}txBody") if placeholder is not None else None
    return _paragraphs_text(body) if body is not None else ""


def _build_deck(content: bytes) -> Deck:
    from pptx import Presentation

    package = verified_package(content)
    try:
        presentation = Presentation(package)
        deck_slides = list(presentation.slides)
        width, height = presentation.slide_width, presentation.slide_height
    except Exception as exc:  # python-pptx raises whatever the damaged part provokes
        raise PackageRefused("failed", f"not a readable PowerPoint presentation: {type(exc).__name__}: {exc}") from exc
    size = (int(width), int(height)) if width and height else None
    layouts: dict[str, _PlaceholderFrames] = {}
    masters: dict[str, _PlaceholderFrames] = {}
    slides = []
    for number, slide in enumerate(deck_slides, start=1):
        hidden = slide.element.get("show") in ("0", "false")
        try:
            layout = slide.slide_layout
            master = layout.slide_master
            master_frames = masters.get(str(master.part.partname))
            if master_frames is None:
                master_frames = masters[str(master.part.partname)] = _PlaceholderFrames(_shape_tree(master.element), None)
            layout_frames = layouts.get(str(layout.part.partname))
            if layout_frames is None:
                layout_frames = layouts[str(layout.part.partname)] = _PlaceholderFrames(_shape_tree(layout.element), master_frames)
        except (KeyError, ValueError, AttributeError) as exc:
            log.warning("slide %d: layout or master missing (%s); placeholders without a frame are unresolved", number, exc)
            layout_frames = None
        try:
            walker = _SlideWalker(slide, layout_frames, size)
            shapes, text = _with_offsets(_reading_order(list(walker.walk(_shape_tree(slide.element))), height))
            notes = _notes(slide)
        except Exception as exc:  # one damaged slide must not lose the others
            log.warning("slide %d could not be read: %s", number, exc, exc_info=True)
            slides.append(DeckSlide(number, hidden, (), "", error=f"{type(exc).__name__}: {exc}"))
            continue
        title = next((s.text for s in shapes if s.title), "")
        slides.append(DeckSlide(number, hidden, shapes, text, notes, title))
    return Deck(tuple(slides), size[0] if size else None, size[1] if size else None)


def load_deck(content: bytes) -> Deck:
    """The deck in `content`; raises `PackageRefused` (status + reason) when it cannot be opened.

    The reader hands it to the `pptx` chunker as the read's parsed form (`DocumentRead.parsed`),
    so the two share one open.
    """
    return _build_deck(content)


def deck_pages(deck: Deck) -> tuple[PageOutput, ...]:
    """One page per slide, in slide order (the OpenDocument reader lays out its decks alike)."""
    pages = []
    for slide in deck.slides:
        metadata: dict[str, Any] = {"hidden": slide.hidden}
        if slide.notes:
            metadata["notes"] = slide.notes
        if slide.title:
            metadata["title"] = slide.title
        if slide.error is not None:
            pages.append(PageOutput(slide.number, "", "failed", READER, reason=slide.error, metadata=metadata))
            continue
        status = "ok" if slide.text.strip() else "empty"
        pages.append(PageOutput(slide.number, slide.text, status, READER, metadata=metadata))
    return tuple(pages)


def read_pptx(content: bytes, config: ReaderConfig) -> DocumentRead:
    """One page per slide, in slide order; refused packages become a document status."""
    try:
        deck = load_deck(content)
    except PackageRefused as exc:
        return DocumentRead.failure(PPTX, exc.status, exc.reason)
    return DocumentRead.from_pages(
        PPTX,
        deck_pages(deck),
        slide_width=deck.width,
        slide_height=deck.height,
        hidden_slides=[s.number for s in deck.slides if s.hidden],
    ).with_parsed(deck)
