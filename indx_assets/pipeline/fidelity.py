"""Word fidelity: whether a document's chunks hold its pages' words, whole (DESIGN §7).

The measure `indx verify` reports, page by page, comparing the text chunks of a page with the
reader's text of that page (for a PDF, PDFium's text layer; for Markdown, the source itself).

- A *word* is a whitespace-separated token with its surrounding punctuation and symbols
  (Unicode categories P and S) stripped, soft hyphens (U+00AD, and U+FFFE, PDFium's soft
  hyphen) removed. A character of Chinese or Japanese (Han, hiragana, katakana) is a word of
  its own, as the embedder's tokenizer takes a Han character: they set no space between words,
  so a chunk of them ends between two characters (a paragraph of Chinese was one word, its
  chunks' parts of it foreign), and no half of a hyphenated word. A token that ends in a
  hyphen at a line end joins the word on the next line: the page's word is then the joined
  one, spelled with or without the hyphen.
- A chunk word is *foreign* when it is no word of its page. Two whole words run together
  ("exerciseshas") and a fragment ("rown" of "Brown") are foreign.
- Sub/superscript *notation* is listed apart from foreign: a chunk word that is a page word
  run together with the mark beside it ("word1" for "word" and its footnote mark "1", "CO2"
  for "CO" and "2"), or a page word the chunk cut before such a mark ("x 2" for "x2"). A mark
  is one to three digits, a single letter, or super/subscript characters, set on its word's
  line or on a line of its own (where PDFium puts a raised mark), and the word it joins holds
  a letter: a number cut in two ("2" and "4.0910" for "24.0910") stays foreign, and so does a
  word run into the number that starts the next line ("Directors28" of a table of contents).
- A page word is *lost* when it is neither in the page's chunks nor in the furniture the
  chunks name (`page_header` / `page_footer` in their metadata). Words are counted as
  multisets per page (chunks may reorder a page's text, as columns and tables do): a page
  holding "the" 40 times whose chunks hold it 38 times lost two.
- A word is *duplicated* when the page's chunks hold it more often than the page does, except
  the repetition the chain asked for: a piece whose metadata says `overlap` (the characters its
  chunker repeated from the piece before) starts with words that end the piece before it, and
  one that says `repeated_header` starts with that many characters of its table's header
  rows; those words are not counted. `sentence` pieces (which repeat their chunk by design)
  and image pieces are never counted at all.
- The payload of inline data (a `data:` URI's base64), which chunkers leave out of their
  chunks, is no word (`indx_assets.pipeline.chunking.inline_data`).

A page passes when none of its chunk words is foreign (notation aside) and at least
`MIN_KEPT` of its words are in its chunks or furniture; a document passes when every page does.
"""

import itertools
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import regex

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.chunking.inline_data import elide_inline_data
from indx_assets.pipeline.identity import char_locator
from indx_assets.pipeline.whitespace import blank, collapse_whitespace, iter_lines, iter_words

#: The least share of a page's words its chunks (or its named furniture) must hold.
MIN_KEPT = 0.99
#: Examples kept per kind (foreign, notation, lost, duplicated) and page.
EXAMPLES_PER_KIND = 3
#: Chunk types whose text repeats other chunks by design, left out of the measure.
EXCLUDED_TYPES = frozenset({"sentence", "image"})
#: Piece metadata naming the page's furniture (lines left out of its chunks on purpose).
FURNITURE_KEYS = ("page_header", "page_footer")
#: Piece metadata: how many characters at its start repeat the piece before (the chain's `overlap`).
OVERLAP_KEY = "overlap"
#: Piece metadata: how many characters at its start repeat its table's header rows (`repeat_table_headers`).
HEADER_KEY = "repeated_header"
#: Piece metadata: why its text is plain text a parser did not structure (the page's record repeats it).
UNSTRUCTURED_KEY = "unstructured"
#: The most words an overlap is looked for at a piece's start.
MAX_OVERLAP_WORDS = 400

