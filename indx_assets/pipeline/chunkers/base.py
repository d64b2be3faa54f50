"""From a page's elements to the port's `ChunkPiece`s: settings, sections, spans.

What the `markdown`, `html` and `text` chunkers share (each only maps its format to elements):

- `ChunkerSettings`: the chain options (`strategy` `by_title`|`basic`, sizes, overlap, ...),
  validated when the chain is configured. Default: `by_title`, at most 254 MiniLM tokens
  (all-MiniLM-L6-v2 reads 256 word pieces including [CLS] and [SEP], so nothing is truncated)
  and a soft maximum of 150; prose over the soft maximum packs as whole sentences, and a
  paragraph of at least half the soft maximum starts a chunk (with its lead-in lines), so
  chunks end at paragraph or sentence ends (`sentence_units`); a chunk under a quarter of
  the soft maximum joins a neighbour (`join_small_chunks`), so no heading or stray sentence
  stands alone. Measured on Chroma's retrieval benchmark (`bench/bench_retrieval.py`), these
  beat the plain `unstructured` packing at the same limits on recall and on IoU.
- `assign_sections`: every `Title` opens a section nested by heading level; each element
  learns its section (`parent_id`) and section title, which gives every chunk its place in
  the section tree (`section_id`, `parent_section_id`, `section_path`), so search can expand
  a hit to the chunks of its section.
- `page_pieces`: the span of each chunk in the page text, found word by word in order. The
  chunker's text has whitespace collapsed (and, for Markdown, no block markers such as `#`
  or `>`), so a span runs from a chunk's first word to its last: the smallest slice of the
  page that holds all of it. Text a chunk repeats is not searched again: the span starts at
  the first word of the overlap it repeats, and a table's repeated header is left out. The
  piece's text is then that very slice of the page whenever the slice holds every word of the
  chunk and is within the limit (so `text == page[start:end]`); otherwise (a word the chunker
  wrote, such as elided inline data, a slice grown past the limit by markup or whitespace, a
  table piece with a repeated header) it keeps the chunker's text and the span still says
  which part of the page it covers.
- `sentence_pieces` (chain option `sentences`): each prose chunk's sentences as pieces of
  their own, so a short query can find the sentence that answers it and search can hand back
  the chunk that holds it.
"""

import bisect
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from itertools import count, islice
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

from indx_interfaces import ChunkPiece, PageChunks, PageOutput

from indx_assets.pipeline.chunker_port import PageDeclined
from indx_assets.pipeline.chunking.elements import (
    CodeSnippet,
    Element,
    Footer,
    Header,
    ListItem,
    NarrativeText,
    Table,
    TableChunk,
    Text,
    Title,
)
from indx_assets.pipeline.chunking.measure import WORD, words_of
from indx_assets.pipeline.chunking.sentences import iter_sentence_spans, sentence_ends, sentence_spans
from indx_assets.pipeline.fidelity import HEADER_KEY, OVERLAP_KEY, UNSTRUCTURED_KEY
from indx_assets.pipeline.whitespace import blank, iter_words

if TYPE_CHECKING:
    from indx_assets.pipeline.chunking.core import PreChunk
    from indx_assets.pipeline.chunking.options import ChunkingOptions

DEFAULT_MAX_TOKENS = 254
#: 150 rather than 160 since small chunks join their neighbours: the mean chunk stays ~151 cl100k tokens
DEFAULT_NEW_AFTER_N_TOKENS = 150
STRATEGIES = ("by_title", "basic")
#: A stretch of a page's text: start and end offsets.
Span = tuple[int, int]
#: A page of a reader's own document model (`ReaderModelChunker`).
P = TypeVar("P", bound="ModelPage")


