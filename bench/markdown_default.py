"""Our default chunking for the retrieval benchmark: the installed `markdown` chunker, as the pipeline runs it.

Each corpus is one Markdown page whose text is the source itself; the chunker's pieces carry
`start`/`end` offsets into it, which are the spans scored. The text embedded is the piece's own
text (what the pipeline embeds), optionally prefixed with its section title.
"""

from collections.abc import Callable
from typing import Any

from indx_assets.port import PageOutput

Span = tuple[int, int]
Chunks = dict[str, list[tuple[Span, str]]]
#: The row the issue's target is checked on.
DEFAULT = "default (markdown chunker)"


def markdown_chunks(corpora: dict[str, str], title_prefix: bool = False, **options: Any) -> Chunks:
    from indx_assets.chunkers.markdown import MarkdownProvider

    provider = MarkdownProvider().with_options(**options) if options else MarkdownProvider()
    (chunker,) = provider.chunkers()
    out: Chunks = {}
    for cid, text in corpora.items():
        page = PageOutput(page=1, text=text, status="ok", reader="markdown")
        (claim,) = chunker.chunk(text.encode("utf-8"), "text/markdown", (page,))
        chunks: list[tuple[Span, str]] = []
        for piece in claim.pieces:
            if piece.start is None or piece.end is None or piece.text is None:
                continue
            title = piece.metadata.get("section_title")
            body = f"{title}\n{piece.text}" if title_prefix and title and not piece.text.startswith(title) else piece.text
            chunks.append(((piece.start, piece.end), body))
        out[cid] = chunks
    return out


def markdown_default_configurations(corpora: dict[str, str]) -> dict[str, Callable[[], Chunks]]:
    return {
        DEFAULT: lambda: markdown_chunks(corpora),
        "default + section title": lambda: markdown_chunks(corpora, title_prefix=True),
        # the default with a soft maximum that gives recursive 250/0's mean size: the two at equal size
        "default, sized like recursive 250/0 (new_after_n_tokens 190)": lambda: markdown_chunks(corpora, new_after_n_tokens=190),
        # the same limits packed as `unstructured` packs (whole paragraphs, oversized ones cut alone)
        "default, unstructured packing": lambda: markdown_chunks(corpora, sentence_units=False, paragraph_starts_chunk=None),
    }