_EDGES = regex.compile(r"^[\p{P}\p{S}]+|[\p{P}\p{S}]+$")
_SOFT_HYPHENS = "\u00ad\ufffe"
_NO_SOFT_HYPHENS = str.maketrans("", "", _SOFT_HYPHENS)
#: A hyphen after a letter or digit ends the token (a double hyphen is a dash: "exposed--").
_HYPHENATED = regex.compile(r"[\p{L}\p{N}][-\u2010]$")
#: A sub/superscript mark: a number, a letter (but no character of a script set without spaces:
#: two Chinese characters side by side are two words, no word and its mark), super/subscripts.
_SCRIPT_MARK = regex.compile(r"\d{1,3}|(?![\p{Han}\p{Hiragana}\p{Katakana}])\p{L}|[\u00b2\u00b3\u00b9\u2070-\u209f]+")
_HAS_LETTER = regex.compile(r"\p{L}")
#: A character of a script set without spaces between words (Chinese and Japanese: Han,
#: hiragana, katakana), and a token's parts: each such character alone, and the runs between them.
_UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]")
_UNSPACED_PARTS = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]|[^\p{Han}\p{Hiragana}\p{Katakana}]+")
_KEEPS_HYPHEN = regex.compile(r"[-\d]")

#: A token: its word, the number of its line, and how it ends (`_SOFT`, `_HARD` hyphen, or 0).
Token = tuple[str, int, int]
_HARD, _SOFT = 1, 2


def iter_tokens(text: str) -> Iterator[Token]:
    """The words of `text` in order (see the module docstring), before line-end joining."""
    for number, line in enumerate(iter_lines(text)):
        for raw in iter_words(line):
            soft = _SOFT_HYPHENS[0] in raw or _SOFT_HYPHENS[1] in raw
            bare = raw.translate(_NO_SOFT_HYPHENS) if soft else raw
            unspaced = not bare.isascii() and _UNSPACED.search(bare) is not None
            if unspaced:
                # each character a word; the last part of the token goes on as the token
                *parts, bare = _UNSPACED_PARTS.findall(bare)
                for part in parts:
                    if word := _EDGES.sub("", part):
                        yield word, number, 0
            # most tokens are a bare word: the regex only for those with something at an edge
            word = bare if bare[:1].isalnum() and bare[-1:].isalnum() else _EDGES.sub("", bare)
            if word:
                ends = (0 if unspaced and _UNSPACED.fullmatch(word)  # a character hyphenates no word
                        else _SOFT if soft and raw.endswith(tuple(_SOFT_HYPHENS))
                        else _HARD if raw[-1] in "-\u2010" and _HYPHENATED.search(raw) else 0)
                yield word, number, ends


def tokens(text: str) -> list[Token]:
    """`iter_tokens` as a list."""
    return list(iter_tokens(text))


def _is_mark(word: str) -> bool:
    """Whether `word` is a sub/superscript mark; an ASCII word of more than three characters is
    none. (Caches of 65,536 words each, for this and `_has_letter`, held 12 MiB of a log's.)"""
    return not (len(word) > 3 and word.isascii()) and _SCRIPT_MARK.fullmatch(word) is not None


def _has_letter(word: str) -> bool:
    """Whether `word` holds a letter: an ASCII one has one when its cases differ."""
    return word.lower() != word.upper() if word.isascii() else _HAS_LETTER.search(word) is not None


def _glues(a: str, b: str) -> bool:
    """Whether `a` followed by `b` is a word and its sub/superscript mark (see the module docstring)."""
    return (_is_mark(b) and _has_letter(a)) or (_is_mark(a) and len(b) > 1 and _has_letter(b))


#: A page word and the number of its line.
_Placed = tuple[str, int]


