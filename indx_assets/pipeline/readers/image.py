"""The image reader: PNG, JPEG, TIFF (every frame), BMP and WebP, one page per frame.

An image has no text layer, so every frame the decoder accepts comes out `unreadable` and
the reading ladder hands it to OCR (`indx_assets.pipeline.readers.ocr`). A frame the decoder refuses
is `failed` with the decoder's reason. A frame whose header declares more than `MAX_PIXELS`
pixels is refused before anything is decoded: the size comes from the header, so a
decompression bomb costs a header parse, not gigabytes of memory.
"""

import io
from typing import TYPE_CHECKING

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig

if TYPE_CHECKING:
    from PIL import Image

#: media type -> the one pillow format accepted for it (bytes that are another format fail).
IMAGE_FORMATS: dict[str, str] = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/tiff": "TIFF",
    "image/bmp": "BMP",
    "image/webp": "WEBP",
}
IMAGE_TYPES: frozenset[str] = frozenset(IMAGE_FORMATS)

#: Largest frame decoded: 80 megapixels (an A3 page scanned at 600 dpi is 70 MP). Below
#: pillow's own warning threshold, so this limit, not pillow's global default, decides.
MAX_PIXELS = 80_000_000
#: Most frames read from one file (a multi-page TIFF); more is refused as hostile.
MAX_FRAMES = 2_000

READER = "image"


class ImageRefused(ValueError):
    """The decoder refused the image, or it is over a limit; the message says which."""


def _open(content: bytes, media_type: str | None = None) -> "Image.Image":
    """Open the image lazily (header only) and check its declared size against MAX_PIXELS."""
    from PIL import Image, UnidentifiedImageError

    formats = [IMAGE_FORMATS[media_type]] if media_type in IMAGE_FORMATS else list(IMAGE_FORMATS.values())
    try:
        # Pillow itself raises past twice its global limit; our smaller MAX_PIXELS is checked
        # per frame before decoding (`_check_size`), so neither depends on global settings.
        image = Image.open(io.BytesIO(content), formats=formats)
    except Image.DecompressionBombError as exc:
        raise ImageRefused(f"decompression bomb refused: {exc}") from exc
    except UnidentifiedImageError as exc:
        wanted = " or ".join(formats)
        raise ImageRefused(f"not a decodable {wanted} image") from exc
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ImageRefused(f"image header is corrupt: {exc}") from exc
    return image


def _check_size(image: "Image.Image") -> None:
    width, height = image.size
    if width <= 0 or height <= 0:
        raise ImageRefused(f"image has no pixels ({width}x{height})")
    if width * height > MAX_PIXELS:
        raise ImageRefused(
            f"decompression bomb refused: {width}x{height} = {width * height:,} pixels "
            f"exceeds the limit of {MAX_PIXELS:,}"
        )


def _dpi(image: "Image.Image") -> int | None:
    dpi = image.info.get("dpi")
    try:
        value = int(round(float(dpi[0]))) if dpi else None
    except (TypeError, ValueError, IndexError):
        return None
    return value if value and 30 <= value <= 2400 else None


def _decoded(image: "Image.Image") -> "Image.Image":
    """Decode the current frame into a grayscale or RGB image OCR takes, upright, on white."""
    from PIL import Image, ImageOps

    _check_size(image)
    image.load()
    frame = ImageOps.exif_transpose(image) or image
    if frame.mode in ("1", "L", "RGB"):
        return frame.copy() if frame is image else frame
    if frame.mode in ("RGBA", "LA", "PA") or (frame.mode == "P" and "transparency" in frame.info):
        # Transparent pixels are drawn on white: converting straight to RGB would turn
        # them black and swallow dark text drawn on a transparent background.
        rgba = frame.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if frame.mode.startswith(("I", "F")):
        # 16-bit and float scans: stretch the range actually used onto 8 bits, since a plain
        # convert("L") clips everything above 255 to white.
        wide = frame.convert("F")
        low, high = wide.getextrema()
        span = (high - low) or 1.0
        return wide.point(lambda v: (v - low) * 255.0 / span).convert("L")
    return frame.convert("RGB")


def load_frame(content: bytes, index: int, media_type: str | None = None) -> tuple["Image.Image", int | None]:
    """Decode frame `index` (0-based) of an image for OCR; returns it and its dpi if the file says.

    Raises `ImageRefused` (or the decoder's own error) when the frame cannot be decoded.
    """
    image = _open(content, media_type)
    try:
        if index:
            image.seek(index)
        return _decoded(image), _dpi(image)
    finally:
        image.close()


def _frame_count(image: "Image.Image") -> int:
    return max(1, int(getattr(image, "n_frames", 1) or 1))


def _read(content: bytes, media_type: str) -> DocumentRead:
    from PIL import Image

    if not content:
        return DocumentRead.failure(media_type, "failed", "the file is empty (0 bytes): not an image")
    try:
        image = _open(content, media_type)
    except ImageRefused as exc:
        return DocumentRead.failure(media_type, "failed", str(exc))
    pages: list[PageOutput] = []
    try:
        try:
            frames = _frame_count(image)
        except (OSError, ValueError, EOFError) as exc:
            return DocumentRead.failure(media_type, "failed", f"could not count the frames: {exc}")
        if frames > MAX_FRAMES:
            return DocumentRead.failure(
                media_type, "failed", f"{frames} frames exceed the limit of {MAX_FRAMES} pages per image file"
            )
        for index in range(frames):
            number = index + 1
            try:
                if index:
                    image.seek(index)
                # Decode to prove the frame is readable; the OCR rung decodes it again, one
                # frame at a time, so a long TIFF never sits in memory whole.
                decoded = _decoded(image)
                size = decoded.size
                decoded.close()
            except (ImageRefused, OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombError) as exc:
                pages.append(PageOutput(page=number, status="failed", reader=READER, reason=str(exc)))
                continue
            metadata = {"format": image.format, "width": size[0], "height": size[1], "frame": index}
            if (dpi := _dpi(image)) is not None:
                metadata["dpi"] = dpi
            pages.append(
                PageOutput(page=number, status="unreadable", reader=READER, reason="image: no text layer", metadata=metadata)
            )
    finally:
        image.close()
    return DocumentRead.from_pages(media_type, tuple(pages), format=image.format, frames=len(pages))


def read_png(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read(content, "image/png")


def read_jpeg(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read(content, "image/jpeg")


def read_tiff(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read(content, "image/tiff")


def read_bmp(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read(content, "image/bmp")


def read_webp(content: bytes, config: ReaderConfig) -> DocumentRead:
    return _read(content, "image/webp")