@dataclass(frozen=True)
class ChunkerSettings:
    """How a structured-text chunker cuts. Character limits replace token limits when given."""

    strategy: str = "by_title"
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    new_after_n_tokens: int | None = DEFAULT_NEW_AFTER_N_TOKENS
    max_characters: int | None = None
    new_after_n_chars: int | None = None
    overlap: int = 0
    overlap_all: bool = False
    combine_text_under_n_chars: int | None = None
    multipage_sections: bool = True
    isolate_table: bool = True
    repeat_table_headers: bool = True
    #: cut prose elements over the soft maximum into sentences before packing (see `sentence_units`)
    sentence_units: bool = True
    #: a prose element at least this fraction of the soft maximum starts a new chunk (None: never)
    paragraph_starts_chunk: float | None = 0.5
    #: a chunk under this fraction of the soft maximum joins a neighbour (see `join_small_chunks`; None: never)
    join_under: float | None = 0.25
    #: also cut each prose chunk into `sentence` pieces (see `sentence_pieces`)
    sentences: bool = False

    @classmethod
    def from_options(cls, **options: Any) -> "ChunkerSettings":
        """Settings from chain options; unknown or invalid options raise `ValueError` now."""
        known = set(cls.__dataclass_fields__)
        unknown = set(options) - known
        if unknown:
            raise ValueError(f"unknown chunker options {sorted(unknown)}; known: {sorted(known)}")
        if options.get("max_characters") is not None or options.get("new_after_n_chars") is not None:
            options.setdefault("max_tokens", None)
            options.setdefault("new_after_n_tokens", None)
        settings = cls(**options)
        if not isinstance(settings.sentences, bool):
            raise ValueError(f"'sentences' must be true or false, got {settings.sentences!r}")
        for name in ("paragraph_starts_chunk", "join_under"):
            fraction = getattr(settings, name)
            if fraction is not None and (isinstance(fraction, bool) or not isinstance(fraction, (int, float))
                                         or not 0 < fraction <= 1):
                raise ValueError(f"{name!r} must be a fraction of the soft maximum in (0, 1] or null, got {fraction!r}")
        if settings.strategy not in STRATEGIES:
            raise ValueError(f"'strategy' must be one of {list(STRATEGIES)}, got {settings.strategy!r}")
        settings.chunk([])  # validate the sizes with the same code that will use them
        return settings

    def chunk(self, elements: Iterable[Element]) -> Iterator[Element]:
        """Chunk with these settings; code blocks stand alone so they become `code` chunks.

        The chunks come as they are formed, each stage handing on what no later element can
        change: a long page's units, pre-chunks and chunks are never all held at once (held
        so, the chunks of 4 MiB of prose peaked at 21x the page's size). The settings are
        checked now, not once the chunks are asked for."""
        from indx_assets.pipeline.chunking.core import combine_pre_chunks, iter_chunks, pack_units
        from indx_assets.pipeline.chunking.options import DEFAULT_MAX_CHARACTERS, build_options

        tokens: dict[str, Any] = {}
        if self.max_tokens is not None:
            from indx_assets.pipeline.embedders.registry import sizing_tokenizer

            tokens = {"max_tokens": self.max_tokens, "new_after_n_tokens": self.new_after_n_tokens,
                      "tokenizer": sizing_tokenizer()}
        opts = build_options(
            max_characters=DEFAULT_MAX_CHARACTERS if self.max_characters is None else self.max_characters,
            new_after_n_chars=self.new_after_n_chars,
            overlap=self.overlap,
            overlap_all=self.overlap_all,
            include_orig_elements=True,
            max_tokens=tokens.get("max_tokens"),
            new_after_n_tokens=tokens.get("new_after_n_tokens"),
            tokenizer=tokens.get("tokenizer"),
            isolate_table=self.isolate_table,
            repeat_table_headers=self.repeat_table_headers,
            by_title=self.strategy == "by_title",
            combine_text_under_n_chars=self.combine_text_under_n_chars,
            multipage_sections=self.multipage_sections,
        )
        opts = replace(opts, isolate_code=True)
        units = sentence_units(elements, opts, self.sentence_units, self.paragraph_starts_chunk)
        pre_chunks = pack_units(units, opts)
        if opts.by_title:
            pre_chunks = combine_pre_chunks(pre_chunks, opts)
        if self.join_under is not None:
            pre_chunks = join_small_chunks(pre_chunks, opts, max(1, int(self.join_under * opts.soft_max)))
        return iter_chunks(pre_chunks, opts)  # type: ignore[return-value]

    def fits(self, text: str) -> bool:
        """Whether `text` is within the hard maximum of these settings."""
        if self.max_tokens is not None:
            from indx_assets.pipeline.chunking.measure import TokenMeasure
            from indx_assets.pipeline.embedders.registry import sizing_tokenizer

            # the shared word-count cache: counting a chunk costs a lookup per word, not a tokenizer run
            return TokenMeasure(sizing_tokenizer()).size(text) <= self.max_tokens
        return len(text) <= (self.max_characters or 500)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_PROSE = (NarrativeText, ListItem, Text)


#: A lead-in line is at most this long (a heading, a label), in characters.
_LEAD_IN_MAX_CHARS = 80


def _leads_in(element: Element) -> bool:
    """A title, or one short line with no sentence end in it (it introduces what follows)."""
    if isinstance(element, Title):
        return True
    text = element.text.strip()
    return (
        type(element) in _PROSE
        and 0 < len(text) <= _LEAD_IN_MAX_CHARS
        and "\n" not in text
        and next(sentence_ends(text), None) is None
    )


class Unit(NamedTuple):
    """What `sentence_units` hands to packing: an element (or a sentence of one), its chunk
    text and size (measured once, for packing as well), and whether it starts a chunk."""

    element: Element
    text: str
    size: int
    starts: bool