def _marked_pairs(placed: Iterable[_Placed]) -> Iterator[tuple[str, str]]:
    """The neighbouring words that are a word and its mark: set beside each other, or the mark
    on a line of its own (PDFium's text of a raised footnote mark); a number that starts the
    next line is not one ("Directors", "28 Model")."""
    before: _Placed | None = None
    a: _Placed | None = None
    b: _Placed | None = None
    for after in itertools.chain(placed, (None,)):  # the pair (a, b), the words before and after it
        if a is not None and b is not None and _glues(a[0], b[0]):
            if a[1] == b[1]:
                yield a[0], b[0]
            elif _is_mark(b[0]):  # b alone on its line
                if after is None or after[1] != b[1]:
                    yield a[0], b[0]
            elif before is None or before[1] != a[1]:  # a alone on its line
                yield a[0], b[0]
        before, a, b = a, b, after


@dataclass
class _Page:
    """A page's words (`counts`: each word and how often the page holds it, in the order they
    first appear), the spellings that are not a word itself mapped to their word (`joins`: a
    word hyphenated across a line end is spelled with and without its hyphen), and the notation
    forms of word pairs (run-together form -> the two words). Read a word at a time: a page's
    words held in order cost many times the page."""

    counts: Counter[str] = field(default_factory=Counter)
    joins: dict[str, str] = field(default_factory=dict)
    glued: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, text: str, furniture: frozenset[str] = frozenset()) -> "_Page":
        """The words of a page's `text`; a line that is one of its `furniture` lines (a page
        number between the halves of a hyphenated word) does not keep the halves apart."""
        page = cls()
        for a, b in _marked_pairs(page.read(text, furniture)):
            page.glued.setdefault(a + b, (a, b))
        return page

    @property
    def total(self) -> int:
        """How many words the page holds."""
        return self.counts.total()

    def word(self, spelling: str) -> str | None:
        """The page word spelled `spelling`, None when the page has no such word."""
        key = self.joins.get(spelling)
        return key if key is not None else (spelling if spelling in self.counts else None)

    def _spell(self, spelling: str, key: str) -> str:
        """The page word spelled `spelling`: the one it already is, else `key`."""
        found = self.word(spelling)
        if found is not None:
            return found
        if spelling != key:
            self.joins[spelling] = key
        return key

    def read(self, text: str, furniture: frozenset[str] = frozenset()) -> Iterator[_Placed]:
        """Count the words of `text` into the page, giving each with its line as it is counted."""
        apart = {n for n, line in enumerate(iter_lines(text)) if collapse_whitespace(line) in furniture} if furniture else set()
        stream = iter_tokens(text)
        ahead: deque[Token] = deque()
        counts, joins = self.counts, self.joins

        def peek(n: int) -> Token | None:  # the n-th token after the current one
            while len(ahead) <= n and (token := next(stream, None)) is not None:
                ahead.append(token)
            return ahead[n] if n < len(ahead) else None

        while (current := ahead.popleft() if ahead else next(stream, None)) is not None:
            word, line, ends = current
            k = 0
            if ends and furniture:
                while (token := peek(k)) is not None and token[1] in apart and token[1] != line:
                    k += 1
            following = peek(k) if ends else None
            if following is not None and following[1] != line and not _UNSPACED.match(following[0]):
                # a word hyphenated across a line end: one word, with or without its hyphen
                passed = [ahead.popleft() for _ in range(k)]  # furniture words between its halves
                ahead.popleft()
                joined, hyphenated = word + following[0], f"{word}-{following[0]}"
                # a compound or a code keeps its hyphen ("state-of-the-" "art", "ISBN 0-" "7472-7857-1"),
                # a word does not ("exer-" "cises"); a spelling the page already has keeps its word,
                # so both spellings count as one word however the page spells it elsewhere
                keeps = ends == _HARD and _KEEPS_HYPHEN.search(joined) is not None
                key = (self.word(hyphenated) if ends == _HARD else None) or self.word(joined) \
                    or (hyphenated if keeps else joined)
                self._spell(joined, key)
                if ends == _HARD:
                    self._spell(hyphenated, key)
            else:
                passed = []
                key = joins.get(word, word)  # `_spell(word, word)`
            counts[key] += 1
            yield key, line
            for passed_word, passed_line, _ in passed:
                key = joins.get(passed_word, passed_word)
                counts[key] += 1
                yield key, passed_line


