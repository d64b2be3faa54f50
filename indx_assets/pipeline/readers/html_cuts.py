"""Where an HTML document can be cut into pieces that parse, one by one, into the same blocks.

A parser's tree costs many times its page's size (Lexbor: about 15x for short paragraphs), so a
large page is parsed a piece at a time (`html_pieces`). Tree construction never looks ahead, so
a prefix of a document parses as the document does up to the cut. The rest parses alone as it
would have in place exactly when, at the cut, the parser would have held nothing open but
`html` and `body` (no formatting element to reconstruct, no form, table, select, template or
foreign content) and the piece starts with a token that goes to the body from any mode before
it: a block start tag, or a word of text after whitespace. Each piece after the first is given
the document's DOCTYPE, so it is parsed in the same (no-)quirks mode.

The scan below proves that state without building a tree, conservatively: it follows the
tokenizer (tags, attributes with quoted `>`, comments, raw text and RCDATA elements) and keeps a
stack of the start tags that explicit end tags have not yet closed. While every element is
closed by its own end tag in order, that stack is what the parser holds above `body`. At the
first tag it cannot vouch for (an end tag that does not close the innermost open element, an
unterminated token, `frameset`, `plaintext`, a script that enters its double-escaped state,
HTML breaking out of SVG/MathML) it stops proposing cuts: the rest is one piece, parsed whole,
as before. Nothing here decides what text a page has; a wrong cut could only move a block
boundary, and `tests/test_html_pieces.py` compares every piece-wise parse against the whole.
"""

import mmap
import re
from collections.abc import Callable, Iterator

#: A document's bytes: read, or mapped from its file.
Source = bytes | mmap.mmap

#: A piece is cut at the first safe place after it has grown to this many bytes.
PIECE_BYTES = 1 << 18

_WS = rb"\t\n\f\r "
#: One attribute (name, optional value) or a run of whitespace and stray slashes, as the
#: tokenizer reads them; atomic, so a tag that never ends fails fast instead of backtracking.
_ATTRS = rb"(?>(?:[" + _WS + rb"/]+|[^" + _WS + rb"/>][^" + _WS + rb"/>=]*(?:[" + _WS + rb"]*=[" + _WS + \
    rb"]*(?:\"[^\"]*\"|'[^']*'|[^" + _WS + rb">]*))?)*)"
_TOKEN = re.compile(
    rb"<(?:(?P<comment>!--(?:>|->|.*?--!?>))"
    rb"|(?P<bang>!(?!--)[^>]*>)"  # `<!--` that never ends is no bogus comment
    rb"|(?P<pi>\?[^>]*>)"
    rb"|/(?P<end>[A-Za-z][^" + _WS + rb"/>]*)" + _ATTRS + rb">"
    rb"|(?P<start>[A-Za-z][^" + _WS + rb"/>]*)(?P<attrs>" + _ATTRS + rb")>"
    rb"|/>"
    rb"|(?P<bogus>/[^>]*>))",
    re.S,
)
#: What a tag that is not the start of a token leaves: `<` as text.
_TAG_START = re.compile(rb"<[A-Za-z!?/]")

_VOID = frozenset(
    b"area base basefont bgsound br col embed frame hr img image input keygen link meta param source track wbr".split()
)
#: Start and end tags that move no element on or off the stack in the body (attributes merge
#: into `html`/`body`; `head` and end tags of these are ignored there).
_IGNORED = frozenset(b"html head body".split())
_RAW_TEXT = frozenset(b"style xmp iframe noembed noframes textarea title script".split())
_NEVER = frozenset(b"frameset plaintext".split())
_FOREIGN = frozenset(b"svg math".split())
#: Start tags that leave SVG/MathML (the HTML standard's breakout list) or make part of it HTML.
_BREAKOUT = frozenset(
    b"b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu meta"
    b" nobr ol p pre ruby s small span strong strike sub sup table tt u ul var font foreignobject desc"
    b" annotation-xml mi mo mn ms mtext".split()
) | (_RAW_TEXT - {b"title"}) | _NEVER | frozenset({b"noscript"})  # SVG's `title` is SVG
#: Start tags a piece may begin with: from any mode before the body, they open the body and go into it.
_CUT_BEFORE = frozenset(
    b"p div section article header footer main aside nav blockquote dl figure address details center"
    b" h1 h2 h3 h4 h5 h6 ul ol pre table hr".split()
)
_NOT_WS = re.compile(rb"[^" + _WS + rb"]")
_WORD_AFTER_SPACE = re.compile(rb"[" + _WS + rb"][A-Za-z0-9]")
_SELF_CLOSING = re.compile(rb"(?:^|[" + _WS + rb"\"'])/+$")


