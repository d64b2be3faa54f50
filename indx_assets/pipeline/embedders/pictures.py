"""What an image chunk is embedded from, and the `vector_source` it records.

With an embedder that declares `image`, a picture is embedded from its pixels (`pixels`), in
the texts' space. With a text-only embedder, from the text that describes it, the author's
words first: its alt text (a PowerPoint picture's `descr`, a Word picture's `descr`;
`alt_text`), else its caption (the caption block the reader placed next to it, `caption` in
its metadata, else the title of its page; `caption`), else the text OCR reads on the picture
itself when OCR is installed (`ocr`). A picture nothing describes gets no vector (`indx stats`
counts chunks without one).
"""

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from indx_assets.pipeline.bounds import MAX_OCR_PAGES_ENV
from indx_assets.pipeline.readers import ReaderConfig

log = logging.getLogger(__name__)

PIXELS, ALT_TEXT, CAPTION, OCR = "pixels", "alt_text", "caption", "ocr"
#: The metadata key of a row's vector source (image rows only; a text chunk is its own text).
VECTOR_SOURCE_KEY = "vector_source"


@dataclass(frozen=True)
class PictureInput:
    """What to embed for one image chunk: `image` bytes or `text`, and where it came from."""

    source: str
    text: str = ""
    image: bytes = b""


def page_titles(rows: Iterable[Mapping[str, Any]]) -> dict[int | None, str]:
    """The first title chunk's text of each page (a slide's title shape, a heading)."""
    titles: dict[int | None, str] = {}
    for row in rows:
        if row.get("text") and (row.get("chunk_type") == "title" or _metadata(row).get("title") is True):
            titles.setdefault(row.get("page"), row["text"])
    return titles


def picture_input(
    row: Mapping[str, Any], titles: Mapping[int | None, str], pixels: bool,
    ocr: Callable[[bytes], str] | None = None,
) -> PictureInput | None:
    """The input an image chunk `row` is embedded from (see the module's rule), or None.

    `ocr` reads a picture's text (None: OCR is not to be tried); it is called only for a
    picture that neither alt text nor a caption describes.
    """
    if pixels and row.get("image"):
        return PictureInput(PIXELS, image=row["image"])
    metadata = _metadata(row)
    alt = str(metadata.get("alt_text") or "").strip()
    if alt:
        return PictureInput(ALT_TEXT, text=alt)
    caption = str(metadata.get("caption") or "").strip() or titles.get(row.get("page"), "").strip()
    if caption:
        return PictureInput(CAPTION, text=caption)
    read = " ".join(ocr(row["image"]).split()) if ocr is not None and row.get("image") else ""
    if read:
        return PictureInput(OCR, text=read)
    return None


class PictureOcr:
    """Reads the text on a document's pictures for `picture_input`, through the OCR entry
    point scanned pages use (`readers.ocr.ocr_picture`: same engine, languages and pixel
    bound) and under the same bound: at most `max_ocr_pages` pictures per document.
    `problem` says why pictures went unread (OCR not installed, the bound reached)."""

    def __init__(self, config: ReaderConfig) -> None:
        self.config = config
        self.read = 0
        self.problem: str | None = None

    def fingerprint(self) -> str | None:
        """What read this document's pictures, for its embeddings' data version: the OCR
        engine and bound when a picture reached OCR (None when none did). It is not part of
        `chunk_embeddings`' code version: installing OCR re-reads scanned pages and re-embeds
        only the documents whose pages changed, not every document in case it has pictures."""
        if not self.read and self.problem is None:
            return None
        from indx_assets.pipeline.readers.ocr import ocr_fingerprint

        payload = {"ocr": ocr_fingerprint(self.config.ocr_languages), "max_ocr_pages": self.config.max_ocr_pages}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def __call__(self, data: bytes) -> str:
        from indx_assets.pipeline.readers.ocr import OcrUnavailable, ocr_picture

        if self.problem is not None:
            return ""
        if self.read >= self.config.max_ocr_pages:
            self.problem = f"more pictures to OCR than the limit of {self.config.max_ocr_pages} ({MAX_OCR_PAGES_ENV})"
            return ""
        self.read += 1
        try:
            return ocr_picture(data, self.config)
        except OcrUnavailable as exc:
            self.problem = f"OCR unavailable ({exc})"
        except Exception as exc:  # one picture the decoder or the engine fails on is that picture's loss alone
            log.warning("OCR of a picture failed: %s: %s", type(exc).__name__, exc)
        return ""


def _metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    return json.loads(row.get("metadata") or "{}")
