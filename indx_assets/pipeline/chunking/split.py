"""Hierarchical splitting shaped like the OpenSearch document-split service.

`split_document` cuts a document into a tree of nodes and returns the service's four lists:

- `nodes`: every node of the tree, `{"id", "type", "parent_id"}`. The `root` node is its own
  parent (as in the service's responses). Below it the text is split by paragraph (blank
  line), then line (`\\n`), then sentence (the project's one rule, `chunking/sentences.py`),
  then sub-sentence (`，、；,;：`), and, as a last resort, by word and by character. At each
  level the pieces are greedily merged with their neighbours while the merged span still
  fits `max_chunk_size`; a merged group that fits is a leaf, a single piece that does not
  fit becomes an intermediate node and is split at the next level. Every leaf therefore fits.
- `chunks`: the leaves in reading order, `{"content", "meta": {"id", "parent_id", "type":
  "text", "size", "start", "end"}}`
  (`size` in the unit of `compute_type`). `content` is the exact slice `text[start:end]` of the
  working text (see below) with surrounding whitespace trimmed, so the leaves cover the text
  in order and only whitespace lies between two neighbours.
- `rich_texts`: images, tables and code lifted out of Markdown and HTML, each replaced in the
  working text by a placeholder (`[image_0]`, `<table>table_0</table>`, `<code>code_0</code>`),
  `{"content", "meta": {"id", "type": "image"|"table"|"code", "belonged_chunk_id", "size"}}`.
  A rich text longer than `max_chunk_size` is split (tables by whole rows with the header
  repeated, code by lines); the parts are numbered in the id suffix (`table_0-0`,
  `table_0-1`), as the service does. `belonged_chunk_id` is the leaf holding its placeholder.
- `sentences` (only with `need_sentence`): every sentence of every leaf, `{"content", "meta":
  {"id", "type": "sentence", "belonged_chunk_id", "start", "end"}}`; a sentence never spans
  two leaves.

The working text is the input for `text`; for `markdown` it is the source with each rich block
replaced by its placeholder, and `start`/`end` of chunks are mapped back to offsets into the
source (a span that holds a placeholder covers the whole lifted block); for `html` it is the
visible text (the HTML reader's blocks joined by a blank line), and offsets refer to it.

Placeholders are atomic: a `max_chunk_size` smaller than a placeholder (22 characters for
`<table>table_0</table>`) cannot be met by the leaf that holds it.

Ids are deterministic (UUID5 of the content's digest and the node's path), so the same input
always gives the same tree. Bad input raises `SplitError` with the service's error `code`.
"""

import hashlib
import re
import uuid
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import accumulate
from typing import Any, Literal

from indx_assets.pipeline.chunking.markdown_parse import LineOffsets, parse_markdown
from indx_assets.pipeline.chunking.measure import CharMeasure, Measure, TokenMeasure
from indx_assets.pipeline.chunking.sentences import CLOSERS, Span, sentence_spans, trim_span
from indx_assets.pipeline.tokenizer import TokenCounter
from indx_assets.pipeline.whitespace import blank

ContentType = Literal["text", "markdown", "html"]
ComputeType = Literal["token", "character"]
CONTENT_TYPES: tuple[str, ...] = ("text", "markdown", "html")
COMPUTE_TYPES: tuple[str, ...] = ("token", "character")

#: Fixed namespace of split-tree ids (a UUID5 of the project's name for this service).
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "indx-assets:document-split")



class SplitError(ValueError):
    """Bad input to `split_document`; `code` and `message` are the service's error object."""

    def __init__(self, message: str, code: str = "InvalidParameter") -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


# --- boundaries -----------------------------------------------------------------------------
# Each pattern's group `g` is a *gap*: the text between two units. Units are what lies between
# gaps, trimmed of whitespace; a terminator and the closing quotes after it stay with the unit
# they end (they are matched before `g`). Sentences are the project's one rule
# (`chunking/sentences.py`).
_PARAGRAPH_GAP = re.compile(r"(?P<g>\n[ \t\r\f\v]*\n\s*)")
_LINE_GAP = re.compile(r"(?P<g>\s*\n\s*)")
_SUBSENTENCE_GAP = re.compile(rf"[，、；：][{CLOSERS}]*(?P<g>\s*)|[,;:][{CLOSERS}]*(?P<g2>\s+)")
_WORD_GAP = re.compile(r"(?P<g>\s+)")
#: Placeholders are atomic: a character cut never lands inside one.
_PLACEHOLDER = re.compile(r"\[image_\d+\]|<table>table_\d+</table>|<code>code_\d+</code>")

