"""The `pptx` chunker: slides cut into the shapes they are made of, each where the file puts it.

For every slide the reader produced, in reading order (title first, then top-to-bottom,
left-to-right):
- one text piece per shape with text (`content`), its offsets pointing into the page text;
- one piece per table (`table`): the text row by row, and the table itself as Markdown
  (`table_markdown`) and HTML with its merged cells (`text_as_html`) in the metadata;
- one image piece per raster picture: the bytes as stored when they are PNG, JPEG, GIF or WebP,
  otherwise converted to PNG with Pillow; a picture Pillow cannot decode (WMF/EMF outside
  Windows, damaged data) is skipped and logged; the text box that captions it by position
  ("Figure 2 ..." or a short line just under it: `captions.nearest_caption`) is its `caption`;
- with `include_notes=True`, the speaker notes as a `notes` piece (no position: notes are not on
  the slide).

A shape whose text is longer than `max_characters` (default 1500) is cut by the size-bounded
chunking library (`indx_assets.pipeline.chunking.chunk_elements`, one element per paragraph), and every
part keeps the shape's box; parts carry `part`/`parts` in their metadata and offsets into the
page text where their text is a verbatim slice of it.

Boxes come from `indx_assets.pipeline.readers.pptx_geometry` through the shared deck model: a hidden
shape (or a shape in a hidden group) carries `hidden`; a shape whose frame cannot be found
(no frame of its own, nor in its layout or master), has no area, lies wholly off the slide, or
sits in a deck without a slide size carries `unresolved` with `unresolved_because`. A shape
partly off the slide is clamped to it and marked `clamped`. Rotation (degrees, the shape's
own plus its groups') is in `rotation`; the box is the unrotated frame.
"""

import io
import logging
from typing import Any

from indx_interfaces import ChunkPiece, PageChunks, PageOutput

log = logging.getLogger(__name__)

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
#: Image formats every consumer reads; anything else is converted to PNG.
WIDELY_READABLE = frozenset({"PNG", "JPEG", "GIF", "WEBP"})
DEFAULT_MAX_CHARACTERS = 1500
#: Pictures larger than this are not decoded for conversion (decompression-bomb guard).
MAX_CONVERT_PIXELS = 50_000_000


def _shape_metadata(shape: Any, slide_hidden: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"shape_id": shape.shape_id, "shape_name": shape.name, "frame_source": shape.frame_source}
    if shape.placeholder:
        meta["placeholder"] = shape.placeholder
    if shape.title:
        meta["title"] = True
    if shape.frame is not None and shape.frame.rotation:
        meta["rotation"] = round(shape.frame.rotation, 3)
    if shape.clamped:
        meta["clamped"] = True
    if shape.problem:
        meta["unresolved_because"] = shape.problem
    if shape.alt_text:
        meta["alt_text"] = shape.alt_text
    if slide_hidden:
        meta["slide_hidden"] = True
    return meta


def _markdown_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")


def table_markdown(rows: tuple[tuple[Any, ...], ...]) -> str:
    """A GitHub-style Markdown table; the first row is the header, merged-over cells are blank."""
    width = max((len(row) for row in rows), default=0)
    lines = []
    for i, row in enumerate(rows):
        cells = ["" if cell.merged else _markdown_cell(cell.text) for cell in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + "|".join(["---"] * width) + "|")
    return "\n".join(lines)


def table_html(rows: tuple[tuple[Any, ...], ...]) -> str:
    """An HTML table that keeps merged cells as `rowspan`/`colspan`."""
    from html import escape

    out = ["<table>"]
    for row in rows:
        out.append("<tr>")
        for cell in row:
            if cell.merged:
                continue
            spans = (f' rowspan="{cell.row_span}"' if cell.row_span > 1 else "") + (
                f' colspan="{cell.col_span}"' if cell.col_span > 1 else ""
            )
            out.append(f"<td{spans}>{escape(cell.text).replace(chr(10), '<br>')}</td>")
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def picture_bytes(blob: bytes, name: str) -> tuple[bytes, str, str | None] | None:
    """(bytes, format, converted_from) for a picture: as stored when widely readable, else PNG.

    `None` (and a log line) when Pillow cannot decode it; the picture is then skipped.
    """
    from PIL import Image

    try:
        with Image.open(io.BytesIO(blob)) as image:
            stored = (image.format or "").upper()
            if stored in WIDELY_READABLE:
                return blob, stored.lower(), None
            if image.width * image.height > MAX_CONVERT_PIXELS:
                log.warning("picture %s (%s) is %dx%d pixels; not converted, skipped", name, stored, image.width, image.height)
                return None
            image.load()
            if image.mode not in ("RGB", "RGBA", "L", "LA", "P", "1", "I;16"):
                image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
            out = io.BytesIO()
            image.save(out, format="PNG")
            return out.getvalue(), "png", stored.lower() or None
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        log.warning("picture %s cannot be decoded (%s); skipped", name, exc)
        return None


def picture_piece(blob: bytes, name: str, alt_text: str = "", **metadata: Any) -> ChunkPiece | None:
    """An `image` piece without a box for a document's picture (`picture_bytes`: as stored or
    converted to PNG), its format, source format and alt text in the metadata; None when the
    picture cannot be decoded."""
    converted = picture_bytes(blob, name)
    if converted is None:
        return None
    data, fmt, source = converted
    meta = {"image_format": fmt, **({"converted_from": source} if source else {}),
            **({"alt_text": alt_text} if alt_text else {}), **metadata}
    return ChunkPiece(image=data, chunk_type="image", bbox_reason="no_geometry", metadata=meta)


