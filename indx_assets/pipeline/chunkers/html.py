"""The `html` chunker: the HTML reader's own blocks, mapped to elements, cut by `chunk_by_title`.

It reuses the walk that produced the page text (`page_blocks`: blocks joined by a blank
line), so every block's offsets are known exactly: headings are `Title`s at their level,
list items `ListItem`s, tables `Table`s (with their HTML, for row-wise splitting), `<pre>`
blocks `CodeSnippet`s. If the blocks ever disagree with the page text the page is declined.

A document converted from print (an EDGAR filing) marks its printed pages with CSS page
breaks and prints each page's number just before the break. Such a block, a page number that
ends a printed page, is page furniture: a `Footer`, which `page_pieces` leaves out of the
chunks, so it neither leads into the next chunk nor stands alone as one. The page text keeps it.
"""

import io
import mmap
from collections.abc import Iterator
from typing import BinaryIO

from indx_interfaces import PageOutput

from indx_assets.pipeline.chunkers.base import PageDisagrees, StructuredProvider, StructuredTextChunker
from indx_assets.pipeline.chunking.elements import CodeSnippet, Element, Footer, ListItem, NarrativeText, Table, Title
from indx_assets.pipeline.chunking.page_numbers import PAGE_NUMBER
from indx_assets.pipeline.chunking.paragraphs import SEGMENT, code_segments, run_segments
from indx_assets.pipeline.scratch import scratch_file

_KINDS: dict[str, type[Element]] = {
    "title": Title,
    "text": NarrativeText,
    "list_item": ListItem,
    "table": Table,
    "code": CodeSnippet,
}


def html_elements(html: str, page_text: str) -> list[Element] | None:
    """Elements of an HTML document with offsets into `page_text`, or `None` if they disagree."""
    try:
        return list(iter_html_elements(html, page_text))
    except PageDisagrees:
        return None


def iter_html_elements(html: str | bytes, page_text: str) -> Iterator[Element]:
    """`html_elements` (of the document's text or UTF-8 bytes), each made as it is asked for;
    `PageDisagrees` where the blocks are not the page text (the walk's whole text is compared
    with it before the first element). A block of prose or code longer than a segment (a long
    `pre`, a page's text in one block) is taken from the page a segment at a time
    (`paragraphs.run_segments`, `code_segments`), as the `text` chunker's runs are."""
    from indx_assets.pipeline.readers.html import BLOCK_SEPARATOR, page_blocks

    blocks = page_blocks(html.encode("utf-8", errors="ignore") if isinstance(html, str) else html, page_text)
    if blocks is None:
        raise PageDisagrees("the HTML's text is not the page text")
    offset = 0
    for number, block in enumerate(blocks):
        if number:  # the page text is the blocks joined by the separator
            if not page_text.startswith(BLOCK_SEPARATOR, offset):
                raise PageDisagrees(f"no block separator at {offset} of the page text")
            offset += len(BLOCK_SEPARATOR)
        if block.start != offset:
            raise PageDisagrees(f"a block at {offset} is not the page text there")
        start, offset = offset, block.end
        furniture = block.kind == "text" and block.ends_page and PAGE_NUMBER.fullmatch(page_text, start, offset)
        cls = Footer if furniture else _KINDS.get(block.kind, NarrativeText)
        if offset - start > SEGMENT and cls in (NarrativeText, ListItem, CodeSnippet):
            segments = (code_segments(page_text, start, offset) if cls is CodeSnippet
                        else ((a, a, b) for a, b in run_segments(page_text, start, offset)))
            for text_start, a, b in segments:
                element = cls(page_text[text_start:b])
                element.metadata.start, element.metadata.end = a, b
                yield element
            continue
        element = cls(page_text[start:offset], text_as_html=block.html if cls is Table else None)
        if cls is Title:
            element.metadata.category_depth = block.level or 1
        element.metadata.start, element.metadata.end = start, offset
        yield element
    if offset != len(page_text):
        raise PageDisagrees(f"the blocks end at {offset} of the page's {len(page_text)} characters")


class HtmlChunker(StructuredTextChunker):
    media_types = frozenset({"text/html"})
    page_local = True  # a document of one page: nothing to look across (`chain_runner.cuts_page_by_page`)
    reads_mapped = True  # its bytes may come as a map of the stored file (`chain_runner.maps_content`)

    def page_elements(self, content: bytes, page: PageOutput) -> Iterator[Element] | None:
        from indx_assets.pipeline.readers.html import let_go_reader
        from indx_assets.pipeline.readers.text import NotText, is_utf8_file, transcode_file

        # the bytes the reader parsed (the file's own, when in UTF-8: a map of them is walked as
        # it is, its pages let go as they are), not its text held beside them
        file = let_go_reader(content) if isinstance(content, mmap.mmap) else io.BytesIO(content)
        try:
            if is_utf8_file(file):
                return iter_html_elements(content, page.text)
            # another encoding: decoded into a file in UTF-8 a step at a time, as the reader
            # decodes it, and that file's map walked
            utf8 = scratch_file()
            try:
                transcode_file(file, utf8)
            except BaseException:
                utf8.close()
                raise
            finally:
                file.seek(0)  # the map where it was, for a chunker after this one
        except NotText:
            return None
        return _walked(utf8, page.text)


def _walked(utf8: BinaryIO, page_text: str) -> Iterator[Element]:
    """`iter_html_elements` of the UTF-8 bytes written to the file `utf8`, which it closes."""
    with utf8:
        if utf8.tell() == 0:  # no visible text
            yield from iter_html_elements(b"", page_text)
            return
        utf8.flush()
        with mmap.mmap(utf8.fileno(), 0, access=mmap.ACCESS_READ) as source:
            yield from iter_html_elements(source, page_text)


class HtmlProvider(StructuredProvider):
    chunker_class = HtmlChunker