def words(text: str) -> list[str]:
    """The words of a page's `text`, in order, hyphenation across line ends joined."""
    return [word for word, _ in _Page().read(text)]


@dataclass(frozen=True, slots=True)
class Example:
    """One finding: its kind, the word, where (a chunk's locator, or the page span of a lost
    word) and the text around it."""

    kind: str
    word: str
    locator: str
    context: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "word": self.word, "locator": self.locator, "context": self.context}


@dataclass(frozen=True, slots=True)
class PageFidelity:
    """The measure of one page (see the module docstring)."""

    page: int
    words: int
    foreign: int = 0
    notation: int = 0
    lost: int = 0
    duplicated: int = 0
    examples: tuple[Example, ...] = ()

    @property
    def kept(self) -> float:
        """The share of the page's words in its chunks or furniture (1.0 for a page without words)."""
        return 1.0 if not self.words else (self.words - self.lost) / self.words

    @property
    def passes(self) -> bool:
        return self.foreign == 0 and self.kept >= MIN_KEPT

    def to_json(self) -> dict[str, Any]:
        return {"page": self.page, "words": self.words, "foreign": self.foreign, "notation": self.notation,
                "lost": self.lost, "duplicated": self.duplicated, "kept": round(self.kept, 4),
                "passes": self.passes, "examples": [e.to_json() for e in self.examples]}


COUNTS = ("words", "foreign", "notation", "lost", "duplicated")


@dataclass(frozen=True, slots=True)
class DocumentFidelity:
    """The measure of one document: its pages, in order."""

    source_id: str
    pages: tuple[PageFidelity, ...]

    @property
    def passes(self) -> bool:
        return all(p.passes for p in self.pages)

    @property
    def failing_pages(self) -> list[int]:
        return [p.page for p in self.pages if not p.passes]

    def totals(self) -> dict[str, int]:
        return {name: sum(getattr(p, name) for p in self.pages) for name in COUNTS}

    def to_json(self) -> dict[str, Any]:
        return {"source_id": self.source_id, "passes": self.passes, **self.totals(),
                "pages": [p.to_json() for p in self.pages]}


def summary(document: DocumentFidelity) -> dict[str, Any]:
    """A document's verdict in brief (what the chunk map records and `indx ingest` reports):
    its counts, whether it passes, the pages below the thresholds and the first examples of
    what put them there."""
    failing = [p for p in document.pages if not p.passes]
    examples = [e.to_json() | {"page": p.page} for p in failing for e in p.examples if e.kind in ("foreign", "lost")]
    return {"passes": document.passes, **document.totals(), "pages": len(document.pages),
            "pages_below": [p.page for p in failing], "examples": examples[:EXAMPLES_PER_KIND]}


def totals(documents: Iterable[DocumentFidelity]) -> dict[str, int]:
    """Counts summed over `documents`, with how many documents and pages fall below the thresholds."""
    documents = list(documents)
    summed = {name: sum(d.totals()[name] for d in documents) for name in COUNTS}
    return {"documents": len(documents), "pages": sum(len(d.pages) for d in documents), **summed,
            "documents_below": sum(not d.passes for d in documents),
            "pages_below": sum(len(d.failing_pages) for d in documents)}


class ChunkText(Protocol):
    """What the measure reads of a chunk (a `DocumentChunk` has it)."""

    page: int | None
    locator: str
    chunk_type: str
    content: str
    metadata: Mapping[str, Any]
    start_offset: int | None  # where it stands in its page's text (or the document's), when it says
    end_offset: int | None