#: Elements (or one element's sentences) measured in one go: a tokenizer counts the new words
#: of a batch at once.
_MEASURED_AT_ONCE = 512
#: A batch of elements ends once their texts pass this many characters: a long run's segments
#: (`paragraphs.run_segments`), all made at once, were a copy of the run.
_BATCH_CHARS = 1 << 18


def _element_batches(elements: Iterable[Element]) -> Iterator[list[Element]]:
    """`elements` in batches to measure, each of at most `_MEASURED_AT_ONCE` elements and
    ending with the one that brings it past `_BATCH_CHARS` characters."""
    batch: list[Element] = []
    chars = 0
    for element in elements:
        batch.append(element)
        chars += len(element.text)
        if len(batch) == _MEASURED_AT_ONCE or chars > _BATCH_CHARS:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


def sentence_units(
    elements: Iterable[Element], opts: "ChunkingOptions", split: bool = True, starts_from: float | None = None
) -> Iterator[Unit]:
    """The units to pack: `elements` with every prose element bigger than the soft maximum cut
    into its sentences (`split`), each told whether it starts a chunk.

    Packing then fills chunks with whole sentences: a long paragraph ends its chunks at
    sentence ends once they pass the soft maximum, and the text before it (a heading line, a
    short paragraph) shares a chunk with its first sentences instead of being flushed alone
    because the whole paragraph would not fit. Left to `chunk_elements`, an oversized
    paragraph is isolated and cut at the hard maximum, leaving small chunks on both sides.
    Each sentence keeps its paragraph's metadata (page, box, offsets bound the span search).

    A prose element of at least `starts_from` × the soft maximum (its first sentence, when
    split) starts a chunk: chunk boundaries then depend on the paragraph itself, not on how
    much text came before it, so a passage that a corpus repeats is cut the same way each
    time, and a chunk does not open with the tail of an unrelated paragraph. The lead-in lines
    right before it (titles, and short lines without a sentence end, such as a heading line
    of a plain-text or wiki dump) start the chunk with it, as many of them as fit the hard
    maximum together: a run of lead-in lines is held until what follows it is known (its lines
    before those go on), and every other unit is handed on once its element (or its batch of
    sentences) is read.
    """
    from indx_assets.pipeline.chunking.core import chunk_text_of

    threshold = None if starts_from is None else max(1, int(starts_from * opts.soft_max))
    held: list[list[Any]] = []  # [element, text, size, starts]: the run of lead-in lines read last
    held_size = 0
    # whether a chunk starts in the run of lead-in lines held (at its first line, though since let
    # go of): a long line in the run is one of its lead-in lines, not the start of another chunk
    run_starts = False
    for batch in _element_batches(elements):
        texts = [chunk_text_of(e, opts.isolate_table) for e in batch]
        for element, text, size in zip(batch, texts, opts.measure.sizes(texts, opts.hard_max)):
            prose = type(element) in _PROSE
            marks_start = prose and bool(text) and threshold is not None and size >= threshold
            # an element's units come a batch at a time (one, unless it is cut into sentences).
            # Each batch is held and let go of as the whole element would be, with the same
            # result: only a prefix of what is held is let go of, and what one batch lets go of,
            # the whole element would too.
            for units in _element_units(element, text, size, opts, split=split and prose):
                if marks_start and not run_starts:
                    (held or units)[0][3] = True  # the first of the lead-in lines before it, else its first unit
                    run_starts = True
                marks_start = False
                held.extend(units)
                held_size += sum(unit[2] for unit in units)
                # what was held is lead-in lines: all up to this element's last unit that is none go on
                first_new, end = len(held) - len(units), len(held)
                while end > first_new and _leads_in(held[end - 1][0]):
                    end -= 1
                if end == first_new:  # this element is lead-in lines too: the run goes on
                    end = 0
                else:
                    run_starts = False  # this element ends the run: its last lead-in units, if any, begin another
                released = sum(unit[2] for unit in held[:end])
                # and the lead-in lines that no chunk could hold with the ones after them
                while end < len(held) - 1 and held_size - released > opts.hard_max:
                    released += held[end][2]
                    end += 1
                if end:
                    yield from (Unit(*unit) for unit in held[:end])
                    held_size -= released
                    del held[:end]
    yield from (Unit(*unit) for unit in held)


def _element_units(element: Element, text: str, size: int, opts: "ChunkingOptions", split: bool) -> Iterator[list[list[Any]]]:
    """`element` as units ([element, text, size, starts]), in batches: itself, or, when it is
    to be `split` and is over the soft maximum, its sentences, made and measured
    `_MEASURED_AT_ONCE` at a time (a paragraph of a million sentences, made at once, cost ten
    times its text)."""
    if not split or not text or size <= opts.soft_max:
        yield [[element, text, size, False]]
        return
    # cut from its chunk text: collapsed already
    sentences = (type(element)(text[a:b], metadata=element.metadata.copy()) for a, b in iter_sentence_spans(text))
    while batch := list(islice(sentences, _MEASURED_AT_ONCE)):
        texts = [unit.text for unit in batch]
        yield [[unit, unit_text, unit_size, False]
               for unit, unit_text, unit_size in zip(batch, texts, opts.measure.sizes(texts, opts.hard_max))]


