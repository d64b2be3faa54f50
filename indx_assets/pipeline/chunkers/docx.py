"""The `docx` chunker: the Word reader's own blocks, mapped to elements, cut by `chunk_by_title`.

It reuses the block model that produced the page text (`indx_assets.pipeline.readers.docx.load_word`,
handed over as the read's parsed form when the reader just ran),
so every block's offsets are known exactly: headings are `Title`s at their outline level (so
`by_title` sections follow the document's own structure), list items `ListItem`s, tables
`Table`s with their HTML (split by rows, header row repeated, by the chunking library), text
boxes `NarrativeText`. Headers and footers are page furniture (`Header`/`Footer`): named on the
pieces, not chunked. Footnotes and comments are pieces of their own with their type
(`footnote`, `comment`); embedded pictures are `image` pieces (as stored when PNG, JPEG, GIF or
WebP, else converted to PNG, as the `pptx` chunker does). If the blocks ever disagree with the
page text (another reader won the page) the page is declined.
"""

from typing import Any

from indx_interfaces import ChunkPiece

from indx_assets.pipeline.chunkers.base import ReaderModelChunker, StructuredProvider, page_pieces
from indx_assets.pipeline.chunking.elements import Element, Footer, Header, ListItem, NarrativeText, Table, Title
from indx_assets.pipeline.readers.docx import DOCX, WordPage

_KINDS: dict[str, type[Element]] = {
    "title": Title,
    "text": NarrativeText,
    "list_item": ListItem,
    "table": Table,
    "textbox": NarrativeText,
    "header": Header,
    "footer": Footer,
}
#: Blocks that become pieces of their own type rather than chunk elements.
_OWN_TYPE = ("footnote", "comment")


def _elements(blocks: Any) -> list[Element]:
    elements: list[Element] = []
    for block in blocks:
        cls = _KINDS.get(block.kind)
        if cls is None:
            continue
        element = cls(block.text, text_as_html=block.html if cls is Table else None)
        if cls is Title:
            element.metadata.category_depth = block.level or 1
        element.metadata.start, element.metadata.end = block.start, block.end
        elements.append(element)
    return elements


class DocxChunker(ReaderModelChunker["WordPage"]):
    media_types = frozenset({DOCX})

    def model_pages(self, content: bytes, media_type: str, parsed: object) -> dict[int, "WordPage"] | None:
        """The Word reader's pages (`parsed`, its `WordDocument` of these bytes, if at hand)."""
        from indx_assets.pipeline.readers.docx import WordDocument, load_word
        from indx_assets.pipeline.readers.ooxml_guard import PackageRefused

        try:
            document = parsed if isinstance(parsed, WordDocument) else load_word(content)
        except PackageRefused:
            return None
        return {page.number: page for page in document.pages}

    def model_pieces(self, page: "WordPage") -> list[ChunkPiece]:
        from indx_assets.pipeline.chunkers.pptx import picture_bytes

        own = [b for b in page.blocks if b.kind in _OWN_TYPE]
        pieces = list(page_pieces(page.text, _elements(page.blocks), self.settings,
                                  [(b.start, b.end) for b in own]))
        for block in own:
            pieces.append(ChunkPiece(text=block.text, bbox_reason="no_geometry", chunk_type=block.kind,
                                     start=block.start, end=block.end))
        for number, block in enumerate((b for b in page.blocks if b.kind == "image"), start=1):
            converted = picture_bytes(block.image, f"page {page.number} picture {number}")
            if converted is None:
                continue
            data, fmt, source = converted
            meta = {"image_format": fmt, **({"converted_from": source} if source else {}),
                    **({"alt_text": block.alt_text} if block.alt_text else {})}
            pieces.append(ChunkPiece(image=data, chunk_type="image", bbox_reason="no_geometry", metadata=meta))
        return pieces


class DocxProvider(StructuredProvider):
    """The `docx` entry point; options as for the `markdown` and `html` chunkers (`ChunkerSettings`)."""

    chunker_class = DocxChunker
