"""`chunk_by_title`: the basic strategy plus sections (every `Title` starts one)."""

from collections.abc import Iterable

from indx_assets.pipeline.chunking.core import Chunk, combine_pre_chunks, form_chunks, iter_pre_chunks
from indx_assets.pipeline.chunking.elements import Element
from indx_assets.pipeline.chunking.options import DEFAULT_MAX_CHARACTERS, build_options
from indx_assets.pipeline.tokenizer import TokenCounter


def chunk_by_title(
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
    combine_text_under_n_chars: int | None = None,
    multipage_sections: bool = True,
) -> list[Chunk]:
    """Chunk like `chunk_elements`, but never across a section boundary.

    A `Title` starts a new section, and with `multipage_sections=False` so does a new page.
    Sections smaller than `combine_text_under_n_chars` (default: the hard maximum; in tokens in
    token mode) are combined with the next while the result stays within the soft maximum,
    never across a table and, with `multipage_sections=False`, never across a page.
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
        by_title=True,
        combine_text_under_n_chars=combine_text_under_n_chars,
        multipage_sections=multipage_sections,
    )
    return form_chunks(combine_pre_chunks(iter_pre_chunks(elements, opts), opts), opts)