def join_small_chunks(pre_chunks: Iterable["PreChunk"], opts: "ChunkingOptions", under: int) -> Iterator["PreChunk"]:
    """Pre-chunks with each one smaller than `under` joined to a neighbour, where the two fit
    the hard maximum.

    A small chunk has too little text to be found by what it means: a heading alone, or the
    last sentence of a scene left behind because the chunk before it had passed the soft
    maximum and the paragraph after it starts a chunk of its own. Lead-in lines (headings,
    labels) join the chunk after them, which they introduce; other text joins the chunk
    before it, and only failing that the one after. Nothing but lead-in lines joins the start
    of a section (a chunk opening with a `Title`) or of a chunk that a long paragraph starts
    (so `paragraph_starts_chunk` still cuts a repeated passage the same way), tables and code
    stay alone, and with `multipage_sections` off no chunk crosses a page.
    """
    out: list[PreChunk] = []
    waiting: PreChunk | None = None  # a small chunk that can only join the one after it
    for pre_chunk in pre_chunks:
        if waiting is not None:
            joined = _joined(waiting, pre_chunk, opts)
            if joined is None:
                _join_back(out, waiting, opts)
            else:
                pre_chunk = joined
            waiting = None
        if _is_small(pre_chunk, opts, under):
            if _leads_in_all(pre_chunk) or not _join_back(out, pre_chunk, opts, keep=False):
                waiting = pre_chunk
            continue
        out.append(pre_chunk)
        if len(out) > 1:  # only the last can still be joined to: the others are done
            yield from out[:-1]
            del out[:-1]
    if waiting is not None:
        _join_back(out, waiting, opts)
    yield from out


def _join_back(out: list["PreChunk"], pre_chunk: "PreChunk", opts: "ChunkingOptions", keep: bool = True) -> bool:
    """Join `pre_chunk` to the last of `out` if it may end that chunk; otherwise append it
    (when `keep`). Whether it was joined."""
    joined = _joined(out[-1], pre_chunk, opts) if out and _may_follow(pre_chunk) else None
    if joined is not None:
        out[-1] = joined
    elif keep:
        out.append(pre_chunk)
    return joined is not None


def _is_small(pre_chunk: "PreChunk", opts: "ChunkingOptions", under: int) -> bool:
    return bool(pre_chunk.texts) and not pre_chunk.alone and pre_chunk.size(opts) < under


def _leads_in_all(pre_chunk: "PreChunk") -> bool:
    return all(_leads_in(e) for e in pre_chunk.elements if not blank(e.text))


def _may_follow(pre_chunk: "PreChunk") -> bool:
    """Whether `pre_chunk` may end the chunk before it: not when it opens a section."""
    return not isinstance(pre_chunk.elements[0], Title)


def _joined(first: "PreChunk", second: "PreChunk", opts: "ChunkingOptions") -> "PreChunk | None":
    """`first` and `second` as one pre-chunk, or None where they may not share a chunk."""
    from indx_assets.pipeline.chunking.core import PreChunk

    if first.alone or second.alone or not first.texts or not second.texts:
        return None
    if (second.fresh or isinstance(second.elements[0], Title)) and not _leads_in_all(first):
        return None  # a section's start, or a paragraph's that starts a chunk, takes only its lead-in
    if not opts.multipage_sections and len(first.pages | second.pages) > 1:
        return None
    # `second`'s overlap prefix repeats the end of `first`, which the joined chunk now holds
    joined = PreChunk(first.elements + second.elements, first.texts + second.texts,
                      first.content_size + second.content_size, first.prefix, first.prefix_size,
                      first.section_title, first.pages | second.pages, fresh=first.fresh)
    return joined if joined.size(opts) <= opts.hard_max else None


@dataclass(frozen=True, slots=True)
class Section:
    id: str
    title: str
    level: int
    parent: str | None
    path: tuple[str, ...]


#: The most characters of its heading a section's name keeps (`section_name`).
SECTION_NAME_MAX_CHARS = 200


def section_name(heading: str) -> str:
    """A section's name: its heading's words, as many whole words as fit in
    `SECTION_NAME_MAX_CHARS`, then "…" if there were more. Each chunk of a section carries its
    name and its parents' (`section_title`, `section_path`), so a paragraph read as a heading
    (Markdown prose over a setext underline, an `<h1>` around a page) was copied into every
    chunk: a 650 KB file made 0.3 GB of names and took 3.6 GB to ingest."""
    words: list[str] = []
    length = -1
    for word in iter_words(heading):
        length += 1 + len(word)
        if length > SECTION_NAME_MAX_CHARS:
            return " ".join(words) + "…" if words else word[:SECTION_NAME_MAX_CHARS] + "…"
        words.append(word)
    return " ".join(words)