def _units(text: str, span: Span, gap: re.Pattern[str]) -> list[Span]:
    """The non-empty, whitespace-trimmed pieces of `text[span]` between matches of `gap`."""
    start, end = span
    out: list[Span] = []
    pos = start
    for m in gap.finditer(text, start, end):
        name = m.lastgroup or "g"  # each branch's gap group is its last group: the branch that matched
        out.append((pos, m.start(name)))
        pos = m.end(name)
    out.append((pos, end))
    return [t for t in (trim_span(text, s) for s in out) if t[0] < t[1]]


#: (node type, how a span splits into its units), outermost first.
_LEVELS: tuple[tuple[str, Callable[[str, Span], list[Span]]], ...] = (
    ("paragraph", partial(_units, gap=_PARAGRAPH_GAP)),
    ("newline", partial(_units, gap=_LINE_GAP)),
    ("sentence", partial(sentence_spans, lines=False)),
    ("subsentence", partial(_units, gap=_SUBSENTENCE_GAP)),
)


#: A token is rarely longer than this many characters (WordPiece gives up at 100 per word).
_MAX_CHARS_PER_UNIT = 32


def _char_pieces(text: str, span: Span, measure: Measure, limit: int) -> list[Span]:
    """Cut `text[span]` into the longest prefixes that fit, never inside a placeholder."""
    start, end = span
    # Atomic units: placeholders whole, every other character alone.
    bounds = [start]
    pos = start
    for m in _PLACEHOLDER.finditer(text, start, end):
        bounds.extend(range(pos + 1, m.start() + 1))
        bounds.append(m.end())
        pos = m.end()
    bounds.extend(range(pos + 1, end + 1))
    bounds = sorted(set(bounds))
    pieces: list[Span] = []
    i = 0
    while i < len(bounds) - 1:
        # Binary search for the furthest bound that still fits; at least one unit per piece.
        # No piece is longer than `_MAX_CHARS_PER_UNIT * limit` characters, which keeps the
        # probes short on a huge unbroken run.
        lo, hi = i + 1, min(len(bounds) - 1, bisect_right(bounds, bounds[i] + _MAX_CHARS_PER_UNIT * limit) - 1)
        hi = max(hi, lo)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if measure.size(text[bounds[i] : bounds[mid]]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        pieces.append(trim_span(text, (bounds[i], bounds[lo])))
        i = lo
    return [p for p in pieces if p[0] < p[1]]


# --- the tree -------------------------------------------------------------------------------
@dataclass
class _Tree:
    text: str
    measure: Measure
    limit: int
    digest: str
    nodes: list[dict[str, str]] = field(default_factory=list)
    leaves: list[tuple[str, str, Span, int]] = field(default_factory=list)  # id, parent, span, size

    def node_id(self, path: str) -> str:
        return uuid.uuid5(_NAMESPACE, f"{self.digest}:{path}").hex

    def add(self, path: str, kind: str, parent: str | None) -> str:
        nid = self.node_id(path)
        self.nodes.append({"id": nid, "type": kind, "parent_id": parent or nid})
        return nid

    def groups(self, units: list[Span]) -> Iterator[tuple[Span, int | None]]:
        """Greedy merge of neighbouring units; yields (span, size if it fits else None).

        Each group is the longest run from its first unit whose text fits. The sum of the
        parts' sizes is a lower bound of the merged size for both measures (whitespace gaps
        cost characters, never fewer tokens), so it caps the run; the real size is then
        bisected within that cap, a few measures a group instead of one per unit added.
        """
        sizes = self.measure.sizes([self.text[s:e] for s, e in units])
        running = list(accumulate(sizes, initial=0))  # running[k]: the sum of sizes[:k]
        i = 0
        while i < len(units):
            if sizes[i] > self.limit:
                yield units[i], None
                i += 1
                continue
            # units[i:lo] fit; no run past hi can (the sizes of its parts alone pass the limit)
            lo, hi = i + 1, bisect_right(running, running[i] + self.limit) - 1
            size = sizes[i]
            while lo < hi:
                mid = (lo + hi + 1) // 2
                merged = self.measure.size(self.text[units[i][0] : units[mid - 1][1]])
                if merged <= self.limit:
                    lo, size = mid, merged
                else:
                    hi = mid - 1
            yield (units[i][0], units[lo - 1][1]), size
            i = lo

    def split(self, span: Span, parent: str, path: str, level: int) -> None:
        """Children of the node `parent` covering `span`, split at `_LEVELS[level]` or finer."""
        if level < len(_LEVELS):
            kind, units_of = _LEVELS[level]
            units = units_of(self.text, span)
        else:
            # Past sub-sentences: words, then characters; the pieces are sub-sentence leaves.
            kind = "subsentence"
            units = _units(self.text, span, _WORD_GAP)
            if len(units) == 1:
                units = _char_pieces(self.text, span, self.measure, self.limit)
                for n, piece in enumerate(units):
                    child = f"{path}/{n}"
                    self.leaves.append((self.add(child, kind, parent), parent, piece, self.measure.size(self.text[piece[0]:piece[1]])))
                return
        for n, (group, size) in enumerate(self.groups(units)):
            child = f"{path}/{n}"
            nid = self.add(child, kind, parent)
            if size is not None:
                self.leaves.append((nid, parent, group, size))
            else:
                self.split(group, nid, child, level + 1)


# --- rich texts -----------------------------------------------------------------------------
@dataclass
class _Rich:
    kind: str  # image, table or code
    placeholder_id: str
    content: str
    header_lines: int = 0  # table rows repeated at the top of every part


def _placeholder(kind: str, pid: str) -> str:
    return f"[{pid}]" if kind == "image" else f"<{kind}>{pid}</{kind}>"


def _pack_lines(lines: list[str], header: list[str], measure: Measure, limit: int) -> list[str]:
    """Whole lines packed into parts that fit, `header` repeated on top of each part."""
    parts: list[str] = []
    current: list[str] = []
    for line in lines:
        candidate = "\n".join(header + current + [line])
        if measure.size(candidate) <= limit:
            current.append(line)
            continue
        if current:
            parts.append("\n".join(header + current))
            current = []
        if measure.size("\n".join(header + [line])) <= limit:
            current = [line]
        else:
            # A single row or line too long even alone: cut it by characters, header dropped.
            parts.extend(line[s:e] for s, e in _char_pieces(line, (0, len(line)), measure, limit))
    if current or not parts:
        parts.append("\n".join(header + current))
    return parts


def _rich_parts(rich: _Rich, measure: Measure, limit: int) -> list[str]:
    if rich.kind == "image" or measure.size(rich.content) <= limit:
        return [rich.content]
    lines = rich.content.split("\n")
    return _pack_lines(lines[rich.header_lines :], lines[: rich.header_lines], measure, limit)


def _markdown_working_text(source: str) -> tuple[str, list[_Rich], list[tuple[int, int, int]]]:
    """The Markdown source with images, tables and code replaced by placeholders.

    Returns the working text, the lifted rich texts and the replacements as (working offset
    of the placeholder, its length, source offset of the block, source length) folded into
    anchors `(work_start, src_start, src_end)` for mapping offsets back.
    """
    lines = LineOffsets(source)

    def line_span(first: int, last: int) -> Span:
        return lines.span((first, last), trim=False)  # type: ignore[return-value]

    blocks: list[tuple[Span, str, str, int]] = []  # source span, kind, content, header lines
    tokens, _ = parse_markdown(source)
    for i, tok in enumerate(tokens):
        if tok.type in ("fence", "code_block") and tok.map:
            blocks.append((line_span(*tok.map), "code", tok.content.rstrip("\n"), 0))
        elif tok.type == "table_open" and tok.map:
            span = line_span(*tok.map)
            blocks.append((span, "table", source[span[0] : span[1]].strip(), 2))
        elif tok.type == "inline" and tok.map and tok.children and not _inside_table(tokens, i):
            images = [c for c in tok.children if c.type == "image"]
            if not images:
                continue
            s, e = line_span(*tok.map)
            found = list(_MD_IMAGE.finditer(source, s, e))[: len(images)]
            for m, img in zip(found, images, strict=False):
                blocks.append(((m.start(), m.end()), "image", str(img.attrs.get("src", "")), 0))
    blocks.sort(key=lambda b: b[0][0])

    counters = {"image": 0, "table": 0, "code": 0}
    out: list[str] = []
    rich: list[_Rich] = []
    anchors: list[tuple[int, int, int]] = []
    pos = work = 0
    for (s, e), kind, content, header in blocks:
        if s < pos:  # nested in a block already lifted (an image inside a table, say)
            continue
        pid = f"{kind}_{counters[kind]}"
        counters[kind] += 1
        out.append(source[pos:s])
        work += s - pos
        ph = _placeholder(kind, pid)
        anchors.append((work, s, e))
        out.append(ph)
        work += len(ph)
        pos = e
        rich.append(_Rich(kind, pid, content, header))
    out.append(source[pos:])
    return "".join(out), rich, anchors


_MD_IMAGE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\((?:[^()\\]|\\.|\([^)]*\))*\)|!\[(?:[^\]\\]|\\.)*\]\[[^\]]*\]")


