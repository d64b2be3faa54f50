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
stack of the start tags not yet closed, by their own end tag or by the rules of the body that
close an element implicitly (`_close_implied`: a block start closes an open `p` in button scope,
`li` an open `li`, `dd`/`dt` an open `dd`/`dt`, a heading an open heading, an end tag the implied
`p`, `li` and the like above its element; an end tag with nothing of its name open is ignored).
The scan follows such a close only where nothing but those implied elements stands above the
element closed, so that its stack is what the parser holds above `body`, or more (never less). At
the first tag it cannot vouch for (an end tag or a start tag that would close an element such as
a formatting one, whose closing the parser undoes later; an unterminated token, `frameset`,
`plaintext`, a script that enters its double-escaped state, HTML breaking out of SVG/MathML) it
stops proposing cuts: the rest is one piece, parsed whole, as before. A page with a `frameset`
tag anywhere is not cut at all (see `_FRAMESET`).

Where only containers the walk reads as blocks of text are open (`div`, `section`, lists and
the like, with no `hidden` or `style` attribute), a cut may fall before a block start tag, or
before an item of the list open innermost: the next piece starts by opening them again, which the
walk of blocks does not see (see `_reopen`). Tables are not cut: their rows make one block. Nothing here decides what text a page has; a wrong cut could only move a block
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
#: After `=`, a value: quoted (to its closing quote, or the tag never ends), or unquoted (not
#: starting with a quote), or none before `>`.
_ATTRS = rb"(?>(?:[" + _WS + rb"/]+|[^" + _WS + rb"/>][^" + _WS + rb"/>=]*+(?:[" + _WS + rb"]*=[" + _WS + \
    rb"]*(?:\"[^\"]*\"|'[^']*'|[^" + _WS + rb">\"'][^" + _WS + rb">]*|(?=>))|(?![" + _WS + rb"]*=)))*)"
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
#: Elements "generate implied end tags" closes: an element above one that an end tag or a start
#: tag closes is popped silently only when it is one of these.
_IMPLIED = frozenset(b"dd dt li optgroup option p rb rp rt rtc".split())
#: Start tags that close an open `p` in button scope (`table` too, but not in quirks mode).
_CLOSES_P = frozenset(
    b"address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer form"
    b" h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre listing section summary ul xmp li dd dt".split()
)
_HEADINGS = frozenset(b"h1 h2 h3 h4 h5 h6".split())
#: Where the default scope stops a search down the stack, and button scope too.
_SCOPE = frozenset(b"applet caption html table td th marquee object template".split())
_BUTTON_SCOPE = _SCOPE | {b"button"}
#: The HTML standard's special elements (those the scan can hold): where `li`'s and `dd`'s
#: search for an open item to close stops (but not at address, div or p).
_SPECIAL = frozenset(
    b"address applet article aside blockquote body button caption center colgroup dd details dialog dir div dl dt"
    b" fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup html li listing main marquee menu nav"
    b" object ol p pre search section select summary table tbody td template tfoot th thead tr ul".split()
)
_ITEM_SEARCH_STOP = _SPECIAL - {b"address", b"div", b"p"}
#: End tags that close their element with whatever implied elements stand above it (the rest
#: close only the current node, or run the adoption agency).
_CLOSES_IMPLIED = frozenset(
    b"address article aside blockquote button center details dialog dir div dl fieldset figcaption figure footer"
    b" header hgroup listing main menu nav ol pre section summary ul p li dd dt h1 h2 h3 h4 h5 h6 form select td th tr"
    b" table".split()
)
#: Start tags whose effect on an open element of the same name the scan does not follow
#: (the adoption agency for `a`, `nobr`; a nested button closes the first; a nested form is ignored).
_NOT_NESTED = frozenset(b"a nobr button form".split())
_RUBY = frozenset(b"rb rp rt rtc".split())
#: Containers a piece may open again (`_Scan._reopen`): the walk reads each as a block of text.
_REOPENABLE = frozenset(b"div section article header footer main aside nav blockquote center figure address ul ol dl".split())
#: What a list's items start with: a cut may fall before one.
_ITEMS = {b"ul": frozenset({b"li"}), b"ol": frozenset({b"li"}), b"dl": frozenset({b"dt", b"dd"})}
#: Attributes the walk reads (hidden, aria-hidden, style): a container with one is not reopened.
_READ_ATTRS = re.compile(rb"hidden|style", re.I)
#: The DOCTYPE of no-quirks mode, where `table` closes an open `p`.
_NO_QUIRKS = re.compile(rb"<!doctype[" + _WS + rb"]+html[" + _WS + rb"]*>", re.I)
#: A `frameset` start tag replaces the body where the parser has seen nothing that rules it out
#: (the frameset-ok flag), which a piece parsed alone has not: a page with one is not cut.
_FRAMESET = re.compile(rb"<frameset", re.I)
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
        #: each open element's start tag where a piece may open it again (`_REOPENABLE`), else
        #: None; only the first `len(stack)` are the open elements' (a push overwrites past them)
        self.tags: list[bytes | None] = []

    def cuts(self, every: int) -> Iterator[tuple[int, bytes]]:
        """Offsets at which the document may be cut, each with the markup that reopens what is
        open there (see `_reopen`), the first at least `every` bytes in and each next at least
        `every` bytes after the one before; none once the scan cannot vouch."""
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
                    yield last, b""
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
                if not self.foreign:
                    self._close_implied(name)
                    if not self.trusted:
                        return
                if lt - last >= every and (reopen := self._reopen(name, token["attrs"])) is not None:
                    last = lt
                    yield lt, reopen
                depth = len(self.stack)
                at = self._start(name, token["attrs"], token.end())
                if len(self.stack) > depth:
                    del self.tags[depth:]
                    reopenable = name in _REOPENABLE and not _READ_ATTRS.search(token["attrs"])
                    self.tags.append(token[0] if reopenable else None)
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

    def _reopen(self, name: bytes, attrs: bytes) -> bytes | None:
        """What a piece starting with the start tag `name` must begin with to be parsed as it is
        in place, `None` where no cut is: the start tags of the open elements, when each is a
        container the walk reads only as a block of text (`_REOPENABLE`, with none of the
        attributes it reads: `_READ_ATTRS`) and `name` starts a block (or an item of the list
        open innermost) that the walk does not skip (none of those attributes in `attrs`). There
        the walk ends a block anyway, so a container closed at a piece's end and opened again adds
        none; nothing but them is open, so the parser's state is theirs."""
        tags = self.tags[: len(self.stack)]
        if None in tags:
            return None
        if not self.stack:
            return b"" if name in _CUT_BEFORE else None
        # not before a table: what a table foster-parents goes before it, into text the
        # container's close at a piece's end would have ended
        if _READ_ATTRS.search(attrs):
            return None
        if (name in _CUT_BEFORE and name != b"table") or name in _ITEMS.get(self.stack[-1], ()):
            return b"".join(tags)  # type: ignore[arg-type]  # no None, checked above
        return None

    def _pop_through(self, names: frozenset[bytes], stops: frozenset[bytes]) -> None:
        """Close the innermost open element of `names` as the parser does, popping the elements
        above it, when it is found before any of `stops` and only elements the parser closes
        implicitly (`_IMPLIED`) stand above it; the scan cannot vouch for it closing others."""
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] in names:
                if all(above in _IMPLIED for above in self.stack[i + 1 :]):
                    del self.stack[i:]
                else:
                    self.trusted = False
                return
            if self.stack[i] in stops:
                return

    def _close_implied(self, name: bytes) -> None:
        """The open elements a start tag in the body closes before it opens (the HTML standard's
        "in body" rules for `li`, `dd`, `dt`, a `p` in button scope, headings, `option`)."""
        if b"select" in self.stack or b"template" in self.stack:
            # other insertion modes: followed only as far as an `option` closing an `option`
            if name == b"option" and self.stack[-1] == b"option":
                self.stack.pop()
            elif name in (b"option", b"optgroup") and self.stack[-1] in (b"option", b"optgroup"):
                self.trusted = False
            return
        if name == b"li":
            self._pop_through(frozenset({b"li"}), _ITEM_SEARCH_STOP)
        elif name in (b"dd", b"dt"):
            self._pop_through(frozenset({b"dd", b"dt"}), _ITEM_SEARCH_STOP)
        if name in _CLOSES_P or (name == b"table" and _NO_QUIRKS.fullmatch(self.doctype)):
            self._pop_through(frozenset({b"p"}), _BUTTON_SCOPE)
        elif b"p" in self.stack and (name == b"table" or name == b"search"):  # quirks; an element Lexbor may not know
            self.trusted = False
        if not self.stack:
            return
        top = self.stack[-1]
        if name in _HEADINGS and top in _HEADINGS:
            self.stack.pop()
        elif name in (b"option", b"optgroup") and top == b"option":
            self.stack.pop()
        elif (name in _NOT_NESTED and name in self.stack) or (name in _RUBY and top in _RUBY):
            self.trusted = False

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
        """Follow an end tag: it closes the innermost open element of its name (with the implied
        elements above it, for the end tags that close those: `_CLOSES_IMPLIED`), or is ignored
        when none is open. Anything else stops the scan vouching."""
        if self.stack and self.stack[-1] == name:
            self.stack.pop()
            if self.foreign:
                self.foreign -= 1
        elif name == b"br" or self.foreign:
            self.trusted = False  # `</br>` is a `<br>`; in SVG/MathML an end tag may close HTML
        elif name in _VOID or name in _IGNORED or name not in self.stack:
            pass  # ignored (`</p>` opens and closes an empty `p`: nothing stays open)
        elif name in _CLOSES_IMPLIED and b"select" not in self.stack and b"template" not in self.stack:
            self._pop_through(frozenset({name}), frozenset())
        else:
            self.trusted = False  # the adoption agency, or an end tag that closes what is not implied


def html_pieces(source: Source, every: int = PIECE_BYTES,
                released: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """`source` (an HTML document's UTF-8 bytes, or a map of them) as pieces to parse one by
    one, each after the first behind the document's DOCTYPE and the list it reopens (see
    `_Scan._reopen`); the whole document when it is no
    longer than `every`. `released(offset)` is told when the bytes before `offset` may leave memory
    (a map of them reads them again if they are read again)."""
    if len(source) <= every or _FRAMESET.search(source):
        yield source if isinstance(source, bytes) else source[:]
        return
    if released is not None:
        released(len(source))  # the search (and the caller's depth check) read it all; the pieces read it again
    scan = _Scan(source)
    start, reopen = 0, b""
    for cut, reopen_next in scan.cuts(every):
        yield source[start:cut] if start == 0 else scan.doctype + reopen + source[start:cut]
        start, reopen = cut, reopen_next
        if released is not None:
            released(start)
    yield source[:] if start == 0 else scan.doctype + reopen + source[start:]
