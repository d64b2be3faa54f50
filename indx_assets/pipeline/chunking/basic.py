"""`chunk_elements`: the basic strategy (fill each chunk with whole elements, in order)."""

from collections.abc import Iterable

from indx_assets.pipeline.chunking.core import Chunk, form_chunks, iter_pre_chunks
from indx_assets.pipeline.chunking.elements import Element
from indx_assets.pipeline.chunking.options import DEFAULT_MAX_CHARACTERS, build_options
from indx_assets.pipeline.tokenizer import TokenCounter


def chunk_elements(
    elements: Iterable[Element],
    *,
    max_characters: int = DEFAULT_MAX_CHARACTERS,
    new_after_n_chars: int | None = None,
    overlap: int = 0,
    overlap_all: bool = False,
    include_orig_elements: bool = True,
    max_tokens: int | None = None,
    new_after_n_tokens: int | None = None,
    tokenizer: TokenCounter | None = None,
    isolate_table: bool = True,
    repeat_table_headers: bool = True,
) -> list[Chunk]:
    """Combine sequential `elements` into chunks no bigger than the hard maximum.

    `max_characters` (or `max_tokens`, counted with `tokenizer`) is the hard maximum: no chunk
    is bigger. `new_after_n_chars` (`new_after_n_tokens`) is the soft maximum: a chunk that has
    passed it takes no further element. An element bigger than the hard maximum is chunked on
    its own and text-split (sentence end, else space, else character). `overlap` (in the same
    unit) repeats the tail of a split piece at the start of the next; `overlap_all` does so
    between every pair of chunks. Tables stand alone (`isolate_table`) and are split by whole
    rows with their header rows repeated (`repeat_table_headers`). Each chunk keeps its
    elements in `metadata.orig_elements` (`include_orig_elements`) and the title of its
    section in `metadata.section_title`. Invalid options raise `ValueError` naming the option.
    """
    opts = build_options(
        max_characters=max_characters,
        new_after_n_chars=new_after_n_chars,
        overlap=overlap,
        overlap_all=overlap_all,
        include_orig_elements=include_orig_elements,
        max_tokens=max_tokens,
        new_after_n_tokens=new_after_n_tokens,
        tokenizer=tokenizer,
        isolate_table=isolate_table,
        repeat_table_headers=repeat_table_headers,
    )
    return form_chunks(iter_pre_chunks(elements, opts), opts)