class _Scan:
    """The tokenizer's view of a document, token by token, and the stack of open elements."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.stack: list[bytes] = []
        self.foreign = 0  # how many of the open elements are SVG/MathML
        self.doctype = b""
        self.seen_token = False  # a DOCTYPE counts only as the first token
        self.trusted = True

    def cuts(self, every: int) -> Iterator[int]:
        """Offsets at which the document may be cut, the first at least `every` bytes in and each
        next at least `every` bytes after the one before; none once the scan cannot vouch."""
        source, at, last = self.source, 0, 0
        while self.trusted:
            lt = source.find(b"<", at)
            text_end = len(source) if lt < 0 else lt
            if not self.seen_token and _NOT_WS.search(source, at, text_end):
                self.seen_token = True  # text: a DOCTYPE after it is ignored
            if not self.stack and text_end - last >= every:
                # a word after whitespace in text directly in the body
                start = max(at, last + every - 1)
                while (word := _WORD_AFTER_SPACE.search(source, start, text_end)) is not None:
                    last = word.start() + 1
                    yield last
                    start = last + every - 1
            if lt < 0:
                return
            token = _TOKEN.match(source, lt)
            if token is None:
                if _TAG_START.match(source, lt):  # a tag, comment or the like that never ends
                    self.trusted = False
                    return
                at = lt + 1  # a lone `<` is text
                self.seen_token = True
                continue
            if token["start"] is not None:
                name = token["start"].lower()
                if not self.stack and lt - last >= every and name in _CUT_BEFORE:
                    last = lt
                    yield lt
                at = self._start(name, token["attrs"], token.end())
            elif token["end"] is not None:
                self._end(token["end"].lower())
                at = token.end()
            elif token["bang"] is not None and token["bang"][:8].lower() == b"!doctype" and not self.seen_token:
                self.doctype = token[0]
                at = token.end()
            elif token["bang"] is not None and token["bang"].startswith(b"![CDATA[") and self.foreign:
                close = source.find(b"]]>", lt)
                if close < 0:
                    self.trusted = False
                    return
                at = close + 3
            else:
                at = token.end()  # comments and the like
            self.seen_token = True

    def _start(self, name: bytes, attrs: bytes, at: int) -> int:
        """Follow a start tag ending at `at`; where the next token begins."""
        if self.foreign:
            if name in _BREAKOUT:
                self.trusted = False
            elif not _SELF_CLOSING.search(attrs):
                self.stack.append(name)
                self.foreign += 1
            return at
        if name in _NEVER or (name == b"noscript" and b"select" in self.stack):
            self.trusted = False
        elif name in _FOREIGN:
            if not _SELF_CLOSING.search(attrs):
                self.stack.append(name)
                self.foreign += 1
        elif name in _RAW_TEXT:
            if b"select" in self.stack and name != b"script":  # ignored there: its text is markup
                self.trusted = False
                return at
            return self._raw_text(name, at)
        elif name not in _VOID and name not in _IGNORED:
            self.stack.append(name)
        return at

    def _raw_text(self, name: bytes, at: int) -> int:
        """Skip the text of a raw text or RCDATA element to just past its end tag."""
        close = re.compile(rb"</" + re.escape(name) + rb"[" + _WS + rb"/>]", re.I).search(self.source, at)
        if close is None:
            self.trusted = False
            return len(self.source)
        if name == b"script":
            # `<!--` then `<script` puts the tokenizer in the double-escaped state, where the
            # first `</script>` does not end the script: not followed here.
            body = self.source[at : close.start()]
            comment = body.find(b"<!--")
            if comment >= 0 and re.search(rb"<script[" + _WS + rb"/>]", body[comment:], re.I):
                self.trusted = False
                return len(self.source)
        token = _TOKEN.match(self.source, close.start())
        if token is None:
            self.trusted = False
            return len(self.source)
        return token.end()

    def _end(self, name: bytes) -> None:
        if self.stack and self.stack[-1] == name:
            self.stack.pop()
            if self.foreign:
                self.foreign -= 1
        elif name == b"br" or self.foreign or (name not in _VOID and name not in _IGNORED):
            self.trusted = False  # `</br>` is a `<br>`; other unmatched end tags close or open elements


def html_pieces(source: Source, every: int = PIECE_BYTES,
                released: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """`source` (an HTML document's UTF-8 bytes, or a map of them) as pieces to parse one by
    one, each after the first behind the document's DOCTYPE; the whole document when it is no
    longer than `every`. `released(offset)` is told when the bytes before `offset` are done with."""
    if len(source) <= every:
        yield source if isinstance(source, bytes) else source[:]
        return
    scan = _Scan(source)
    start = 0
    for cut in scan.cuts(every):
        yield source[start:cut] if start == 0 else scan.doctype + source[start:cut]
        start = cut
        if released is not None:
            released(start)
    yield source[:] if start == 0 else scan.doctype + source[start:]
