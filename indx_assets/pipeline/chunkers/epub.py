"""The `epub` chunker: each chapter's HTML blocks cut like an HTML page, its images as image chunks.

It reuses the EPUB reader's book (`indx_assets.pipeline.readers.epub.load_book`, handed over as
the read's parsed form when the reader just ran) and the `html` chunker's mapping of HTML
blocks to elements (`html_elements`), so offsets point into the chapter's page text. The
chapter's title in the book's navigation document names the section of the chunks before the
chapter's own first heading (`section_title`, and the head of every chunk's `section_path`,
unless the chapter's own heading already says it). Pictures are `image` pieces (as stored when
PNG, JPEG, GIF or WebP, else converted to PNG, as the `pptx` chunker does). If the blocks ever
disagree with the page text (another reader won the page) the page is declined.
"""

from typing import Any

from indx_interfaces import ChunkPiece

from indx_assets.pipeline.chunkers.base import ReaderModelChunker, StructuredProvider, page_pieces, section_name
from indx_assets.pipeline.readers.epub import EPUB, Chapter


def _titled(piece: ChunkPiece, title: str) -> ChunkPiece:
    """`piece` with the chapter's navigation title as the head of its section path."""
    from dataclasses import replace

    metadata: dict[str, Any] = dict(piece.metadata)
    path = list(metadata.get("section_path") or [])
    if not path or path[0] != title:
        metadata["section_path"] = [title, *path]
    metadata.setdefault("section_title", title)
    metadata["chapter_title"] = title
    return replace(piece, metadata=metadata)


class EpubChunker(ReaderModelChunker[Chapter]):
    media_types = frozenset({EPUB})

    def model_pages(self, content: bytes, media_type: str, parsed: object) -> dict[int, Chapter] | None:
        """The book's chapters by page (`parsed`, the EPUB reader's `Book` of these bytes, if at hand)."""
        from indx_assets.pipeline.readers.epub import Book, load_book
        from indx_assets.pipeline.readers.ooxml_guard import PackageRefused

        try:
            book = parsed if isinstance(parsed, Book) else load_book(content)
        except PackageRefused:
            return None
        return dict(enumerate(book.chapters, start=1))

    def model_pieces(self, chapter: Chapter) -> list[ChunkPiece]:
        from indx_assets.pipeline.chunkers.html import html_elements
        from indx_assets.pipeline.chunkers.pptx import picture_piece

        pieces: list[ChunkPiece] = []
        elements = html_elements(chapter.html, chapter.text) if chapter.text else []
        if elements:
            pieces += page_pieces(chapter.text, elements, self.settings)
        title = section_name(chapter.title) if chapter.title else None  # each piece carries it
        if title:
            pieces = [_titled(p, title) for p in pieces]
        for number, (blob, alt) in enumerate(chapter.images, start=1):
            named = {"chapter_title": title} if title else {}
            picture = picture_piece(blob, f"{chapter.path} picture {number}", alt, **named)
            if picture is not None:
                pieces.append(picture)
        return pieces


class EpubProvider(StructuredProvider):
    """The `epub` entry point; options as for the `markdown` and `html` chunkers (`ChunkerSettings`)."""

    chunker_class = EpubChunker