def assign_sections(elements: Iterable[Element], sections: dict[str, Section]) -> Iterator[Element]:
    """Give every element its section as it passes (see the module docstring), each section
    added to `sections` by its id as its title passes."""
    stack: list[Section] = []
    numbers = count()  # not `len(sections)`: the caller may let go of sections it is done with
    for element in elements:
        md = element.metadata
        if isinstance(element, Title) and element.text.strip():
            level = md.category_depth or 1
            while stack and stack[-1].level >= level:
                stack.pop()
            parent = stack[-1] if stack else None
            title = section_name(element.text)
            section = Section(f"s{next(numbers)}", title, level, parent.id if parent else None,
                              (*(parent.path if parent else ()), title))
            sections[section.id] = section
            stack.append(section)
            md.element_id = section.id
        current = stack[-1] if stack else None
        md.parent_id = current.id if current else None
        md.section_title = current.title if current else None
        yield element


def _chunk_type(chunk: Element) -> str:
    if isinstance(chunk, (Table, TableChunk)):
        return "table"
    orig = chunk.metadata.orig_elements or ()
    # every piece of a long element names it: copying its text (`strip`) for each piece made
    # cutting 16 MiB of indented code take 20 s longer, and 64 MiB over 25 minutes
    if orig and all(isinstance(e, CodeSnippet) for e in orig if not blank(e.text)):
        return "code"
    return "content"


