"""What an image chunk is embedded from, and the `vector_source` it records.

With an embedder that declares `image`, a picture is embedded from its pixels (`pixels`), in
the texts' space. With a text-only embedder, from the text that describes it, best first: its
alt text (a PowerPoint picture's `descr`, a Word picture's `descr`; `alt_text`), else the title
of its page (a slide's title, as a caption would; `caption`). A picture nothing describes gets
no vector (`indx stats` counts chunks without one). OCR'd text is not an image chunk's: a page
OCR reads becomes text chunks of its own.
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PIXELS, ALT_TEXT, CAPTION = "pixels", "alt_text", "caption"
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


def picture_input(row: Mapping[str, Any], titles: Mapping[int | None, str], pixels: bool) -> PictureInput | None:
    """The input an image chunk `row` is embedded from (see the module's rule), or None."""
    if pixels and row.get("image"):
        return PictureInput(PIXELS, image=row["image"])
    alt = str(_metadata(row).get("alt_text") or "").strip()
    if alt:
        return PictureInput(ALT_TEXT, text=alt)
    title = titles.get(row.get("page"), "").strip()
    if title:
        return PictureInput(CAPTION, text=title)
    return None


def _metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    return json.loads(row.get("metadata") or "{}")