def _inside_table(tokens: list[Any], index: int) -> bool:
    depth = 0
    for tok in reversed(tokens[:index]):
        if tok.type == "table_close":
            depth += 1
        elif tok.type == "table_open":
            if depth == 0:
                return True
            depth -= 1
    return False


def _to_source(offset: int, anchors: list[tuple[int, int, int]], placeholder_ends: list[int], is_end: bool) -> int:
    """Map a working-text offset back to the Markdown source."""
    i = bisect_right([a[0] for a in anchors], offset) - 1
    if i < 0:
        return offset
    work_start, src_start, src_end = anchors[i]
    if offset < placeholder_ends[i] or (is_end and offset == placeholder_ends[i]):
        # Inside (or at the end of) a placeholder: the whole lifted block.
        return src_end if is_end else src_start
    return src_end + (offset - placeholder_ends[i])


def _html_working_text(html: str) -> tuple[str, list[_Rich]]:
    """Visible text of the HTML (the reader's blocks), with images, tables, code lifted."""
    from indx_assets.pipeline.readers.html import BLOCK_SEPARATOR, HtmlTooDeep, html_blocks, parse_html

    try:
        tree = parse_html(html)
    except HtmlTooDeep as exc:
        raise SplitError(f"document.content: {exc}") from None
    rich: list[_Rich] = []
    for n, img in enumerate(tree.css("img")):
        pid = f"image_{n}"
        rich.append(_Rich("image", pid, img.attributes.get("src") or ""))
        img.replace_with(f" {_placeholder('image', pid)} ")
    counters = {"table": 0, "code": 0}
    texts: list[str] = []
    for block in html_blocks(tree.html or ""):
        if block.kind in counters:
            pid = f"{block.kind}_{counters[block.kind]}"
            counters[block.kind] += 1
            rich.append(_Rich(block.kind, pid, block.text, header_lines=1 if block.kind == "table" else 0))
            texts.append(_placeholder(block.kind, pid))
        else:
            texts.append(block.text)
    # Images are numbered in document order; tables and code after them in the same list,
    # which `split_document` reorders by where the placeholders landed.
    return BLOCK_SEPARATOR.join(texts), rich