#: The places `_context` tries for a word standing whole before it gives up.
CONTEXT_TRIES = 64


def _context(text: str, word: str, width: int = 30) -> tuple[int, int, str] | None:
    """Where `word` first stands as a whole word in `text` (no letter or digit on either side,
    unless it is a Chinese or Japanese character, a word wherever it stands), and the text
    around it; None when it does not in its first `CONTEXT_TRIES` places. Found by `str.find`,
    not by a regular expression with look-arounds, which took time with the cube of a long
    run's length (a foreign piece of 4,000 characters of one letter: 18 s)."""
    at, end = text.find(word), len(text)
    anywhere = _UNSPACED.fullmatch(word) is not None
    for _ in range(CONTEXT_TRIES):
        if at < 0:
            return None
        stop = at + len(word)
        if anywhere or not (at and text[at - 1].isalnum()) and not (stop < end and text[stop].isalnum()):
            return at, stop, " ".join(text[max(0, at - width) : stop + width].split())
        at = text.find(word, at + 1)
    return None


def _overlap_words(previous: list[str], current: list[str], prefix: str) -> int:
    """How many words at the start of `current` repeat the end of `previous`: the words of the
    `prefix` the chunk says it repeats when they do (a text that repeats itself repeats more
    than the overlap), else the most that do."""
    said = len(tokens(prefix))
    if 0 < said <= min(len(previous), len(current)) and (repeated := _repeats(previous, current, said)) is not None:
        return repeated
    for n in range(min(len(previous), len(current), MAX_OVERLAP_WORDS), 0, -1):
        if (repeated := _repeats(previous, current, n)) is not None:
            return repeated
    return 0


def _repeats(previous: list[str], current: list[str], n: int) -> int | None:
    """The words to pass over when the first `n` words of `current` repeat the last `n` of
    `previous`, or None when they do not. The last of them may go on where `previous` was cut
    inside it (a run with no space, cut at a sentence end): it is then `current`'s word, the
    page's whole word, and counted there."""
    if previous[-n:] == current[:n]:
        return n
    if previous[len(previous) - n : -1] == current[: n - 1] and current[n - 1].startswith(previous[-1]):
        return n - 1
    return None


class _Findings:
    """Counts and the first few examples of each kind, for one page (or a stretch of it that
    starts at `offset`)."""

    def __init__(self, offset: int = 0) -> None:
        self.offset = offset
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[Example]] = {kind: [] for kind in KINDS}

    def add(self, kind: str, word: str, text: str, locator: str | None = None, page: int = 0, n: int = 1) -> None:
        self.counts[kind] += n
        if len(self.examples[kind]) >= EXAMPLES_PER_KIND:
            return
        where = _context(text, word.split()[0])
        if locator is None:  # a page word: its own span on the page
            locator = char_locator(self.offset + where[0], self.offset + where[1], page=page) if where else f"page:{page}"
        self.examples[kind].append(Example(kind, word, locator, where[2] if where else ""))


#: The kinds of finding, in the order examples are listed.
KINDS = ("foreign", "lost", "duplicated", "notation")


def page_furniture(chunks: Iterable[ChunkText]) -> set[str]:
    """The furniture lines (a running title, a page number) the chunks name as left out of them."""
    return {line for chunk in chunks for key in FURNITURE_KEYS for line in chunk.metadata.get(key) or ()}


