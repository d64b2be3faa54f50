"""The element-chunking pipeline shared by `chunk_elements` and `chunk_by_title`.

1. Every element gets its chunk text (whitespace collapsed to single spaces; code and tables
   kept verbatim) and its size, measured once up front (one batch in token mode; a long one
   only until it passes the hard maximum, as packing asks no more of it). An element whose
   text is only whitespace costs nothing: no size, no separator.
2. Pre-chunking: elements are gathered in order while the next one fits the hard maximum and
   the pre-chunk has not passed the soft maximum. A table (with `isolate_table`) stands alone;
   an element too big on its own gets a pre-chunk of its own. `chunk_by_title` also starts a
   pre-chunk at every `Title` and, with `multipage_sections=False`, at every new page.
3. `chunk_by_title` combines a pre-chunk smaller than `combine_text_under_n_chars` with the
   next one while the sum stays within the soft maximum, never across tables and, with
   `multipage_sections=False`, never across pages.
4. Each pre-chunk becomes one `CompositeElement` (texts joined by a blank line), or, when
   oversized, several split by `TextSplitter`; a table becomes `Table`/`TableChunk`s.

Sizes are added up rather than re-measured when the measure is additive (characters, and
whitespace-additive tokenizers); otherwise joins are measured exactly where decided.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import repeat

from indx_assets.pipeline.chunking.elements import (
    CodeSnippet,
    CompositeElement,
    Element,
    ElementMetadata,
    Table,
    TableChunk,
    Title,
)
from indx_assets.pipeline.chunking.options import TEXT_SEPARATOR, ChunkingOptions
from indx_assets.pipeline.chunking.tables import table_chunks
from indx_assets.pipeline.chunking.text_splitter import TextSplitter
from indx_assets.pipeline.whitespace import collapse_whitespace

Chunk = CompositeElement | Table | TableChunk


def chunk_text_of(element: Element, isolate_table: bool) -> str:
    """The text an element contributes to a chunk ("" when it is only whitespace)."""
    text = element.text
    if not text or text.isspace():
        return ""
    if isinstance(element, (CodeSnippet, Table)):
        return text.rstrip().lstrip("\r\n")
    return collapse_whitespace(text)


@dataclass(slots=True)
class PreChunk:
    """Elements staged to form one chunk (or several, when one oversized element is split)."""

    elements: list[Element]
    texts: list[str]
    #: sum of the sizes of `texts` (meaningful for additive measures)
    content_size: int
    prefix: str = ""
    prefix_size: int = 0
    section_title: str | None = None
    pages: set[int] = field(default_factory=set)
    is_table: bool = False
    #: a table or (with `isolate_code`) code: never shares a chunk
    alone: bool = False
    #: begins at a unit that starts a chunk (see `pack_units`): never combined into the pre-chunk before it
    fresh: bool = False

    @property
    def text(self) -> str:
        if self.prefix:
            return TEXT_SEPARATOR.join([self.prefix, *self.texts])
        return TEXT_SEPARATOR.join(self.texts)

    def size(self, opts: ChunkingOptions) -> int:
        m = opts.measure
        if not m.additive:
            return m.size(self.text)
        segments = len(self.texts) + (1 if self.prefix else 0)
        joins = max(0, segments - 1) * m.join_cost(TEXT_SEPARATOR)
        return self.content_size + self.prefix_size + joins


class _Builder:
    """Accumulates elements into the work-in-progress pre-chunk."""

    def __init__(self, opts: ChunkingOptions) -> None:
        self.opts = opts
        self.join = opts.measure.join_cost(TEXT_SEPARATOR)
        self.tail_of = TextSplitter(opts.measure, opts.hard_max, opts.overlap)
        self.prefix = ""
        self.prefix_size = 0
        self._reset()

    def _reset(self) -> None:
        self.elements: list[Element] = []
        self.texts: list[str] = []
        self.sizes = 0
        self.has_table = False
        self.alone = False
        self.fresh = False
        self.section_title: str | None = None
        self.pages: set[int] = set()

    def _size(self) -> int:
        segments = len(self.texts) + (1 if self.prefix else 0)
        return self.sizes + self.prefix_size + max(0, segments - 1) * self.join

    def fits(self, element: Element, text: str, size: int, alone: bool) -> bool:
        if alone:
            return not self.elements
        if self.alone:
            return False
        if not self.elements or not text:
            return True
        opts = self.opts
        if opts.measure.additive:
            current = self._size()
            return current <= opts.soft_max and current + self.join + size <= opts.hard_max
        segments = ([self.prefix] if self.prefix else []) + self.texts
        if opts.measure.size(TEXT_SEPARATOR.join(segments)) > opts.soft_max:
            return False
        return opts.measure.size(TEXT_SEPARATOR.join([*segments, text])) <= opts.hard_max

    def add(
        self, element: Element, text: str, size: int, is_table: bool, alone: bool, section_title: str | None, fresh: bool = False
    ) -> None:
        if not self.elements:
            self.section_title = section_title
            self.fresh = fresh
            if alone:
                self.prefix, self.prefix_size = "", 0  # a table never starts with narrative overlap
        self.elements.append(element)
        self.has_table = self.has_table or is_table
        self.alone = self.alone or alone
        page = element.metadata.page_number
        if page is not None:
            self.pages.add(page)
        if text:
            self.texts.append(text)
            self.sizes += size

    def flush(self) -> Iterator[PreChunk]:
        if not self.elements:
            return
        pre_chunk = PreChunk(
            self.elements, self.texts, self.sizes, self.prefix, self.prefix_size, self.section_title, self.pages,
            self.has_table, self.alone, self.fresh,
        )
        overlap_next = ""
        if self.opts.overlap_all and self.opts.overlap and not self.alone and self.texts:
            overlap_next = self.tail_of.tail(pre_chunk.text)
        self.prefix = overlap_next
        self.prefix_size = self.opts.measure.size(overlap_next) if overlap_next else 0
        self._reset()
        yield pre_chunk


def iter_pre_chunks(elements: Iterable[Element], opts: ChunkingOptions) -> Iterator[PreChunk]:
    """Gather `elements` into pre-chunks (steps 1 and 2 of the module docstring)."""
    elements = list(elements)
    texts = [chunk_text_of(e, opts.isolate_table) for e in elements]
    return pack_units(zip(elements, texts, opts.measure.sizes(texts, opts.hard_max), repeat(False)), opts)


def pack_units(units: Iterable[tuple[Element, str, int, bool]], opts: ChunkingOptions) -> Iterator[PreChunk]:
    """Gather units into pre-chunks (steps 1 and 2 of the module docstring): each an element,
    its chunk text and size, and whether it starts a chunk (never combined into the pre-chunk
    before it: the format chunkers' choice, see `chunkers.base.sentence_units`)."""
    builder = _Builder(opts)
    title: str | None = None
    current_page: int | None = None
    first = True
    for element, text, size, starts in units:
        boundary = starts
        if opts.by_title:
            if isinstance(element, Title):
                boundary = True
            if not opts.multipage_sections:
                page = element.metadata.page_number
                if first:
                    current_page = page or 1
                elif page is not None and page != current_page:
                    current_page, boundary = page, True
        first = False
        if isinstance(element, Title) and text:
            title = text
        is_table = opts.isolate_table and isinstance(element, Table)
        alone = is_table or (opts.isolate_code and isinstance(element, CodeSnippet) and bool(text))
        if builder.elements and (boundary or not builder.fits(element, text, size, alone)):
            yield from builder.flush()
        section_title = element.metadata.section_title or title
        builder.add(element, text, size, is_table, alone, section_title, starts)
    yield from builder.flush()


def combine_pre_chunks(pre_chunks: Iterable[PreChunk], opts: ChunkingOptions) -> Iterator[PreChunk]:
    """Merge small neighbours (step 3 of the module docstring)."""
    join = opts.measure.join_cost(TEXT_SEPARATOR)
    acc: PreChunk | None = None
    acc_size = 0
    for pre_chunk in pre_chunks:
        size = pre_chunk.size(opts)
        if acc is None:
            acc, acc_size = pre_chunk, size
            continue
        merged = _merge(acc, pre_chunk, opts, acc_size, size, join)
        if merged is None:
            yield acc
            acc, acc_size = pre_chunk, size
        else:
            acc, acc_size = merged
    if acc is not None:
        yield acc


def _merge(
    acc: PreChunk, nxt: PreChunk, opts: ChunkingOptions, acc_size: int, nxt_size: int, join: int
) -> tuple[PreChunk, int] | None:
    if acc.alone or nxt.alone or nxt.fresh or acc_size >= opts.combine_under:
        return None
    if not opts.multipage_sections and len(acc.pages | nxt.pages) > 1:
        return None
    merged = PreChunk(
        acc.elements + nxt.elements,
        acc.texts + nxt.texts,
        acc.content_size + nxt.content_size,
        acc.prefix,
        acc.prefix_size,
        acc.section_title,
        acc.pages | nxt.pages,
        fresh=acc.fresh,
    )
    if opts.measure.additive:
        nxt_content = nxt_size - (nxt.prefix_size + join if nxt.prefix else 0)
        size = acc_size + (join + nxt_content if acc.texts and nxt.texts else nxt_content)
    else:
        size = merged.size(opts)
    if size > opts.combine_limit:
        return None
    return merged, size


def form_chunks(pre_chunks: Iterable[PreChunk], opts: ChunkingOptions) -> list[Chunk]:
    """Turn pre-chunks into chunks (step 4 of the module docstring)."""
    return list(iter_chunks(pre_chunks, opts))


def iter_chunks(pre_chunks: Iterable[PreChunk], opts: ChunkingOptions) -> Iterator[Chunk]:
    """`form_chunks`, a chunk at a time: each as its pre-chunk comes."""
    splitter = TextSplitter(opts.measure, opts.hard_max, opts.overlap)
    separator_len = len(TEXT_SEPARATOR)
    tables = 0
    for pre_chunk in pre_chunks:
        if pre_chunk.is_table:
            table = pre_chunk.elements[0]
            for element in pre_chunk.elements:
                if isinstance(element, Table):
                    table = element
                    break
            for chunk in table_chunks(table, opts, f"table-{tables}"):  # type: ignore[arg-type]
                chunk.metadata.section_title = pre_chunk.section_title
                yield chunk
            tables += 1
            continue
        if not pre_chunk.texts:
            continue
        text = pre_chunk.text
        prefix_len = len(pre_chunk.prefix) + separator_len if pre_chunk.prefix else 0
        metadata = _consolidate(pre_chunk, opts)
        if pre_chunk.size(opts) <= opts.hard_max:
            metadata.overlap_prefix_len = prefix_len or None
            yield CompositeElement(text, metadata=metadata)
            continue
        for i, (piece, piece_prefix) in enumerate(splitter.iter_split(text, prefix_len)):
            piece_metadata = metadata.copy()
            piece_metadata.overlap_prefix_len = piece_prefix or None
            piece_metadata.is_continuation = True if i else None
            yield CompositeElement(piece, metadata=piece_metadata)


def _consolidate(pre_chunk: PreChunk, opts: ChunkingOptions) -> ElementMetadata:
    """One metadata for the chunk: first page, union box on a single page, its section."""
    elements = pre_chunk.elements
    first = elements[0].metadata
    page = first.page_number
    if page is None:
        page = next((e.metadata.page_number for e in elements if e.metadata.page_number is not None), None)
    metadata = ElementMetadata(
        page_number=page,
        section_title=pre_chunk.section_title,
        parent_id=first.parent_id,
        category_depth=first.category_depth,
    )
    boxes: list = []
    for e in elements:
        if e.text and not e.text.isspace():
            box = e.metadata.bbox
            if box is None:
                boxes = []  # one text without a box: the union would understate the chunk
                break
            boxes.append(box)
    if boxes and len(pre_chunk.pages) <= 1:
        metadata.bbox = (
            min(b[0] for b in boxes),  # type: ignore[index]
            min(b[1] for b in boxes),  # type: ignore[index]
            max(b[2] for b in boxes),  # type: ignore[index]
            max(b[3] for b in boxes),  # type: ignore[index]
        )
    if opts.include_orig_elements:
        metadata.orig_elements = [_without_orig(e) for e in elements]
    return metadata


def _without_orig(element: Element) -> Element:
    """`element` itself, or a copy without `orig_elements` when it is a chunk (no nesting)."""
    if element.metadata.orig_elements is None:
        return element
    copy = type(element)(element.text, metadata=element.metadata.copy())
    copy.metadata.orig_elements = None
    return copy
