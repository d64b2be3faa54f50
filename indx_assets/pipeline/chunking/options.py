"""Chunking options: validated once, up front, with errors that name the option."""

from dataclasses import dataclass
from typing import Any

from indx_assets.pipeline.chunking.measure import CharMeasure, Measure, TokenMeasure


class _DefaultInt(int):
    """An int default that can be told apart from the same value passed explicitly."""

    __slots__ = ()


#: `max_characters`' default (500, as in `unstructured`); `max_tokens` may replace it, but an
#: explicit `max_characters` next to `max_tokens` is a contradiction and is rejected.
DEFAULT_MAX_CHARACTERS: int = _DefaultInt(500)
#: The separator between element texts in a chunk: a blank line.
TEXT_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class ChunkingOptions:
    """The resolved options of one chunking run. Sizes are in `measure.unit`."""

    measure: Measure
    hard_max: int
    soft_max: int
    overlap: int
    overlap_all: bool
    include_orig_elements: bool
    isolate_table: bool
    repeat_table_headers: bool
    by_title: bool = False
    combine_under: int = 0
    multipage_sections: bool = True
    #: code blocks stand alone like tables (the format chunkers' choice; not an `unstructured` option)
    isolate_code: bool = False

    @property
    def combine_limit(self) -> int:
        """Combining small sections never grows a chunk past the soft maximum (nor the hard one)."""
        return min(self.soft_max, self.hard_max)


def _check_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"'{name}' must be an int, got {value!r}")


def build_options(
    *,
    max_characters: int,
    new_after_n_chars: int | None,
    overlap: int,
    overlap_all: bool,
    include_orig_elements: bool,
    max_tokens: int | None,
    new_after_n_tokens: int | None,
    tokenizer: Any,
    isolate_table: bool,
    repeat_table_headers: bool,
    by_title: bool = False,
    combine_text_under_n_chars: int | None = None,
    multipage_sections: bool = True,
) -> ChunkingOptions:
    """Resolve and validate the public options; raise `ValueError` naming the offending one."""
    for name, value in (("max_characters", max_characters), ("overlap", overlap)):
        _check_int(name, value)
    for name, value in (
        ("new_after_n_chars", new_after_n_chars),
        ("max_tokens", max_tokens),
        ("new_after_n_tokens", new_after_n_tokens),
        ("combine_text_under_n_chars", combine_text_under_n_chars),
    ):
        if value is not None:
            _check_int(name, value)
    measure: Measure
    if max_tokens is not None:
        if max_characters is not DEFAULT_MAX_CHARACTERS:
            raise ValueError("'max_tokens' and 'max_characters' are mutually exclusive; pass one of them")
        if tokenizer is None:
            raise ValueError("'max_tokens' needs a 'tokenizer' (anything with .count(text) -> int)")
        if not callable(getattr(tokenizer, "count", None)):
            raise ValueError(f"'tokenizer' must have a .count(text) -> int method, got {type(tokenizer).__name__}")
        if max_tokens <= 0:
            raise ValueError(f"'max_tokens' must be > 0, got {max_tokens}")
        if new_after_n_chars is not None:
            raise ValueError("'new_after_n_chars' is a character limit; with 'max_tokens' use 'new_after_n_tokens'")
        if new_after_n_tokens is not None and new_after_n_tokens < 0:
            raise ValueError(f"'new_after_n_tokens' must be >= 0, got {new_after_n_tokens}")
        hard_max, soft_arg, limit_name = max_tokens, new_after_n_tokens, "max_tokens"
        measure = TokenMeasure(tokenizer)
    else:
        if new_after_n_tokens is not None:
            raise ValueError("'new_after_n_tokens' needs 'max_tokens'")
        if max_characters <= 0:
            raise ValueError(f"'max_characters' must be > 0, got {max_characters}")
        if new_after_n_chars is not None and new_after_n_chars < 0:
            raise ValueError(f"'new_after_n_chars' must be >= 0, got {new_after_n_chars}")
        hard_max, soft_arg, limit_name = int(max_characters), new_after_n_chars, "max_characters"
        measure = CharMeasure()
    if overlap < 0:  # `unstructured` silently accepts a negative overlap and slices from the wrong end
        raise ValueError(f"'overlap' must be >= 0, got {overlap}")
    if overlap >= hard_max:
        raise ValueError(f"'overlap' must be less than '{limit_name}', got {overlap} >= {hard_max}")
    soft_max = hard_max if soft_arg is None else min(soft_arg, hard_max)
    combine_under = 0
    if by_title:
        if combine_text_under_n_chars is not None and not 0 <= combine_text_under_n_chars <= hard_max:
            raise ValueError(
                f"'combine_text_under_n_chars' must lie in [0, {limit_name}={hard_max}], got {combine_text_under_n_chars}"
            )
        combine_under = hard_max if combine_text_under_n_chars is None else combine_text_under_n_chars
        combine_under = min(combine_under, soft_max)
    return ChunkingOptions(
        measure=measure,
        hard_max=hard_max,
        soft_max=soft_max,
        overlap=overlap,
        overlap_all=bool(overlap_all),
        include_orig_elements=bool(include_orig_elements),
        isolate_table=bool(isolate_table),
        repeat_table_headers=bool(repeat_table_headers),
        by_title=by_title,
        combine_under=combine_under,
        multipage_sections=bool(multipage_sections),
    )
