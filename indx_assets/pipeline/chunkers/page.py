"""The `page` chunker: the floor. Every readable page's whole text becomes one piece.

It is the fallback (`fallback = True`), asked after every other chunker, so it only cuts
the pages nobody more specific claimed.
"""

from indx_interfaces import ChunkPiece, PageChunks, PageOutput

from indx_assets.pipeline.whitespace import blank


class PageChunker:
    fallback = True
    page_local = True  # each page's answer is its own text (`chain_runner.cuts_page_by_page`)
    reads_content = False  # (`chain_runner.reads_content`)

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
        return tuple(
            PageChunks(o.page, (ChunkPiece(text=o.text, bbox_reason="no_geometry", start=0, end=len(o.text)),))
            for o in outputs
            if o.readable and not blank(o.text)
        )


class PageProvider:
    def chunkers(self) -> tuple[PageChunker, ...]:
        return (PageChunker(),)