# --- the service ----------------------------------------------------------------------------
def _decode(content: str | bytes) -> str:
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SplitError(f"document.content is not valid UTF-8: {exc}") from None
        content = content.removeprefix("\ufeff")
    if blank(content):
        raise SplitError("document.content is empty")
    return content


def split_document(
    content: str | bytes,
    *,
    content_type: str = "text",
    max_chunk_size: int = 300,
    compute_type: str = "token",
    need_sentence: bool = False,
    tokenizer: TokenCounter | None = None,
) -> dict[str, Any]:
    """Split `content` into the service's `chunks`, `nodes`, `rich_texts` and `sentences`.

    Sizes are counted in tokens of `tokenizer` (default: the embedder's MiniLM tokenizer) or
    in characters. Raises `SplitError` for empty or non-UTF-8 content, an unknown
    `content_type` or `compute_type`, or `max_chunk_size <= 0`.
    """
    if content_type not in CONTENT_TYPES:
        raise SplitError(f"document.content_type must be one of {', '.join(CONTENT_TYPES)}, got {content_type!r}")
    if compute_type not in COMPUTE_TYPES:
        raise SplitError(f"strategy.compute_type must be one of {', '.join(COMPUTE_TYPES)}, got {compute_type!r}")
    if isinstance(max_chunk_size, bool) or not isinstance(max_chunk_size, int) or max_chunk_size <= 0:
        raise SplitError(f"strategy.max_chunk_size must be a positive integer, got {max_chunk_size!r}")
    source = _decode(content)

    measure: Measure
    if compute_type == "character":
        measure = CharMeasure()
    else:
        if tokenizer is None:
            from indx_assets.pipeline.embedders.registry import sizing_tokenizer

            tokenizer = sizing_tokenizer()
        measure = TokenMeasure(tokenizer)

    anchors: list[tuple[int, int, int]] = []
    rich: list[_Rich] = []
    if content_type == "markdown":
        text, rich, anchors = _markdown_working_text(source)
    elif content_type == "html":
        text, rich = _html_working_text(source)
        if blank(text):
            raise SplitError("document.content has no visible text")
    else:
        text = source

    digest = hashlib.sha256(
        f"{content_type}\0{compute_type}\0{max_chunk_size}\0".encode() + source.encode("utf-8", "surrogatepass")
    ).hexdigest()
    tree = _Tree(text=text, measure=measure, limit=max_chunk_size, digest=digest)
    root = tree.add("root", "root", None)
    tree.split((0, len(text)), root, "root", 0)

    placeholder_ends = [w + len(_placeholder(r.kind, r.placeholder_id)) for (w, _, _), r in zip(anchors, rich, strict=False)]

    def offsets(span: Span) -> tuple[int, int]:
        if not anchors:
            return span
        return _to_source(span[0], anchors, placeholder_ends, False), _to_source(span[1], anchors, placeholder_ends, True)

    chunks: list[dict[str, Any]] = []
    holder: dict[str, str] = {}  # placeholder id -> leaf id
    for nid, parent, (s, e), size in tree.leaves:
        piece = text[s:e]
        for m in _PLACEHOLDER.finditer(piece):
            holder[re.sub(r"^\[|\]$|^<\w+>|</\w+>$", "", m.group(0))] = nid
        start, end = offsets((s, e))
        chunks.append({"content": piece, "meta": {"id": nid, "parent_id": parent, "type": "text", "size": size, "start": start, "end": end}})

    rich_texts: list[dict[str, Any]] = []
    for r in sorted(rich, key=lambda r: text.find(_placeholder(r.kind, r.placeholder_id))):
        for n, part in enumerate(_rich_parts(r, measure, max_chunk_size)):
            rich_texts.append(
                {
                    "content": part,
                    "meta": {
                        "id": f"{r.placeholder_id}-{n}",
                        "type": r.kind,
                        "belonged_chunk_id": holder.get(r.placeholder_id),
                        "size": measure.size(part),
                    },
                }
            )

    sentences: list[dict[str, Any]] = []
    if need_sentence:
        for nid, _, span, _ in tree.leaves:
            for n, (s, e) in enumerate(sentence_spans(text, span)):
                start, end = offsets((s, e))
                sentences.append(
                    {
                        "content": text[s:e],
                        "meta": {"id": tree.node_id(f"sentence:{nid}/{n}"), "type": "sentence", "belonged_chunk_id": nid, "start": start, "end": end},
                    }
                )

    return {"chunks": chunks, "nodes": tree.nodes, "rich_texts": rich_texts, "sentences": sentences}