def measure_page(number: int, text: str, chunks: Iterable[ChunkText] | Callable[[], Iterable[ChunkText]],
                 furniture: Collection[str] | None = None, origin: int | None = None) -> PageFidelity:
    """The measure of page `number` (its reader's `text`) against its chunks, in chunk order:
    `chunks` gives them afresh each time it is called (a page's chunks spooled are read back), or
    they are held. They are read once when they hold the page's words exactly (`_same_words`),
    again when not, and once more before when their `furniture` is not given (`page_furniture`).

    `origin` is where the page's text starts in the chunks' offsets (`start_offset`), when they
    are offsets of it: a long page whose chunks do not hold exactly its words is then measured a
    stretch at a time (`_stretches`), in memory a stretch's words take, not the page's."""
    if not callable(chunks):
        listed = list(chunks)
        chunks = lambda: listed  # noqa: E731
    if furniture is None:
        furniture = page_furniture(chunks())
    elided = elide_inline_data(text)
    total = _same_words(elided, _measured(chunks()))
    if total is not None:
        return PageFidelity(number, total)
    if origin is not None and not furniture and len(text) > 2 * STRETCH_CHARS:
        by_stretches = _measure_stretches(number, text, chunks(), origin)
        if by_stretches is not None:
            return by_stretches
    return _compare(number, text, elided, lambda: _measured(chunks()), furniture)


#: The length a page is measured in stretches of (`_stretches`), when it is twice as long: a
#: stretch measured word by word costs some 30x its length (a word list's), 8 MiB.
STRETCH_CHARS = 1 << 18


class _Unplaced(Exception):
    """A chunk does not say where it stands on its page, or stands before one before it."""


def _stretches(text: str, measured: Iterable[ChunkText], origin: int) -> Iterator[tuple[int, int, list[ChunkText]]]:
    """The page `text` cut into stretches of at least `STRETCH_CHARS` (start, end, and the
    chunks that stand in it), when its chunks come in the order they stand on it. A stretch
    ends where a chunk ends and the page's words break (`_breaks`), and the next chunk starts
    there or after, but for the overlap it says it repeats (at that chunk's start, where the
    words break there too): so every page word and every chunk word falls in one stretch, the
    one where the page has it. A chunk that ends inside a word (or inside one hyphenated across
    a line end) keeps its stretch going. Raises `_Unplaced` when a chunk has no offsets on the
    page, or comes before one before it.

    A stretch knows only its own words. Where the measure's judgement of a word rests on the
    page's other words, a stretch may judge it otherwise: a word a chunk repeats from an
    earlier stretch without saying so (`overlap`) is foreign there, not duplicated; a line-end
    hyphenation a chunk writes on one line ("in- to") is joined when its halves are no words
    of the stretch, as the page's "in" elsewhere would not have let it."""
    start, held = 0, []
    cut: int | None = None  # where the stretch may end, if the next chunk starts there or after
    last = (0, 0)
    for chunk in measured:
        if chunk.start_offset is None or chunk.end_offset is None:
            raise _Unplaced
        at, end = chunk.start_offset - origin, chunk.end_offset - origin
        if not (0 <= at <= end <= len(text) and at >= last[0] and end >= last[1]):
            raise _Unplaced
        if cut is not None and at + (chunk.metadata.get(OVERLAP_KEY) or 0) >= cut:
            # the text between two chunks goes with the one before (a chunker may end a span at
            # its last word on the page, its text holding more: an inline image's alt text)
            cut = at if at > cut and _breaks(text, at) else cut
            yield start, cut, held
            start, held = cut, []
        held.append(chunk)
        last = (at, end)
        cut = end if end - start >= STRETCH_CHARS and _breaks(text, end) else None
    yield start, len(text), held


#: How far back past whitespace `_breaks` looks for a hyphen.
_BREAK_LOOKBACK = 256


def _breaks(text: str, at: int) -> bool:
    """Whether the page's words break at `at`: whitespace on one side of it, and the word before
    it does not end in a hyphen (which joins the word on the next line)."""
    if at >= len(text):
        return True
    if not (text[at].isspace() or text[at - 1].isspace()):
        return False
    before = text[max(0, at - _BREAK_LOOKBACK) : at].rstrip()
    return bool(before) and before[-1] not in "-\u2010" + _SOFT_HYPHENS


