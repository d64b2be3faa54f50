"""A picture of how a page was cut: the page with every chunk's box drawn and numbered.

`render_chunk_picture` is the one drawing routine; `indx show` and the `chunk_map`
materialisation both call it. Boxes are numbered 1, 2, 3, ... in the order given, which is
reading order when the chunks come from the chunk map (number k is `chunk:{k-1}`).

For a PDF the page itself is the background (rendered by PDFium with crop box and rotation,
the same frame the boxes are normalised to). Other media have no page image here, so the
boxes are drawn on a blank page of the given aspect ratio (width / height; A4 portrait by
default); chunks without a box (`bbox_reason`) are not drawn.
"""

import io
import math
from collections.abc import Sequence
from typing import Any

DEFAULT_DPI = 96
#: Long side, in pixels, of the blank page drawn for media without a page image.
BLANK_LONG_SIDE = 1100
_PALETTE = ((220, 50, 47), (38, 139, 210), (133, 153, 0), (211, 54, 130), (42, 161, 152), (203, 75, 22), (108, 113, 196))

BoxLike = Any  # an object with `.bbox` (DocumentChunk, ChunkPiece) or a (bbox, label) pair


def _boxes(chunks: Sequence[BoxLike]) -> list[tuple[tuple[float, float, float, float], str]]:
    out = []
    for number, chunk in enumerate(chunks, start=1):
        if isinstance(chunk, tuple) and len(chunk) == 2 and not isinstance(chunk[0], (int, float)):
            bbox, label = chunk
        else:
            bbox, label = getattr(chunk, "bbox", None), str(number)
        if bbox is not None:
            out.append((tuple(float(v) for v in bbox), str(label)))  # type: ignore[misc]
    return out


def _pdf_page_image(content: bytes, page: int, dpi: int) -> Any:
    from indx_assets.pipeline.readers.pdf import PdfOpenError, load_page, open_pdf, pdf_passwords

    try:
        document = open_pdf(content, pdf_passwords())
    except PdfOpenError:
        return None
    try:
        if not 1 <= page <= len(document):
            return None
        pdf_page = load_page(document, page - 1)
        try:
            bitmap = pdf_page.render(scale=dpi / 72)
            try:
                return bitmap.to_pil().convert("RGB")
            finally:
                bitmap.close()
        finally:
            pdf_page.close()
    except Exception:
        return None
    finally:
        document.close()


def _blank_page(aspect: float) -> Any:
    from PIL import Image

    if aspect >= 1:
        size = (BLANK_LONG_SIDE, max(1, round(BLANK_LONG_SIDE / aspect)))
    else:
        size = (max(1, round(BLANK_LONG_SIDE * aspect)), BLANK_LONG_SIDE)
    return Image.new("RGB", size, (255, 255, 255))


def render_chunk_picture(
    content: bytes,
    media_type: str,
    page: int,
    chunks: Sequence[BoxLike],
    *,
    dpi: int = DEFAULT_DPI,
    aspect: float = 1 / math.sqrt(2),
    page_image: Any = None,
) -> bytes | None:
    """PNG bytes of page `page` (1-based) with the chunks' boxes drawn and numbered.

    `chunks` holds `DocumentChunk`s or `ChunkPiece`s of that page in reading order, or
    `(bbox, label)` pairs. `page_image` is that PDF page already rendered at `dpi` (the PDF
    reader's `PdfParse.preview`), drawn on instead of rendering the page again. Returns None
    when the page cannot be pictured (a PDF that does not open or has no such page).
    """
    from PIL import ImageDraw, ImageFont

    if page_image is not None:
        image = page_image
    elif media_type == "application/pdf":
        image = _pdf_page_image(content, page, dpi)
        if image is None:
            return None
    else:
        image = _blank_page(aspect)
    width, height = image.size
    overlay = image.copy()
    draw = ImageDraw.Draw(overlay)
    font = ImageFont.load_default(size=max(12, round(height / 70)))
    labels = []
    for k, (bbox, label) in enumerate(_boxes(chunks)):
        color = _PALETTE[k % len(_PALETTE)]
        x0, y0, x1, y1 = bbox[0] * width, bbox[1] * height, bbox[2] * width, bbox[3] * height
        draw.rectangle((x0, y0, x1, y1), outline=color, width=max(2, round(width / 400)))
        labels.append((x0, y0, label, color))
    for x0, y0, label, color in labels:  # labels last, so no box is drawn over a number
        left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
        w, h = right - left + 6, bottom - top + 4
        lx, ly = max(0, min(x0, width - w)), max(0, y0 - h if y0 - h >= 0 else y0)
        draw.rectangle((lx, ly, lx + w, ly + h), fill=color)
        draw.text((lx + 3 - left, ly + 2 - top), label, fill=(255, 255, 255), font=font)
    buffer = io.BytesIO()
    overlay.save(buffer, format="PNG")
    return buffer.getvalue()
