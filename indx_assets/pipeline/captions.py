"""A picture's caption, found by where text sits on the page.

Where a reader knows boxes (a slide's shapes), a picture's caption is the text block nearest
to it directly below it, else directly above it: a block that overlaps the picture's width
and starts like a caption ("Figure 3", "Fig. 2", "Table 1", "Image", "Photo", "Chart",
"Exhibit", "図", "表", ...) within `CAPTION_REACH` of the page's height, or any short block
(one line of at most `SHORT_WORDS` words) within `SHORT_GAP`. A caption-like start beats a
short line, then a block below beats one above (figure captions sit under their pictures;
in a stack of captioned pictures the block above is the previous picture's caption), then
the nearer wins. Two pictures side by side each get the caption under
its own width. No block qualifies: no caption (the embedder then falls back to the page's
title: `embedders.pictures`).

Boxes are normalised to the page (0..1, top-left origin), as `ChunkPiece.bbox`.
"""

import re
from collections.abc import Sequence

BBox = tuple[float, float, float, float]

#: How a caption starts: a label, optionally numbered ("Figure 3:", "Fig. 2.1", "Table IV").
CAPTION_START = re.compile(
    r"^\s*(fig(ure)?s?\.?|tab(le)?\.?|image|img\.?|photo(graph)?|picture|chart|graph|diagram|exhibit|plate|illustration"
    r"|abbildung|abb\.|tabelle|bild|図|表|写真|グラフ)(\s|\d|:|$)",
    re.IGNORECASE,
)
#: A caption-like block this far (a fraction of the page's height) from the picture still counts.
CAPTION_REACH = 0.25
#: A short line without a label counts only this close under (or over) the picture.
SHORT_GAP = 0.06
SHORT_WORDS = 12
#: Boxes may overlap the picture's edge by this much and still be "below" or "above" it.
SLACK = 0.01


def _overlaps_width(picture: BBox, block: BBox) -> bool:
    return min(picture[2], block[2]) - max(picture[0], block[0]) > 0


def _is_short(text: str) -> bool:
    return "\n" not in text.strip() and len(text.split()) <= SHORT_WORDS


def nearest_caption(picture: BBox, blocks: Sequence[tuple[BBox, str]]) -> str | None:
    """The caption of the picture at `picture` among the text `blocks` ((box, text) pairs) of
    its page, by the module's rule; None when no block qualifies."""
    best: tuple[tuple[int, int, float], str] | None = None
    for box, text in blocks:
        if not text.strip() or not _overlaps_width(picture, box):
            continue
        if box[1] >= picture[3] - SLACK:
            side, gap = 0, box[1] - picture[3]  # below
        elif box[3] <= picture[1] + SLACK:
            side, gap = 1, picture[1] - box[3]  # above
        else:
            continue  # beside or overlapping: not a caption by position
        gap = max(0.0, gap)
        if CAPTION_START.match(text) and gap <= CAPTION_REACH:
            kind = 0
        elif _is_short(text) and gap <= SHORT_GAP:
            kind = 1
        else:
            continue
        rank = (kind, side, gap)
        if best is None or rank < best[0]:
            best = (rank, text.strip())
    return None if best is None else best[1]