class _SpanFinder:
    """Finds each chunk's words in the page text, in order (see the module docstring)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cursor = 0
        #: where the last span's words start (a list), or the span itself when they are its
        #: every word (the list is then read off the page text when an overlap asks for it)
        self._previous: list[int] | tuple[int, int] = []
        #: whether the last span holds every word of its chunk, so the slice can stand for it
        self.whole = True
        #: where the last span's own words start, after the overlap it repeats (its start if none)
        self.own_start = 0

    @property
    def previous_starts(self) -> list[int]:
        """Where the words of the last span found start in the page text."""
        if isinstance(self._previous, tuple):
            self._previous = [m.start() for m in WORD.finditer(self.text, *self._previous)]
        return self._previous

    def _stretch(self, words: list[str], cursor: int, limit: int) -> tuple[int, int] | None:
        """Where `words` stand in the page text from `cursor` on (ending by `limit`) with only
        whitespace between them, found as the word-by-word search would find them; None when
        they do not stand so. Most chunks are such a stretch with its whitespace collapsed:
        two searches and one comparison in C then replace a search per word."""
        find = self.text.find
        start = find(words[0], cursor, limit)
        if start < 0:
            return None
        # the last word starts no earlier than all the others and a separator after each
        last = find(words[-1], start + sum(map(len, words)) - len(words[-1]) + len(words) - 1, limit)
        if last < 0:
            return None
        end = last + len(words[-1])
        # the stretch's words are the chunk's: the word-by-word search finds each where the
        # stretch has it (only whitespace lies between one word's end and the next's start)
        return (start, end) if words_of(self.text[start:end]) == words else None

    def span(self, chunk: Element) -> tuple[int, int] | None:
        md = chunk.metadata
        skip = md.overlap_prefix_len or md.header_prefix_len or 0
        body = chunk.text[skip:]
        orig = md.orig_elements or ()
        ends = [e.metadata.end for e in orig if e.metadata.end is not None]
        starts = [e.metadata.start for e in orig if e.metadata.start is not None]
        limit = max(ends) if ends else len(self.text)
        cursor = max(self.cursor, min(starts)) if starts and not md.is_continuation else self.cursor
        words = words_of(body)
        self.whole = True
        stretch = self._stretch(words, cursor, limit) if words else None
        found: list[int] | tuple[int, int]
        if stretch is not None:
            found, (start, end) = stretch, stretch
        else:
            found, end = self._search(words, cursor, limit)
            if not found:
                return None
            start = found[0]
        self.own_start = start
        if md.overlap_prefix_len:
            repeated = len(WORD.findall(chunk.text[: md.overlap_prefix_len]))
            if 0 < repeated <= len(self.previous_starts):
                start = self.previous_starts[-repeated]
                # the span's words are the repeated ones too: an overlap longer than what
                # the next chunk adds repeats words of this one's own overlap
                found = self.previous_starts[-repeated:] + (
                    [m.start() for m in WORD.finditer(self.text, *found)] if isinstance(found, tuple) else found)
        self.cursor, self._previous = end, found
        return start, end

    def _search(self, words: list[str], cursor: int, limit: int) -> tuple[list[int], int]:
        """Each word's start, searched in order from `cursor` (words not found are skipped and
        clear `whole`), and where the last one found ends."""
        found: list[int] = []
        end = cursor
        find = self.text.find
        for word in words:
            at = find(word, cursor, limit)
            if at < 0:
                self.whole = False
                continue  # text the chunker wrote (markup gone, entities decoded): not a slice
            found.append(at)
            cursor = end = at + len(word)
        return found, end


def sentence_pieces(text: str, chunk: ChunkPiece, elements: Sequence[Element], after: int,
                    left_out: "LeftOut | None" = None) -> list[ChunkPiece]:
    """The sentences of a prose chunk, as `sentence` pieces: exact slices of the page `text`
    with their offsets and the chunk's section metadata. A slice that runs over text the
    chunker `left_out` of its chunks is no sentence piece (it would bring that text back).

    Sentences are found within each of the chunk's elements (a heading, a paragraph, a list
    item), so a sentence never runs from one into the next, while a hard-wrapped paragraph's
    line breaks do not cut its sentences; text of no element with offsets is cut at line
    breaks as well. A sentence belongs to the first chunk that holds it: text before `after`
    (where the previous chunk ended, so what an overlap repeats) is left to that chunk. A
    sentence's chunk is therefore the earliest piece of the page whose span encloses it. A
    chunk of one sentence has no sentence pieces: they would repeat it.
    """
    if chunk.start is None or chunk.end is None or chunk.chunk_type != "content":
        return []
    first, last = max(chunk.start, after), chunk.end
    blocks = sorted({(max(e.metadata.start, first), min(e.metadata.end, last)) for e in elements
                     if e.metadata.start is not None and e.metadata.end is not None})
    spans: list[tuple[int, int]] = []
    for start, end in blocks if blocks else [(first, last)]:
        if start < end and (not spans or start >= spans[-1][1]):  # sentence units repeat their paragraph's span
            spans.extend(sentence_spans(text, (start, end), lines=not blocks))
    if len(spans) < 2 and (not spans or spans[0] == (chunk.start, chunk.end)):
        return []
    metadata = {k: v for k, v in chunk.metadata.items() if k.startswith(("section", "parent_section"))}
    return [ChunkPiece(text=text[s:e], bbox_reason="no_geometry", chunk_type="sentence", start=s, end=e, metadata=metadata)
            for s, e in spans if left_out is None or not left_out.runs_over((s, e))]


def page_pieces(text: str, elements: Iterable[Element], settings: ChunkerSettings,
                left_out: Sequence[Span] = ()) -> tuple[ChunkPiece, ...]:
    """`iter_page_pieces`, all at once."""
    return tuple(iter_page_pieces(text, elements, settings, left_out))


def iter_page_pieces(text: str, elements: Iterable[Element], settings: ChunkerSettings,
                     left_out: Sequence[Span] = ()) -> Iterator[ChunkPiece]:
    """Chunk one page's `elements` (in the order of their text) and turn the chunks into pieces
    with spans into `text`, each chunk followed by its sentences when `settings.sentences`;
    each piece is given once the chunk after it is formed (`_with_furniture`), so a page's
    pieces are never all held.

    Text the chunker left out of its elements (`left_out`: spans of `text`, such as inline
    image data) stays out of the pieces: a chunk whose span runs over some keeps its own text
    rather than the page's slice, and no sentence piece holds any. `Header` and `Footer`
    elements are page furniture (a printed page's number, a running title), left out alike.
    The elements are read as the chunks need them: furniture inside a chunk's span stands
    among that chunk's elements, so it is known by the time the chunk is formed.
    """
    furniture: deque[Element] = deque()
    leaving = LeftOut(left_out)

    def content(elements: Iterable[Element]) -> Iterator[Element]:
        for element in elements:
            if not isinstance(element, (Header, Footer)):
                yield element
                continue
            furniture.append(element)
            if element.metadata.start is not None:
                leaving.add((element.metadata.start, element.metadata.end))  # type: ignore[arg-type]

    yield from _with_furniture(_pieces(text, content(elements), settings, leaving), furniture)


def _pieces(text: str, elements: Iterable[Element], settings: ChunkerSettings,
            left_out: "LeftOut") -> Iterator[ChunkPiece]:
    """The pieces of `iter_page_pieces` before the furniture is named on them."""
    sections: dict[str, Section] = {}
    finder = _SpanFinder(text)
    covered = 0  # where the last chunk with a span ended
    for chunk in settings.chunk(assign_sections(elements, sections)):
        if blank(chunk.text):
            continue
        span = finder.span(chunk)
        md = chunk.metadata
        body = chunk.text
        if span is not None and finder.whole and not md.header_prefix_len and not left_out.runs_over(span):
            verbatim = text[span[0] : span[1]]
            if verbatim != body and verbatim.strip() and settings.fits(verbatim):
                body = verbatim  # the page's own text, whitespace and all, when it fits the limit
        section = sections.get(md.parent_id) if md.parent_id else None
        if section is not None:
            # an element's section is the newest one (`assign_sections`), and chunks come in the
            # order of their first elements: no chunk after this one names a section before its
            while (oldest := next(iter(sections))) != section.id:
                del sections[oldest]
        metadata: dict[str, Any] = {
            "section_title": md.section_title,
            "section_id": section.id if section else None,
            "parent_section_id": section.parent if section else None,
            "section_path": list(section.path) if section else [],
            "element_types": sorted({e.category for e in md.orig_elements or ()}),
        }
        if md.is_continuation:
            metadata["is_continuation"] = True
        if md.overlap_prefix_len:  # repeated on purpose: not duplication
            repeated = md.overlap_prefix_len
            if span is not None and body != chunk.text:  # the page's slice: up to where the chunk's own words start
                repeated = finder.own_start - span[0]
            metadata[OVERLAP_KEY] = repeated or None
        if md.header_prefix_len and body == chunk.text:
            metadata[HEADER_KEY] = md.header_prefix_len
        unstructured = sorted({e.metadata.unstructured for e in md.orig_elements or () if e.metadata.unstructured})
        if unstructured:
            metadata[UNSTRUCTURED_KEY] = "; ".join(unstructured)
        if md.table_id is not None:
            metadata["table_part"] = md.chunk_index
        if md.text_as_html and isinstance(chunk, (Table, TableChunk)):
            metadata["text_as_html"] = md.text_as_html
        piece = ChunkPiece(
            text=body,
            bbox_reason="no_geometry",
            chunk_type=_chunk_type(chunk),
            start=span[0] if span else None,
            end=span[1] if span else None,
            metadata=_json_safe(metadata),
        )
        yield piece
        if settings.sentences:
            yield from sentence_pieces(text, piece, md.orig_elements or (), covered, left_out)
        if span is not None:
            covered = max(covered, span[1])


def _with_furniture(pieces: Iterable[ChunkPiece], furniture: deque[Element]) -> Iterator[ChunkPiece]:
    """`pieces` with each furniture element named (`page_header` / `page_footer`, as the `pdf`
    chunker names its page's) on the last piece that starts at or before it (a piece that is no
    sentence and has a span: an anchor), else on the first: left out of the chunks, its words
    are still accounted for.

    `furniture` grows while `pieces` are made, in the order of the page: an element before an
    anchor is read before that anchor's chunk is formed, and anchors start in page order. So a
    piece is given once the next anchor is formed: no furniture named later can be its.
    Furniture of no known place goes on the piece it comes after. Named, it leaves `furniture`."""
    held: list[ChunkPiece] = []  # the newest anchor (or the first piece) and the pieces after it
    # what is named on `held[0]`, put in its metadata once, as it is given: a piece remade for
    # each name copied the names so far (a page of 128,000 page-number blocks took 27 s)
    names: dict[str, list[str]] = {}

    def name(before: int | None) -> None:
        while furniture and (before is None or (at := furniture[0].metadata.start) is None or at < before):
            element = furniture.popleft()
            names.setdefault("page_header" if isinstance(element, Header) else "page_footer", []).append(element.text)

    def given() -> Iterator[ChunkPiece]:
        if names:
            holder = held[0]
            added = {key: [*holder.metadata.get(key, ()), *texts] for key, texts in names.items()}
            held[0] = replace(holder, metadata={**holder.metadata, **added})
            names.clear()
        yield from held
        held.clear()

    for piece in pieces:
        if held and piece.chunk_type != "sentence" and piece.start is not None:
            name(piece.start)
            yield from given()
        held.append(piece)
    if held:
        name(None)
        yield from given()


def _json_safe(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if v is not None}


class LeftOut:
    """Spans of a page that its pieces leave out (inline data, page furniture), held sorted
    and apart (spans that overlap are joined), so whether a piece runs over one is a binary
    search: a scan of them all for each piece made a page of 8,000 printed pages, cut into
    sentences, take 12 s (a quarter of it, 1.4 s)."""

    def __init__(self, spans: Iterable[Span] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for span in spans:
            self.add(span)

    def add(self, span: Span) -> None:
        start, end = span
        first = bisect.bisect_right(self._ends, start)  # the first span that ends after `start`
        stop = bisect.bisect_left(self._starts, end)  # the spans before `stop` start before `end`
        if first < stop:  # `first` to `stop` overlap it
            start, end = min(start, self._starts[first]), max(end, self._ends[stop - 1])
        self._starts[first:stop] = [start]
        self._ends[first:stop] = [end]

    def runs_over(self, span: Span) -> bool:
        """Whether `span` overlaps a left-out span."""
        before = bisect.bisect_left(self._starts, span[1])  # the spans that start before `span` ends
        return before > 0 and self._ends[before - 1] > span[0]


class PageDisagrees(PageDeclined):
    """A chunker's elements are not its page's text (found as they are read): the page is declined."""


class StructuredTextChunker:
    """A chunker for one family of structured-text media types; subclasses map a page to elements.

    It claims every readable page with text of its media types; a page it cannot map (or
    whose mapping fails) is declined, so the fallback still cuts it.
    """

    builtin = True
    media_types: frozenset[str] = frozenset()

    def __init__(self, settings: ChunkerSettings | None = None) -> None:
        self.settings = settings or ChunkerSettings()

    def page_elements(self, content: bytes, page: PageOutput) -> Iterable[Element] | None:
        """The page's elements in the order of its text (read as the chunks need them), or
        None to decline the page."""
        raise NotImplementedError

    def left_out(self, page_text: str) -> list[Span]:
        """Spans of the page text its elements leave out, to keep out of the pieces (none)."""
        return []

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...]) -> tuple[PageChunks, ...]:
        claims: list[PageChunks] = []
        for page in outputs:
            try:
                pieces = tuple(self.stream_page(content, media_type, page))
            except PageDeclined:
                continue
            if pieces:
                claims.append(PageChunks(page.page, pieces))
        return tuple(claims)

    def stream_page(self, content: bytes, media_type: str, page: PageOutput, parsed: object = None) -> Iterator[ChunkPiece]:
        """The pieces of `page` as they are cut (`chain_runner.stream_page`): none declines it,
        and so does `PageDeclined`, raised even after some."""
        if media_type not in self.media_types or not page.readable or blank(page.text):
            return
        elements = self.page_elements(content, page)
        if elements is not None:
            yield from iter_page_pieces(page.text, elements, self.settings, self.left_out(page.text))


class ModelPage(Protocol):
    """A page of a reader's own document model: at least the text its blocks' offsets point into."""

    @property
    def text(self) -> str: ...


class ReaderModelChunker(StructuredTextChunker, Generic[P]):
    """A chunker that cuts a reader's own document model rather than re-parsing the page text.

    The model is the read's parsed form when the reader just ran, or the bytes loaded again,
    so every block's offsets into the page text are known exactly. A page is claimed only
    when the model has it and its text is the stored page's text: otherwise another reader
    won the page and the offsets would not point into it. A file the model refuses to load is
    declined whole (the fallback still cuts it).
    """

    reads_parsed = True

    def model_pages(self, content: bytes, media_type: str, parsed: object) -> Mapping[int, P] | None:
        """The model's pages by page number, or None when the model cannot be loaded."""
        raise NotImplementedError

    def model_pieces(self, model_page: P) -> Sequence[ChunkPiece]:
        """The pieces of one page of the model."""
        raise NotImplementedError

    def chunk(self, content: bytes, media_type: str, outputs: tuple[PageOutput, ...],
              parsed: object = None) -> tuple[PageChunks, ...]:
        """The port's `chunk`; `parsed` is the reader's model of these bytes, if at hand."""
        if media_type not in self.media_types:
            return ()
        pages = self.model_pages(content, media_type, parsed)
        if pages is None:
            return ()
        claims = []
        for page in outputs:
            model_page = pages.get(page.page)
            claim = self.claim(model_page, page) if model_page is not None else None
            if claim is not None:
                claims.append(claim)
        return tuple(claims)

    def stream_page(self, content: bytes, media_type: str, page: PageOutput, parsed: object = None) -> Iterator[ChunkPiece]:
        """`page`'s pieces from its model page (the model loaded for this page alone)."""
        pages = self.model_pages(content, media_type, parsed) if media_type in self.media_types else None
        model_page = pages.get(page.page) if pages is not None else None
        claim = self.claim(model_page, page) if model_page is not None else None
        if claim is not None:
            yield from claim.pieces

    def claim(self, model_page: P, page: PageOutput) -> PageChunks | None:
        """`page`'s chunks from its model page, or None when the page is not the model's."""
        if not page.readable or model_page.text != page.text:
            return None
        pieces = tuple(self.model_pieces(model_page))
        return PageChunks(page.page, pieces) if pieces else None


class StructuredProvider:
    """The entry-point target: `with_options(**chain_options)` returns a configured provider."""

    chunker_class: type[StructuredTextChunker] = StructuredTextChunker

    def __init__(self, settings: ChunkerSettings | None = None) -> None:
        self.settings = settings or ChunkerSettings()

    def with_options(self, **options: Any) -> "StructuredProvider":
        return type(self)(ChunkerSettings.from_options(**options))

    def chunkers(self) -> tuple[StructuredTextChunker, ...]:
        return (self.chunker_class(self.settings),)