def split_shape_text(text: str, max_characters: int) -> list[tuple[str, int | None]]:
    """`text` as parts no longer than `max_characters`, each with its offset in `text` (or None).

    Paragraphs are the elements, so parts break between paragraphs first, then at sentence ends.
    """
    if len(text) <= max_characters:
        return [(text, 0)]
    from indx_assets.pipeline.chunking import NarrativeText, chunk_elements

    paragraphs = [NarrativeText(p) for p in text.split("\n") if p.strip()]
    parts: list[tuple[str, int | None]] = []
    cursor = 0
    for chunk in chunk_elements(paragraphs, max_characters=max_characters, include_orig_elements=False):
        # The library joins combined paragraphs with a blank line; in the shape they are one line apart.
        verbatim = chunk.text if chunk.text in text else chunk.text.replace("\n\n", "\n")
        at = text.find(verbatim, cursor)
        if at >= 0:
            cursor = at + 1
            parts.append((verbatim, at))
        else:
            parts.append((chunk.text, None))
    return parts


class PptxChunker:
    builtin = True
    reads_parsed = True
    media_types = frozenset({PPTX})

    def __init__(self, include_notes: bool = False, max_characters: int = DEFAULT_MAX_CHARACTERS) -> None:
        self.include_notes = include_notes
        self.max_characters = max_characters

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...],
              parsed: object = None) -> tuple[PageChunks, ...]:
        """The port's `chunk`; `parsed` is the PPTX reader's `Deck` of these bytes, if at hand."""
        if media_type not in self.media_types:
            return ()
        from indx_assets.pipeline.readers.ooxml_guard import PackageRefused
        from indx_assets.pipeline.readers.pptx import Deck, load_deck

        try:
            deck = parsed if isinstance(parsed, Deck) else load_deck(content)
        except PackageRefused as exc:
            log.info("pptx chunker declines: %s", exc.reason)
            return ()
        claims = []
        for output in outputs:
            if not 1 <= output.page <= len(deck.slides):
                continue
            slide = deck.slides[output.page - 1]
            pieces = self._pieces(slide, output)
            if pieces:
                claims.append(PageChunks(output.page, tuple(pieces)))
        return tuple(claims)

    def _pieces(self, slide: Any, output: PageOutput) -> list[ChunkPiece]:
        from indx_assets.pipeline.captions import nearest_caption

        pieces = []
        # the slide's visible text boxes, where a picture's caption is looked for
        blocks = [(s.bbox, s.text) for s in slide.shapes if s.kind == "text" and s.bbox is not None and s.text]
        for shape in slide.shapes:
            meta = _shape_metadata(shape, slide.hidden)
            where = {"bbox": shape.bbox} if shape.bbox is not None else {"bbox_reason": shape.bbox_reason}
            if shape.kind == "picture":
                converted = picture_bytes(shape.picture.blob, shape.name or shape.picture.partname)
                if converted is None:
                    continue
                data, fmt, source = converted
                meta["image_format"] = fmt
                if source:
                    meta["converted_from"] = source
                caption = nearest_caption(shape.bbox, blocks) if shape.bbox is not None else None
                if caption:
                    meta["caption"] = caption
                pieces.append(ChunkPiece(image=data, chunk_type="image", metadata=meta, **where))
                continue
            # Offsets only where the page text really is the reader's (another reader may have won).
            in_page = shape.start is not None and output.text[shape.start : shape.end] == shape.text
            offsets = {"start": shape.start, "end": shape.end} if in_page else {}
            if shape.kind == "table":
                meta["table_markdown"] = table_markdown(shape.table)
                meta["text_as_html"] = table_html(shape.table)
                pieces.append(ChunkPiece(text=shape.text, chunk_type="table", metadata=meta, **where, **offsets))
            else:
                parts = split_shape_text(shape.text, self.max_characters)
                for i, (text, at) in enumerate(parts):
                    part_meta = {**meta, "part": i + 1, "parts": len(parts)} if len(parts) > 1 else meta
                    part_offsets = (
                        {"start": shape.start + at, "end": shape.start + at + len(text)} if offsets and at is not None else {}
                    )
                    pieces.append(ChunkPiece(text=text, metadata=part_meta, **where, **part_offsets))
        if self.include_notes and slide.notes:
            pieces.append(ChunkPiece(text=slide.notes, bbox_reason="no_geometry", chunk_type="notes"))
        return pieces


class PptxProvider:
    """The `pptx` entry point. Options: `include_notes` (bool, default False) and
    `max_characters` (int, default 1500: longer shape texts are split)."""

    def __init__(self, include_notes: bool = False, max_characters: int = DEFAULT_MAX_CHARACTERS) -> None:
        self.include_notes = include_notes
        self.max_characters = max_characters

    def with_options(self, **options: Any) -> "PptxProvider":
        unknown = set(options) - {"include_notes", "max_characters"}
        if unknown:
            raise ValueError(f"pptx chunker options are include_notes and max_characters; got {sorted(unknown)}")
        include_notes = options.get("include_notes", self.include_notes)
        if not isinstance(include_notes, bool):
            raise ValueError(f"include_notes must be true or false, got {include_notes!r}")
        max_characters = options.get("max_characters", self.max_characters)
        if isinstance(max_characters, bool) or not isinstance(max_characters, int) or max_characters < 1:
            raise ValueError(f"max_characters must be a positive int, got {max_characters!r}")
        return PptxProvider(include_notes=include_notes, max_characters=max_characters)

    def chunkers(self) -> tuple[PptxChunker, ...]:
        return (PptxChunker(self.include_notes, self.max_characters),)