def _measure_stretches(number: int, text: str, chunks: Iterable[ChunkText], origin: int) -> PageFidelity | None:
    """The measure of page `number`, a stretch at a time (`_stretches`), each as a page of its
    own; None when its chunks do not say where they stand in order."""
    parts: list[PageFidelity] = []
    before: ChunkText | None = None  # the chunk before the stretch, whose words an overlap repeats
    try:
        for start, end, held in _stretches(text, _measured(chunks), origin):
            stretch = text[start:end]
            elided = elide_inline_data(stretch)
            total = _same_words(elided, held, before)
            parts.append(PageFidelity(number, total) if total is not None
                         else _compare(number, stretch, elided, lambda: held, (), offset=start, before=before))
            before = held[-1] if held else before
    except _Unplaced:
        return None
    counts = {name: sum(getattr(p, name) for p in parts) for name in COUNTS}
    examples = tuple(e for kind in KINDS for e in [e for p in parts for e in p.examples if e.kind == kind][:EXAMPLES_PER_KIND])
    return PageFidelity(number, **counts, examples=examples)


def _compare(number: int, text: str, elided: str, measured: Callable[[], Iterable[ChunkText]],
             furniture: Collection[str], offset: int = 0, before: ChunkText | None = None) -> PageFidelity:
    """The measure of page `number` word by word: its words counted (`_Page`), each chunk word
    found among them. `text` may be a stretch of the page that starts at `offset`, and `before`
    the chunk before its first."""
    page = _Page.of(elided, frozenset(" ".join(line.split()) for line in furniture))
    spelled = page.word
    found: Counter[str] = Counter()
    findings = _Findings(offset)
    stream = _chunk_words(measured(), before)
    current = next(stream, None)
    while current is not None:
        word, line, ends, chunk = current
        after = next(stream, None)
        following = after[0] if after is not None else None
        body, locator = chunk.content, chunk.locator
        key = spelled(word)
        if ends and after is not None:
            # hyphenated across a line end as on the page, or where the page joined the lines
            joined = spelled(word + after[0]) or spelled(f"{word}-{after[0]}")
            if joined is not None and (after[1] != line or key is None or spelled(after[0]) is None):
                found[joined] += 1
                current = next(stream, None)  # the two words were one
                continue
        if key is not None:
            found[key] += 1
        elif word in page.glued:
            found.update(page.glued[word])
            findings.add("notation", word, body, locator)
        elif after is not None and after[3] is chunk and _glues(word, after[0]) and spelled(word + after[0]):
            found[spelled(word + after[0])] += 1
            findings.add("notation", f"{word} {following}", body, locator, n=2)
            current = next(stream, None)  # the word and its mark were one
            continue
        else:
            findings.add("foreign", word, body, locator)
        current = after
    expected = page.counts
    held = Counter(spelled(w) or w for line in furniture for w in words(line))
    for key, count in expected.items():
        short = count - found[key] - held[key]
        if short > 0:
            findings.add("lost", key, text, page=number, n=short)
    for key, count in found.items():
        extra = count - expected[key]
        if extra > 0:
            findings.add("duplicated", key, text, page=number, n=extra)
    c = findings.counts
    examples = tuple(e for kind in KINDS for e in findings.examples[kind])
    return PageFidelity(number, page.total, c["foreign"], c["notation"], c["lost"], c["duplicated"], examples)


def _measured(chunks: Iterable[ChunkText]) -> Iterator[ChunkText]:
    """The chunks whose words are measured: those with text, of a type that does not repeat others."""
    return (c for c in chunks if c.chunk_type not in EXCLUDED_TYPES and c.content)


