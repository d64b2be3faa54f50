"""Our default chunking for the retrieval benchmark: the installed `markdown` chunker, as the pipeline runs it.

Each corpus is one Markdown page whose text is the source itself; the chunker's pieces carry
`start`/`end` offsets into it, which are the spans scored. The text embedded is the piece's own
text (what the pipeline embeds), optionally prefixed with its section title. With the `sentences`
option the chunker's sentence pieces come back beside the chunks.
"""

from collections.abc import Callable
from typing import Any

from indx_assets.pipeline.chunker_port import PageOutput, sentence_holders

Span = tuple[int, int]
Chunks = dict[str, list[tuple[Span, str]]]
#: corpus id -> (span, text, index of its chunk in that corpus's chunks)
Sentences = dict[str, list[tuple[Span, str, int]]]
#: The rows the issue's target is checked on: the default, and the same chunks found by their sentences too.
DEFAULT = "default (markdown chunker)"
WITH_SENTENCES = "default + sentences (chain option)"


def markdown_pieces(corpora: dict[str, str], title_prefix: bool = False, **options: Any) -> tuple[Chunks, Sentences]:
    """The chunks of each corpus and, with the `sentences` option, their sentence pieces, each
    with the index of its chunk (the port's `sentence_holders`, as the pipeline links them)."""
    from indx_assets.pipeline.chunkers.markdown import MarkdownProvider

    provider = MarkdownProvider().with_options(**options) if options else MarkdownProvider()
    (chunker,) = provider.chunkers()
    chunks: Chunks = {}
    sentences: Sentences = {}
    for cid, text in corpora.items():
        page = PageOutput(page=1, text=text, status="ok", reader="markdown")
        (claim,) = chunker.chunk(text.encode("utf-8"), "text/markdown", (page,))
        chunks[cid], sentences[cid] = [], []
        at: dict[int, int] = {}  # piece index -> index in chunks[cid]
        for index, (piece, holder) in enumerate(zip(claim.pieces, sentence_holders(claim.pieces), strict=True)):
            if piece.start is None or piece.end is None or piece.text is None:
                continue
            if piece.chunk_type == "sentence":  # the markdown chunker cuts them inside its chunks only
                sentences[cid].append(((piece.start, piece.end), piece.text, at[holder]))  # type: ignore[index]
                continue
            title = piece.metadata.get("section_title")
            body = f"{title}\n{piece.text}" if title_prefix and title and not piece.text.startswith(title) else piece.text
            at[index] = len(chunks[cid])
            chunks[cid].append(((piece.start, piece.end), body))
    return chunks, sentences


def markdown_chunks(corpora: dict[str, str], title_prefix: bool = False, **options: Any) -> Chunks:
    return markdown_pieces(corpora, title_prefix, **options)[0]


def markdown_default_configurations(corpora: dict[str, str]) -> dict[str, Callable[[], tuple[Chunks, Sentences]]]:
    """Name -> (chunks, sentence pieces) of our markdown chunker under chosen options."""
    return {
        DEFAULT: lambda: markdown_pieces(corpora),
        "default + section title": lambda: markdown_pieces(corpora, title_prefix=True),
        # the default with a soft maximum that gives recursive 250/0's mean size: the two at equal size
        "default, sized like recursive 250/0 (new_after_n_tokens 180)": lambda: markdown_pieces(corpora, new_after_n_tokens=180),
        # the same chunks, and their sentences as pieces: a hit is the chunk of its best match
        WITH_SENTENCES: lambda: markdown_pieces(corpora, sentences=True),
        # the same limits packed as `unstructured` packs (whole paragraphs, oversized ones cut alone)
        "default, unstructured packing": lambda: markdown_pieces(corpora, sentence_units=False, paragraph_starts_chunk=None),
    }
