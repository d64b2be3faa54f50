"""The `html` chunker: the HTML reader's own blocks, mapped to elements, cut by `chunk_by_title`.

It reuses `html_blocks()`, the walk that produced the page text (blocks joined by a blank
line), so every block's offsets are known exactly: headings are `Title`s at their level,
list items `ListItem`s, tables `Table`s (with their HTML, for row-wise splitting), `<pre>`
blocks `CodeSnippet`s. If the blocks ever disagree with the page text the page is declined.

A document converted from print (an EDGAR filing) marks its printed pages with CSS page
breaks and prints each page's number just before the break. Such a block, a page number that
ends a printed page, is page furniture: a `Footer`, which `page_pieces` leaves out of the
chunks, so it neither leads into the next chunk nor stands alone as one. The page text keeps it.
"""

from indx_interfaces import PageOutput

from indx_assets.pipeline.chunkers.base import StructuredProvider, StructuredTextChunker
from indx_assets.pipeline.chunking.elements import CodeSnippet, Element, Footer, ListItem, NarrativeText, Table, Title
from indx_assets.pipeline.chunking.page_numbers import PAGE_NUMBER

_KINDS: dict[str, type[Element]] = {
    "title": Title,
    "text": NarrativeText,
    "list_item": ListItem,
    "table": Table,
    "code": CodeSnippet,
}


def html_elements(html: str, page_text: str) -> list[Element] | None:
    """Elements of an HTML document with offsets into `page_text`, or `None` if they disagree."""
    from indx_assets.pipeline.readers.html import BLOCK_SEPARATOR, html_blocks

    blocks = html_blocks(html)
    if BLOCK_SEPARATOR.join(b.text for b in blocks) != page_text:
        return None
    elements: list[Element] = []
    offset = 0
    for block in blocks:
        start, offset = offset, offset + len(block.text) + len(BLOCK_SEPARATOR)
        furniture = block.kind == "text" and block.ends_page and PAGE_NUMBER.fullmatch(block.text)
        cls = Footer if furniture else _KINDS.get(block.kind, NarrativeText)
        element = cls(block.text, text_as_html=block.html if cls is Table else None)
        if cls is Title:
            element.metadata.category_depth = block.level or 1
        element.metadata.start, element.metadata.end = start, start + len(block.text)
        elements.append(element)
    return elements


class HtmlChunker(StructuredTextChunker):
    media_types = frozenset({"text/html"})

    def page_elements(self, content: bytes, page: PageOutput) -> list[Element] | None:
        from indx_assets.pipeline.readers.text import NotText, decode_text

        try:
            html = decode_text(content).text
        except NotText:
            return None
        return html_elements(html, page.text)


class HtmlProvider(StructuredProvider):
    chunker_class = HtmlChunker