def _same_words(text: str, measured: Iterable[ChunkText], before: ChunkText | None = None) -> int | None:
    """How many words the page `text` holds, when the `measured` chunks hold exactly its words,
    each as often; else None (all chunks are read either way). A word hyphenated across a line
    end is one word on either side, its two halves (`_word_sums`): chunks that keep the
    page's line-end hyphenation, or cut a chunk where the page breaks the line, hold the page's
    word. Such a page's measure finds nothing, whatever its words: no word is joined to a mark,
    none is foreign, lost or duplicated.

    The two multisets of words are compared by the sums of their words' hashes and of those
    hashes squared (Python's string hash, SipHash under the process's random key): equal words
    give equal sums, and different words equal sums with a chance of about 2**-64. So a page of
    a million distinct words (a log, a word list, prose hyphenated at its line ends) is compared
    in constant memory, where counting its words costs some 12x the page."""
    chunks = iter(measured)
    page = _word_sums(iter_tokens(text))
    held = _word_sums((word, line, ends) for word, line, ends, _ in _chunk_words(chunks, before))
    for _ in chunks:  # the rest read all the same: the caller may count the chunks as they are read
        pass
    return page[0] if held == page else None


def _word_sums(tokens: Iterable[Token]) -> tuple[int, int, int]:
    """How many words `tokens` hold as `_Page.read` counts them (furniture aside), and the sums
    of their hashes and of those squared. A word that ends in a hyphen and the word that starts
    a later line are one word, hashed as the pair of them: which spelling the page counts it by
    does not matter when both sides hold the same pairs."""
    count = total = squares = 0
    pending: Token | None = None  # a word that ends in a hyphen, waiting for the next
    for token in tokens:
        if pending is not None:
            joins = token[1] != pending[1] and not _UNSPACED.match(token[0])
            h = hash((pending[0], token[0]) if joins else pending[0])
            count, total, squares = count + 1, total + h, squares + h * h
            pending = None
            if joins:
                continue
        if token[2]:
            pending = token
            continue
        h = hash(token[0])
        count, total, squares = count + 1, total + h, squares + h * h
    if pending is not None:
        h = hash(pending[0])
        count, total, squares = count + 1, total + h, squares + h * h
    return count, total, squares


def _chunk_words(counted: Iterable[ChunkText], before: ChunkText | None = None) -> Iterator[tuple[str, int, int, ChunkText]]:
    """The counted chunks' words as one stream, each with its line, how it ends and its chunk,
    made a chunk at a time (a page's words held at once, as tuples, cost some 16x the
    page). A chunk boundary counts as a line end, so a word the page hyphenates across a line
    end may end one chunk and start the next; what a chunk repeats of the one before (its
    overlap, its table's header) is left out."""
    previous = [t[0] for t in tokens(elide_inline_data(before.content))] if before is not None else []
    line_base = 0
    for chunk in counted:
        chunk_tokens = tokens(elide_inline_data(chunk.content))
        spelled = [t[0] for t in chunk_tokens]
        skip = _overlap_words(previous, spelled, chunk.content[: chunk.metadata[OVERLAP_KEY]]) \
            if chunk.metadata.get(OVERLAP_KEY) else 0
        if chunk.metadata.get(HEADER_KEY):
            skip = max(skip, len(tokens(chunk.content[: chunk.metadata[HEADER_KEY]])))
        previous = spelled
        yield from ((word, line_base + line, ends, chunk) for word, line, ends in chunk_tokens[skip:])
        line_base += (chunk_tokens[-1][1] + 1) if chunk_tokens else 0


def measure(source_id: str, pages: Sequence[PageOutput], chunks: Iterable[ChunkText],
            origins: Mapping[int, int] | None = None) -> DocumentFidelity:
    """The measure of a document: every page with text or chunks, against its chunks; `origins`
    says where each page's text starts in the chunks' offsets (`measure_page`)."""
    by_page: dict[int, list[ChunkText]] = {}
    for chunk in chunks:
        if chunk.page is not None:
            by_page.setdefault(chunk.page, []).append(chunk)
    texts = {p.page: p.text for p in pages}
    numbers = sorted({n for n, t in texts.items() if not blank(t)} | set(by_page))
    return DocumentFidelity(source_id, tuple(
        measure_page(n, texts.get(n, ""), by_page.get(n, ()), origin=origins.get(n) if origins else None) for n in numbers))
