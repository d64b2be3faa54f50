"""Where an HTML document can be cut into pieces that parse, one by one, into the same blocks.

A parser's tree costs many times its page's size (Lexbor: about 15x for short paragraphs), so a
large page is parsed a piece at a time (`html_pieces`). Tree construction never looks ahead, so
a prefix of a document parses as the document does up to the cut. The rest parses alone as it
would have in place exactly when, at the cut, the parser would have held nothing open but
`html` and `body` (no table, template or foreign content; but see the containers and
formatting elements below) and the piece starts with a token
that goes to the body from any mode before it: a block start tag, or a word of text after
whitespace. Each piece after the first is given the document's DOCTYPE, so it is parsed in the
same (no-)quirks mode.

The scan below proves that state without building a tree, conservatively: it follows the tokenizer
(tags, attributes with quoted `>`, comments, raw text and RCDATA elements) and keeps a stack of the
start tags not yet closed, by their own end tag or by the rules of the body that close an element
implicitly (`_close_implied`: a block start closes an open `p` in button scope, `li` an open `li`,
`dd`/`dt` an open `dd`/`dt`, a heading an open heading, an end tag the implied `p`, `li` and the
like above its element, a heading's end tag the open heading of any level; an end tag with nothing
of its name open is ignored, and so is one whose element is out of the scope the parser looks
in). Such a close pops whatever stands above the element closed, blocks too, as the parser
does, and the scan follows it, so that its stack is what the parser holds above `body`: a stack
larger than the parser's would pair later end tags with other elements than the parser does,
and a cut would open again what the parser has closed. A template's content is followed only
as far as the tokenizer needs: nothing in it reaches out of it, and its end tag closes all it
holds (`_Scan._in_template`). At the first tag it
cannot vouch for (an end tag that closes what is not implied, an unterminated token, `frameset`,
`plaintext`, a start tag in an SVG/MathML integration point) it stops proposing cuts: the
rest is one piece, parsed whole, as before. A page with a `frameset` tag anywhere is not cut at all (see
`_FRAMESET`).

Where only containers the walk reads as blocks of text are open (`div`, `section`, lists, a
`form` and the like, with no attribute the walk reads: `READ_IN_MARKUP`), a cut may fall before a
block start tag, or before an item of the list open innermost: the next piece starts by opening
them again, which the walk of blocks does not see (see `_reopen`). The scan keeps the parser's
form element pointer (`_Scan.form_pointer`: a `<form>` is ignored while it is set,
`_Scan._start_ignored`): a form start tag sets it (in a table's modes too, where the form closes
at once), `</form>` clears it (and takes the form it points to off the stack where it is in
scope, wherever it stands: what stands above it stays open, in it: `_Scan._close_form`; a form
out of scope stays open), any other close of the form leaves it set. A piece sets it again as it
is at the cut: a form it opens again that the pointer no longer points to is followed by a
`</form>` out of its scope, which clears it (`_POINTER_CLEARED`), and a pointer to a form no
longer open is set by a form that an empty `button` closes (`_POINTER_SET`, `_Scan._open_tags`).

Formatting elements (`b`, `font`, `a`... : `_FORMATTING`; old pages wrap a whole body in
`<font face=..><b>`) and phrasing elements such as `span` (`_INLINE`) are reopened as containers
are, by their own start tags, attributes and all, where none has an attribute the walk reads: the
walk reads them as inline text, so a cut before a block start tag inside them, or before a word of
text where only they are open, ends no block the page does not end. The scan keeps the parser's
list of active formatting elements as the parser does (`_Scan._formatting_start`): an element a
block's close pops stays in it, off the stack (old pages leave a `font` or `b` open in each `p`),
and the next text, whitespace too, or start tag of most kinds reconstructs it where it is then
(`_Scan._reconstruct`); a fourth of the same name and attributes since the last marker drops the
earliest (the Noah's Ark clause); an end tag drops an entry off the stack; an `a` start tag, where
the list holds an `a` after its last marker, first runs the adoption agency for it as `</a>`
would, then drops it (from the stack too, where it stands there out of scope: below a table
that foster-parents the new one); a `nobr` start tag, where one is in scope, runs it too (one
below a marker, out of scope, stays open, as a button does below a nested one). Where a special
element (a block, a list, an item...) stands open above the formatting element an end tag
closes, the adoption agency's furthest block, the scan moves the stack and the list as the
parser does (`_Scan._furthest_block`): the formatting elements between them are copied in place
(dropped from the list past the third), the other elements between them leave the stack, and
the formatting element's copy goes just above the block. The list is the formatting elements
on the stack, in its order, then those off it; a piece opens the first again with the stack
and puts the others back in the list, off the stack, in an empty `button` (`_Scan._off_stack`),
which the walk skips. Where the list holds what that cannot
rebuild (a marker, an element on the stack the Noah's Ark clause dropped from it), no cut falls;
where the parser does what the scan does not follow (a furthest block that moves elements
out of a form `</form>` took off the stack, an `a` the
adoption agency a second `a` start tag runs leaves on the stack in scope), it stops.
Eight rounds of the adoption agency that leave the element's copy open are followed: it stays
open, on the stack and in the list, as in Lexbor.

Where a `pre` is open, with nothing open in it and only those containers around it, a cut may
fall after a line's end in its text: the next piece opens the containers and the `pre` again,
followed by a line's end, which the parser drops after a `pre` start tag, so the text goes on
whole; the reader joins the parts into the one block of code (`Piece.pre`, see `_pre_reopen`).

A table is followed through its own insertion modes (`_table_start`, `_table_end`: row groups,
rows and cells closed implicitly, a caption, a column group), and cut before a row where nothing
but a row group stands above the table and nothing but those containers below it: the next
piece opens the containers, the table and its row group again, and the reader joins the table's
parts into one block (`Piece.table`). What a table foster-parents (text, or a tag it does not
hold) goes before the whole table, so a table's cuts are told only once it has closed (or the
document ended inside it), without those before the last thing it foster-parented; the scan
follows what leaves nothing open there (text, a void element, an end tag: `_foster`,
`_fostered_end`), and the elements it leaves open above the table's own (formatting
elements, blocks, list items, headings, buttons, phrasing elements: `_FOSTERED_OPEN`) with what
goes into them, until a tag of the table's own closes them (`_foster_parented`); it stops at the
rest. A `table` start tag in a table closes it. A table inside a cell, or with an attribute
the walk reads, is not cut (nor are its cells). A table inside formatting elements is: nothing
the parser does in a table's modes reconstructs them (a cell's marker stops it, and
the scan stops where what a table foster-parents would), and an end tag of one in the table is
ignored, or drops it from the list where it is off the stack.

A table's cell is cut as the body is, before a block or a list's item, or a word of text where
only formatting and phrasing elements are open in it, and before a table in it (a page laid out
in a table, a forum's or a mail, holds all its text in one cell: `_Scan._cell_cut`); a table it
holds is not cut inside. The next piece opens again what is open around the table, the table's
own elements down to the cell, and what is open in the cell, each by its start tag, and puts
back the entries of the list of active formatting elements off the stack on both sides of the
cell's marker. The cuts are held until the table closes, as a
row's are, and dropped from where a table starts that foster-parents (so is one before a table
in a cell: what it foster-parents goes before it, into the text before the cut), and those in
a cell where the adoption agency later moves an element open at the cut (its furthest block):
the table's markup would differ. The reader joins the cell's parts, the row's and the table's
into one block (`Piece.cell`).

Nothing here decides what text a page has; a wrong cut could only move a block boundary, and
`tests/test_html_pieces.py` compares every piece-wise parse against the whole
(`scripts/fuzz_html_pieces.py` on random pages too).
"""

import mmap
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from html import unescape
from html.entities import html5
from typing import NamedTuple

from selectolax.lexbor import LexborHTMLParser

from indx_assets.pipeline.readers.html_attrs import READ_IN_MARKUP

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
#: Start tags that leave SVG/MathML (the HTML standard's breakout list; a `font` too, with a
#: `color`, `face` or `size` attribute: `_breaks_out`). (The rest are SVG/MathML elements there,
#: those the tokenizer reads as raw text in HTML too: SVG's `style` holds markup.)
_BREAKOUT = frozenset(
    b"b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu meta"
    b" nobr ol p pre ruby s small span strong strike sub sup table tt u ul var".split()
)
#: SVG/MathML elements whose content the parser reads by the body's rules, as HTML (the HTML
#: standard's integration points: SVG's `foreignObject`, `desc` and `title`, MathML's
#: `annotation-xml` with some encodings, and MathML's text elements, `mi` and the like, all but
#: their `mglyph` and `malignmark`). Their text is text; the scan stops at a start tag in them
#: (an HTML `<form>` there may clear the form pointer, an `a` drop the one open around the SVG).
_MATHML_TEXT = frozenset(b"mi mo mn ms mtext".split())
_INTEGRATION_POINTS = _MATHML_TEXT | frozenset(b"foreignobject desc title annotation-xml".split())
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
    b" h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre listing search section summary ul xmp li dd dt".split()
)
_HEADINGS = frozenset(b"h1 h2 h3 h4 h5 h6".split())
#: Where the default scope stops a search down the stack, and button scope too. (A `select` too,
#: as Lexbor parses it: in the body's rules, with what it holds, since the standard let it hold
#: more than options.)
_SCOPE = frozenset(b"applet caption html table td th marquee object template select".split())
_BUTTON_SCOPE = _SCOPE | {b"button"}
#: The scope an end tag's element must be in to be closed (else the tag is ignored; an empty `p`
#: opened and closed for `</p>`): the default scope, but these. (`</form>` closes the form the
#: pointer points to: `_Scan._end`.)
_END_TAG_SCOPE = {b"p": _BUTTON_SCOPE, b"li": _SCOPE | {b"ol", b"ul"}}
#: The HTML standard's special elements (those the scan can hold): where `li`'s and `dd`'s
#: search for an open item to close stops (but not at address, div or p).
_SPECIAL = frozenset(
    b"address applet article aside blockquote body button caption center colgroup dd details dialog dir div dl dt"
    b" fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup html li listing main marquee menu nav"
    b" noscript object ol p pre search section select summary table tbody td template tfoot th thead tr ul".split()
)
_ITEM_SEARCH_STOP = _SPECIAL - {b"address", b"div", b"p"}
#: End tags that close their element with whatever implied elements stand above it (the rest
#: close only the current node, or run the adoption agency).
_CLOSES_IMPLIED = frozenset(
    b"address article aside blockquote button center details dialog dir div dl fieldset figcaption figure footer"
    b" header hgroup listing main menu nav ol pre search section summary ul p li dd dt h1 h2 h3 h4 h5 h6 form select td"
    b" th tr table applet marquee object".split()
)
#: Start tags that act on an open element of the same name in scope: a nested button closes the
#: open one, `a` and `nobr` run the adoption agency for it. One still in scope once they have is
#: not followed; one out of scope (below a cell, a caption, an `object`: `<a><table><td><a>`)
#: stays open, as the new one opens. A nested form is followed: see `_Scan._start_ignored`.
_NOT_NESTED = frozenset(b"a nobr button".split())
#: Ruby's base and text elements: their start tags close the implied elements above a `ruby`
#: in scope (`_Scan._close_implied`).
_RUBY = frozenset(b"rb rp rt rtc".split())
#: Containers a piece may open again (`_Scan._reopen`): the walk reads each as a block of text.
#: A form too (ASP.NET wraps a whole page in one): reopened, it sets the parser's form element
#: pointer as in place, where the open form set it (`_Scan._start_ignored`).
#: What follows a form's start tag a piece opens again where the pointer does not point to it:
#: `</form>` in an `object` (a scope's boundary) clears the pointer and leaves the form open; the
#: walk skips an object.
_POINTER_CLEARED = b"<object></form></object>"
#: What sets the form pointer where the form it points to is no longer open: a form in a
#: `button`, whose close pops it (the pointer stays set); the walk skips a button.
_POINTER_SET = b"<button><form></button>"
_REOPENABLE = frozenset(
    b"div section article header footer main aside nav blockquote center figure address ul ol dl form".split()
)
#: The HTML standard's formatting elements: each start tag pushes its element on the stack and
#: on the list of active formatting elements, which the parser reconstructs where an element
#: stands in the list but no longer on the stack. A piece may open them again by their start tags
#: (`_Scan._reopen`): see `_Scan._formatting_start` for why that rebuilds the same list.
_FORMATTING = frozenset(b"a b big code em font i nobr s small strike strong tt u".split())
#: Phrasing elements a piece may open again as formatting ones (`_Scan._reopen`): the walk reads
#: them as inline text, and the parser gives them nothing but a place on the stack (none is
#: special, a scope's boundary, a formatting element or closed implicitly).
_INLINE = frozenset(b"abbr bdi bdo cite data del dfn ins kbd label mark q samp span sub sup time var".split())
#: Elements whose end tag the body reads as "any other end tag" (it closes the element with
#: what stands above it, or is ignored past a special element), which the scan follows.
_ANY_OTHER_END = _INLINE | _RUBY | frozenset(b"ruby option optgroup".split())
#: What may stand open around a word of text where a piece is cut (`_Scan._text_reopen`), and
#: innermost in a table's cell (`_Scan._cell_cut`).
_AROUND_TEXT = _FORMATTING | _INLINE
_AROUND_CELL_TEXT = _AROUND_TEXT | {b"td", b"th"}
#: Start tags that do not make the parser "reconstruct the active formatting elements" in the
#: body (the HTML standard's "in body" rules; text does, whitespace too, and every other start
#: tag), as Lexbor has them (`dialog`, `search`, `rb`, `rtc` and `template` too:
#: `tests/test_html_pieces.py` holds it to that). (`noscript` reconstructs them: with scripting off,
#: as Lexbor parses, it is "any other start tag".)
_NO_RECONSTRUCT = frozenset(
    b"address article aside base basefont bgsound blockquote body caption center col colgroup dd details dialog dir"
    b" div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html"
    b" iframe li link listing main menu meta nav noembed noframes ol p param plaintext pre rb rp rt rtc script search"
    b" section source style summary table tbody td template textarea tfoot th thead title tr track ul".split()
)
#: One attribute of a start tag: its name, and its value quoted or not (the Noah's Ark clause
#: compares elements by their attributes' names and values, in any order).
_ATTR = re.compile(rb"([^" + _WS + rb"/>][^" + _WS + rb"/>=]*)(?:[" + _WS + rb"]*=[" + _WS +
                   rb"]*(?:\"([^\"]*)\"|'([^']*)'|([^" + _WS + rb">]*)))?")
#: The most elements the scan follows open at once. Past it, it stops proposing cuts: each piece
#: opens again what is open (the Noah's Ark clause bounds formatting elements, nothing bounds
#: `span`s), and each tag costs the scan a look down its stack, so a page of thousands of nested
#: elements would cost every piece, and the scan, in proportion to its depth.
_MAX_OPEN = 512
#: Start tags a template's content reads by the head's rules, which leave its mode as it is.
_HEAD_RULES = frozenset(b"base basefont bgsound link meta noframes script style template title".split())
#: Elements that push a marker on the list of active formatting elements: the Noah's Ark clause
#: counts entries only back to the last marker.
_MARKERS = frozenset(b"applet caption marquee object td template th".split())
#: What a list's items start with: a cut may fall before one.
_ITEMS = {b"ul": frozenset({b"li"}), b"ol": frozenset({b"li"}), b"dl": frozenset({b"dt", b"dd"})}
#: A table's row groups, and the elements of a table's insertion modes (the HTML standard's "in
#: table", "in table body", "in row", "in cell", "in caption", "in column group").
_SECTIONS = frozenset(b"tbody thead tfoot".split())
_TABLE_CONTEXT = _SECTIONS | frozenset(b"table caption colgroup tr td th".split())
#: Start tags a table's modes act on; in the body, with no table open, the parser ignores them.
_TABLE_STRUCTURE = _SECTIONS | frozenset(b"caption col colgroup tr td th".split())
_TABLE_ANY = _TABLE_STRUCTURE | {b"table"}
#: End tags a table's modes ignore (the cell's and caption's modes ignore fewer: see `_table_end`).
_TABLE_IGNORED_ENDS = _TABLE_STRUCTURE | frozenset(b"body html".split())
#: Where the current node is one of these, text other than whitespace and any tag a table's
#: modes do not place in the table go before the table (foster parenting).
_FOSTERING = _SECTIONS | frozenset(b"table tr colgroup".split())
#: Void elements the body's rules insert (and pop) wherever a table's modes give them to it:
#: foster-parented, they leave nothing open (`hidden` inputs the table holds itself; a `col` is its own).
_FOSTERED_VOID = _VOID - {b"col"}
#: Start tags placed in the table itself from those modes (raw text, so nothing stays open).
_IN_TABLE_RAW = frozenset(b"script style".split())
#: Elements the body's rules open where a table's modes give them the tag, followed while they
#: stay open: foster-parented before the table, with what goes into them, until a tag of the
#: table's own clears the stack back to it (`_Scan._foster_parented`). Formatting elements (their
#: entries stay in the list, and the reconstruction after the table opens them again), and
#: elements the parser gives nothing but a place on the stack, closed by their own end tag or by
#: the body's implied closes (blocks, items, headings, `p`, a `button`, a `pre`, in whose text no
#: cut falls there: `_Scan._pre_reopen`; phrasing elements; a select and its options): not a form
#: (the table's own rule inserts it and closes it at once), a template or an element that pushes
#: a marker.
_FOSTERED_OPEN = _FORMATTING | (_REOPENABLE - {b"form"}) | _INLINE | _HEADINGS | frozenset(
    b"p li dd dt button pre select option optgroup".split())
#: Elements a cell's or caption's close must not pop: `applet`, `marquee` and `object` push a
#: marker on the list of active formatting elements, and the close clears that list only back
#: to their marker, so a formatting element opened before them in the cell is reconstructed after
#: the table (the HTML standard's "clear the list of active formatting elements up to the last
#: marker"). `_IN_CELL` leaves them out for the same reason.
_UNCLOSABLE_IN_CELL = frozenset(b"applet marquee object".split())
#: The rest of a table's row, from after its start tag to the next row's (a lookahead), when it
#: holds nothing but whitespace and cells of text and of tags whose effect stays in the cell (the
#: cell's close, which the next row's start makes, pops them and clears their formatting): read
#: at once, in place of a token at a time (`_Scan.cuts`). Anything else (a comment, raw text,
#: another table, a form, SVG, a lone `<`, text between cells), or a row longer than a piece
#: (a cut may fall in its cell), fails the match: the scan reads the row token by token.
_IN_CELL = (
    rb"(?:a|abbr|b|bdi|bdo|big|br|cite|code|data|del|dfn|em|font|i|img|ins|kbd|mark|nobr|q|s|samp|small|span"
    rb"|strike|strong|sub|sup|time|tt|u|var|wbr|p|div|center|ul|ol|li|dl|dt|dd|hr|h[1-6]|blockquote|address)"
)
_ROW_REST = re.compile(
    rb"[" + _WS + rb"]*+(?:<t[dh](?=[" + _WS + rb"/>])" + _ATTRS + rb">"
    rb"(?>[^<]++|<" + _IN_CELL + rb"(?=[" + _WS + rb"/>])" + _ATTRS + rb">|</" + _IN_CELL + rb"[" + _WS + rb"]*>)*+"
    rb"(?:</t[dh][" + _WS + rb"]*>[" + _WS + rb"]*+)?)*+"
    rb"(?:</tr[" + _WS + rb"]*>[" + _WS + rb"]*+)?(?=<tr[" + _WS + rb"/>])",
    re.I,
)
#: A `frameset` start tag replaces the body where the parser has seen nothing that rules it out
#: (the frameset-ok flag), which a piece parsed alone has not: a page with one is not cut.
_FRAMESET = re.compile(rb"<frameset", re.I)
_NOT_WS = re.compile(rb"[^" + _WS + rb"]")
_NOT_NUL = re.compile(rb"[^\0]")
_WORD_AFTER_SPACE = re.compile(rb"[" + _WS + rb"][A-Za-z0-9]")
_SELF_CLOSING = re.compile(rb"(?:^|[" + _WS + rb"\"'])/+$")


class _Entry:
    """An entry of the parser's list of active formatting elements: the element's name, its
    start tag (what opens it again), what the Noah's Ark clause compares it by (`key`: None for
    a marker, which a cell, caption, object and the like push), where its element is on the
    stack (`depth`) while it is there (`on`), and whether it is still in the list (`listed`: the
    Noah's Ark clause drops an entry whose element may stay on the stack)."""

    __slots__ = ("name", "tag", "key", "depth", "on", "listed")

    def __init__(self, name: bytes, tag: bytes, key: tuple[bytes, ...] | None, depth: int) -> None:
        self.name, self.tag, self.key, self.depth = name, tag, key, depth
        self.on = self.listed = True


_CHAR_REF = re.compile(r"&(?:#([xX][0-9A-Fa-f]+|[0-9]+);?|([A-Za-z][A-Za-z0-9]*;?))")
_ALNUM_OR_EQUALS = frozenset("=0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _references_decoded(text: str, in_attribute: bool) -> str:
    """`text` with its character references decoded as the tokenizer decodes them: a numeric one
    to its code point (U+FFFD for 0, a surrogate or past U+10FFFF; 0x80 to 0x9F by the HTML
    standard's Windows-1252 table; a control character or noncharacter kept, which Python's
    `html.unescape` drops); a named one by the longest name the standard lists that starts it,
    but in an attribute's value, where that name lacks its `;` (a legacy one: `&amp`, `&not`)
    and a letter, a digit or `=` follows it, left as written (`?a=1&copy=2` keeps `&copy`)."""

    def decoded(ref: re.Match[str]) -> str:
        number, name = ref[1], ref[2]
        if number is not None:
            hexadecimal = number[0] in "xX"
            digits = (number[1:] if hexadecimal else number).lstrip("0")
            if len(digits) > 8:
                code = 0x110000  # past the last code point (and no int() of a hostile run of digits)
            else:
                code = int(digits or "0", 16 if hexadecimal else 10)
            if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                return "\ufffd"
            return unescape(ref[0]) if 0x80 <= code <= 0x9F else chr(code)
        for end in range(len(name), 0, -1):
            if name[:end] in html5:
                follows = name[end : end + 1] or text[ref.end() : ref.end() + 1]
                if in_attribute and name[end - 1] != ";" and follows in _ALNUM_OR_EQUALS:
                    return ref[0]
                return html5[name[:end]] + name[end:]
        return ref[0]

    return _CHAR_REF.sub(decoded, text) if "&" in text else text


def _attribute_value(raw: bytes) -> bytes:
    """An attribute's value as the tokenizer reads it (its character references decoded)."""
    if b"&" not in raw:
        return raw
    return _references_decoded(raw.decode("utf-8", "surrogateescape"), in_attribute=True).encode(
        "utf-8", "surrogateescape")


@lru_cache(maxsize=64)
def _table_closes_p(doctype: bytes) -> bool:
    """Whether a `table` start tag closes an open `p` behind this DOCTYPE (the document is not in
    quirks mode), as Lexbor, which parses every piece behind it, decides the mode: the HTML
    standard's lists of public and system identifiers are its business."""
    return LexborHTMLParser(doctype.decode("utf-8", "replace") + "<p><table></table>").css_first("p table") is None


#: What changes the tokenizer's state in a script's text, in each of its states (see `_script_end`).
_SCRIPT_END = rb"</script[" + _WS + rb"/>]"
_IN_SCRIPT = re.compile(rb"<!--|" + _SCRIPT_END, re.I)
_IN_ESCAPED_SCRIPT = re.compile(rb"-->|" + _SCRIPT_END + rb"|<script[" + _WS + rb"/>]", re.I)
_IN_DOUBLE_ESCAPED_SCRIPT = re.compile(rb"-->|" + _SCRIPT_END, re.I)


def _script_end(source: Source, at: int) -> int | None:
    """Where the script whose text starts at `at` ends (its end tag's `<`), as the tokenizer's
    script data states read it: `<!--` escapes the text, and a `<script` in escaped text
    double-escapes it, where `</script>` only takes it back to escaped (old pages'
    `<!-- document.write('<script ...></script>') //-->`); `-->` ends either. None where it
    never ends."""
    state = _IN_SCRIPT
    while (found := state.search(source, at)) is not None:
        token = found[0]
        if token == b"-->":
            state, at = _IN_SCRIPT, found.end()
        elif token == b"<!--":
            state, at = _IN_ESCAPED_SCRIPT, found.start() + 2  # its dashes may end it: `<!-->`
        elif token[1:2] != b"/":
            state, at = _IN_DOUBLE_ESCAPED_SCRIPT, found.end()
        elif state is _IN_DOUBLE_ESCAPED_SCRIPT:
            state, at = _IN_ESCAPED_SCRIPT, found.end()
        else:
            return found.start()
    return None


def _breaks_out(name: bytes, attrs: bytes) -> bool:
    """Whether a start tag in SVG/MathML leaves it: the parser reads it as HTML (`_BREAKOUT`)."""
    if name == b"font":
        return any(attr[1].lower() in (b"color", b"face", b"size") for attr in _ATTR.finditer(attrs))
    return name in _BREAKOUT


def _hidden_input(tag: bytes) -> bool:
    """Whether an `input` start tag's type is `hidden` (its first `type` attribute, ASCII case
    ignored): a table's modes insert such an input in the table, and foster-parent any other."""
    for attr in _ATTR.finditer(tag, 6):  # past `<input`
        if attr[1].lower() == b"type":
            return _attribute_value(attr[2] or attr[3] or attr[4] or b"").lower() == b"hidden"
    return False


def _table_whitespace(text: bytes) -> bool:
    """Whether text a table's modes read is whitespace to them, which insert it in the table and
    foster-parent any other (character references decoded, NULs dropped there: `&#32;`)."""
    return not _references_decoded(text.decode("utf-8", "replace").replace("\0", ""), in_attribute=False).strip(
        "\t\n\f\r ")


def _reopening(tag: bytes) -> bytes | None:
    """A start tag as a piece may open its element again with: itself, unless it has an
    attribute the walk reads (`READ_IN_MARKUP`), which a piece that opened it again would read twice."""
    # (none fits in fewer than 10 bytes, `<a hidden>`: a table's `<td>`, `<tr>` need no search)
    return None if len(tag) >= 10 and READ_IN_MARKUP.search(tag) else tag


@lru_cache(maxsize=1024)  # a page repeats a few start tags: `<font face=Arial size=2>` in every `p`
def _key(name: bytes, attrs: bytes) -> tuple[bytes, ...]:
    """What the Noah's Ark clause compares a formatting element by: its name and attributes
    (names lower-cased, the first of a name kept, values with their character references
    decoded, sorted)."""
    seen: dict[bytes, bytes] = {}
    for attr in _ATTR.finditer(attrs):
        seen.setdefault(attr[1].lower(), _attribute_value(attr[2] or attr[3] or attr[4] or b""))
    return (name, *sorted(b"%s=%s" % item for item in seen.items()))


class _Scan:
    """The tokenizer's view of a document, token by token, the stack of open elements and the
    list of active formatting elements."""

    def __init__(self, source: Source, released: Callable[[int], None] | None = None) -> None:
        self.source = source
        self.released = released
        self.stack: list[bytes] = []
        self.foreign = 0  # how many of the open elements are SVG/MathML
        #: the parser's form element pointer is set (to an open form, or one a close has popped),
        #: and where the form it points to stands on the stack while it is there (a form opened in
        #: a template, or SVG's, may stand above it)
        self.form_pointer = False
        self.pointed: int | None = None
        #: for each element taken off the stack from under open elements (`_take_out`: a form
        #: `</form>` closed, an `a` another one dropped), the depth from which those stand in it
        self.taken_out: list[int] = []
        #: the content of the open template (the outermost) has had an element that pushes a
        #: marker, a formatting element; whether a start tag has picked each open template's mode
        self.template_marked = False
        self.template_formatted = False
        self.template_decided: list[bool] = []
        self.doctype = b""
        self.seen_token = False  # a DOCTYPE counts only as the first token
        self.trusted = True
        #: the list of active formatting elements (markers too), and the entries whose element
        #: is on the stack, in the stack's order (`_truncate` takes them off as it pops); how
        #: many of those the Noah's Ark clause has dropped from the list
        self.active: list[_Entry] = []
        self.on_stack: list[_Entry] = []
        self.unlisted = 0
        #: each open element's start tag where a piece may open it again (`_REOPENABLE`, a table
        #: and its row group), else None; only the first `len(stack)` are the open elements' (a
        #: push overwrites past them)
        self.tags: list[bytes | None] = []
        #: the last start tag opened a row right in a row group, before which a piece may begin
        #: (see `_row_cut`), set by `_table_start`
        self.row_opened = False
        #: cuts inside the open table, held until it closes (see `cuts`), and where it is on the stack
        self.pending: list[Cut] = []
        self.pending_table = 0
        #: where the last cell not in another's table opened, and how many of the open elements
        #: stand where they did at the last cut held in it, at least (see `_furthest_block`)
        self.cell_at = 0
        self.cut_low = 0
        self.tables_at: list[tuple[int, int]] = []  # each open table: where it is on the stack, where it starts
        #: the scan stopped at a token that runs to the document's end, which the parser drops
        #: (a tag) or puts where it stands (a comment, raw text): nothing is foster-parented
        self.to_end = False

    def cuts(self, every: int) -> Iterator["Cut"]:
        """Where the document may be cut (`Cut`: see `_reopen`, `_row_cut`, `_pre_reopen`); the
        first at least `every` bytes in and each next at least `every` bytes after the one
        before; none once the scan cannot vouch.

        A cut between a table's rows is told only once the table has closed (or the document
        ended), and not where the table foster-parents something after it (`_foster`): what a
        table foster-parents goes before the whole table, which a piece parsed alone would put
        before its own part of it."""
        source, at, last = self.source, 0, 0
        while self.trusted:
            yield from self._held_cuts()
            lt = self._next_lt(at)
            text_end = len(source) if lt < 0 else lt
            if not self.seen_token and _NOT_WS.search(source, at, text_end):
                self.seen_token = True  # text: a DOCTYPE after it is ignored
            if at < text_end and self._fostering() and _NOT_WS.search(source, at, text_end) and \
                    not _table_whitespace(source[at:text_end]):
                self._foster()  # text, before the table
                if not self.trusted:
                    break
            if at < text_end and self._pending() and _NOT_NUL.search(source, at, text_end):
                # text, whitespace too (not NULs, which the body drops), opens the elements off the stack again
                self._reconstruct()
            if text_end - last >= every and (not self.stack or self.stack[-1] in _AROUND_TEXT) and \
                    (reopen := self._text_reopen()) is not None:
                # a word after whitespace in text directly in the body (or in formatting or phrasing elements)
                start = max(at, last + every - 1)
                while (word := _WORD_AFTER_SPACE.search(source, start, text_end)) is not None:
                    last = word.start() + 1
                    yield Cut(last, reopen)
                    start = last + every - 1
            elif text_end - last >= every and self.stack and self.stack[-1] in _AROUND_CELL_TEXT and \
                    (cell := self._cell_cut(at)) is not None:
                # the same in a table's cell, held as the cuts before its blocks are
                start = max(at, last + every - 1)
                while (word := _WORD_AFTER_SPACE.search(source, start, text_end)) is not None:
                    last = word.start() + 1
                    self._hold(cell._replace(at=last), self._table_context() - 3)
                    self.cut_low = len(self.stack)
                    start = last + every - 1
            elif self.stack[-1:] == [b"pre"] and not self.foreign and text_end - last >= every and \
                    (reopen := self._pre_reopen()) is not None:
                # after a line's end in the text of a `pre` with nothing open in it
                start = max(at, last + every - 1)
                while (line := source.find(b"\n", start, text_end)) >= 0 and line + 1 < len(source):
                    last = line + 1
                    yield Cut(last, reopen, pre=True)
                    start = last + every - 1
            if lt < 0:
                break
            token = _TOKEN.match(source, lt)
            if token is None:
                # a tag, comment or the like that never ends; or a lone `<`, text, which a
                # table foster-parents
                self.to_end = _TAG_START.match(source, lt) is not None
                if self.to_end:
                    self.trusted = False
                    break
                if self._fostering():
                    self._foster()
                    if not self.trusted:
                        break
                if self._pending():
                    self._reconstruct()
                at = lt + 1
                self.seen_token = True
                continue
            if token["start"] is not None:
                name = token["start"].lower()
                if self.foreign and _breaks_out(name, token["attrs"]):
                    self._leave_foreign()
                    if not self.trusted:
                        break
                if self._in_template():
                    at = self._template_start(name, token["attrs"], token.end(), lt)
                elif not self.foreign and self._table_start(name, token[0]):
                    at = token.end()
                    if name in (b"td", b"th") and len(self.tables_at) == 1:
                        self.cell_at = lt  # a cell a cut may fall in: not in another's table
                    if name == b"tr" and self.trusted and self.stack[-1:] == [b"tr"] and \
                            (row := _ROW_REST.match(source, at, at + every)) is not None:  # a row opened in a table
                        at = row.end()  # to the next row's start, which closes this one (a longer row
                        # is read a token at a time: it may be cut in its cell)
                    if self.row_opened and lt - last >= every and self.trusted and \
                            (row_cut := self._row_cut()) is not None:
                        last = lt
                        self._hold(Cut(lt, *row_cut), len(self.stack) - 3)  # below its row group and the row
                elif not self.foreign and self._start_ignored(name):
                    at = token.end()  # no element, no `p` closed: the parser ignores the tag
                else:
                    if not self.foreign:
                        self._close_implied(name, token["attrs"])
                        if not self.trusted:
                            break
                    yield from self._held_cuts()  # a `table` start tag has closed the table: before its own cut
                    if lt - last < every:
                        pass
                    elif (cell := self._cell_cut(lt, name, token["attrs"])) is not None:
                        last = lt
                        self._hold(cell, self._table_context() - 3)  # below its row group, row and cell
                        self.cut_low = len(self.stack)
                    elif (reopen := self._reopen(name, token["attrs"])) is not None:
                        last = lt
                        yield Cut(lt, reopen)
                    depth = len(self.stack)
                    at = self._start(name, token["attrs"], token.end(), lt)
                    if name == b"table" and len(self.stack) > depth:
                        self.tables_at.append((depth, lt))
                    if len(self.stack) > _MAX_OPEN:
                        self.trusted = False
                    elif len(self.stack) > depth:
                        del self.tags[depth:]
                        reopenable = name in _REOPENABLE or name in _AROUND_TEXT or name in (b"table", b"pre")
                        reopenable = reopenable and not READ_IN_MARKUP.search(token["attrs"])
                        self.tags.append(token[0] if reopenable else None)
            elif token["end"] is not None:
                name = token["end"].lower()
                if self.foreign and name in (b"p", b"br"):
                    self._leave_foreign()  # (as a start tag that breaks out)
                    if not self.trusted:
                        break
                if self._in_template():
                    if name == b"template":  # (the rest close only what is in it)
                        self._template_end()
                elif self.foreign or not self._table_end(name):
                    self._end(name)
                at = token.end()
            elif token["bang"] is not None and token["bang"][:8].lower() == b"!doctype" and not self.seen_token:
                self.doctype = token[0]
                at = token.end()
            elif token["bang"] is not None and token["bang"].startswith(b"![CDATA[") and self.foreign:
                close = source.find(b"]]>", lt)
                if close < 0:
                    self.trusted = False
                    break
                at = close + 3
            else:
                # comments, processing instructions and the like: the initial mode inserts them
                # and still reads a DOCTYPE after them (`<?xml ...?><!DOCTYPE ...>`)
                at = token.end()
                continue
            self.seen_token = True
        if self.trusted or self.to_end:
            yield from self.pending  # the document ends inside the table: so does the parse

    def _hold(self, cut: "Cut", table: int) -> None:
        """Hold a cut inside the open table, at `table` on the stack, until it closes (see `cuts`)."""
        self.pending.append(cut)
        self.pending_table = table
        if self.released is not None:
            self.released(cut.at)  # read ahead to the table's end: read again when cut

    def _next_lt(self, at: int) -> int:
        """Where the next `<` from `at` is (where the text there ends: a tag's start, or a `<` of
        the text), -1 when none is. A map is searched `PIECE_BYTES` at a time (whatever the
        pieces' size), each step's pages let go as it is passed (read again when cut): a `pre`
        of a long log has no `<` until its end, and its pages, searched whole, stayed in memory
        until the pieces before its end were cut."""
        source, released = self.source, self.released
        if released is None:
            return source.find(b"<", at)
        while (lt := source.find(b"<", at, at + PIECE_BYTES)) < 0 and at + PIECE_BYTES < len(source):
            at += PIECE_BYTES
            released(at)
        return lt

    def _held_cuts(self) -> list["Cut"]:
        """The cuts held in a table that has closed since (then no longer held), else none."""
        if self.pending and len(self.stack) <= self.pending_table:
            held, self.pending = self.pending, []
            return held
        return []

    def _in_template(self) -> bool:
        """Whether the tokens go into a template's content: an HTML `template` is the current node.
        Nothing in a template reaches out of it (it is a special element, a boundary of every
        scope, and a marker in the list of active formatting elements), and its end tag closes
        all it holds, so the scan opens nothing in it but what changes how the tokenizer reads
        (`_template_start`): above a template, only a template or SVG/MathML stands open."""
        return not self.foreign and self.stack[-1:] == [b"template"]

    def _template_start(self, name: bytes, attrs: bytes, at: int, tag_start: int) -> int:
        """Follow a start tag in a template's content (see `_in_template`): a template nested in
        it, raw text, SVG/MathML, and what stops the scan; the rest opens nothing the scan keeps.
        The content's first start tag but the head's picks the template's mode: a `col` picks a
        column group's, which ignores every later start tag but `col`'s and `template`'s (a
        `<style>` opens no raw text there): the scan stops at it."""
        if name not in _HEAD_RULES:
            if not self.template_decided[-1] and name == b"col":
                self.trusted = False
                return at
            self.template_decided[-1] = True
        if name == b"template" or name in _RAW_TEXT or name in _FOREIGN or name in _NEVER:
            return self._start(name, attrs, at, tag_start)
        if name in _MARKERS:
            self.template_marked = True  # a cell, an `object`...: see `_template_end`
        elif name in _FORMATTING:
            self.template_formatted = True
        return at

    def _template_end(self) -> None:
        """`</template>`: it closes all the template holds, then clears the list of active
        formatting elements back to its last marker: the template's own, unless an element of
        its content that pushes one (a cell, an `object`...) is still open, whose marker goes
        instead; the template's then stays in the list (`<template><td></template>`: Lexbor does
        as the standard says), and so do the formatting elements its content listed before that
        element, off the stack (`<template><b><object></template>x` puts `x` in a `b`). The scan,
        which opens nothing in the template, cannot tell: where its content had such an element
        and a formatting element, or the list holds one before the template's marker, it stops
        (the stale marker would hide that one from the parser's later steps); with none, a stale
        marker changes nothing the parser does after."""
        self.template_decided.pop()
        if b"template" not in self.stack[:-1]:  # the outermost: a nested one's markers are within it
            marked, self.template_marked = self.template_marked, False
            formatted, self.template_formatted = self.template_formatted, False
            if marked and (formatted or any(entry.key is not None for entry in self.active[:-1])):
                self.trusted = False
                return
        self._truncate(len(self.stack) - 1)

    def _leave_foreign(self) -> None:
        """A start tag that breaks out of SVG/MathML (`_breaks_out`), or `</p>` or `</br>` there: the
        parser pops the SVG/MathML elements, then reads the tag as HTML. It stops popping at an
        integration point, which the scan does not follow."""
        if not _INTEGRATION_POINTS.isdisjoint(self.stack[len(self.stack) - self.foreign :]):
            self.trusted = False
        else:
            self._truncate(len(self.stack) - self.foreign)
            self.foreign = 0

    def _fostering(self) -> bool:
        """Whether the parser would foster-parent text or a tag it does not place in a table:
        the current node is a table, its row group, a row or a column group."""
        return bool(self.stack) and not self.foreign and self.stack[-1] in _FOSTERING

    def _foster(self, reconstructs: bool = True) -> None:
        """Follow what the open table foster-parents: text (not whitespace: `_table_whitespace`),
        a void element (not a hidden `input`: `_hidden_input`), raw text other than a script or
        style (which the table holds), `</p>` (an empty `p`), an element
        the scan follows open there (`_FOSTERED_OPEN`). It goes before the whole table, which a
        piece cut inside the table would put before its own part of it: the cuts held in the
        table so far, and one before it in a cell, are dropped. A column group's mode closes the
        group first. Where the body's rules for it `reconstructs` the formatting elements off the
        stack, they are foster-parented too and left open above the table's own elements
        (`_foster_parented`)."""
        if self.stack[-1] == b"colgroup":
            self._truncate(len(self.stack) - 1)
        if self.pending:  # (those before it hold, in the cell around it)
            self.pending = [cut for cut in self.pending if cut.at < (self.tables_at[-1][1] if self.tables_at else 0)]
        active = self.active
        if reconstructs and active and active[-1].key is not None and not active[-1].on:
            self._reconstruct()

    def _foster_parented(self) -> int:
        """Where the table's own element stands on the stack (the table, its row group, its row)
        when elements it foster-parented are open above it, else -1. A table's modes give the
        body's rules what they do not place themselves, and the body's rules insert into the
        current node: into those elements, before the table, until a tag of the table's own
        clears the stack back to its element (`_clear_fostered`)."""
        context = self._table_context()
        if context < 0 or context == len(self.stack) - 1 or self.stack[context] in (b"td", b"th", b"caption"):
            return -1
        return context

    def _clear_fostered(self, context: int) -> None:
        """"Clear the stack back to a table context" (or a row group's, or a row's), as a table's
        own start or end tag does first: the foster-parented elements above `context` close, their
        entries left in the list off the stack. Only `_FOSTERED_OPEN` are followed there."""
        if any(name not in _FOSTERED_OPEN for name in self.stack[context + 1 :]):
            self.trusted = False
        else:
            self._truncate(context + 1)

    def _point_to_form(self, open_: bool) -> None:
        """Set the form pointer to a form just opened (`open_`: on the stack) or closed at once (in
        a table)."""
        self.form_pointer = True
        self.pointed = len(self.stack) - 1 if open_ else None

    def _start_ignored(self, name: bytes) -> bool:
        """Whether the parser ignores this start tag in the body: a `form` while its form element
        pointer is set (else a form start tag sets it: `_start`), a `select` while one is in
        scope, which it closes first."""
        if name == b"select" and self._in_scope(b"select"):
            self._pop_through(frozenset({b"select"}), _SCOPE)
            return True
        return name == b"form" and self.form_pointer

    def _push(self, name: bytes, tag: bytes | None) -> None:
        del self.tags[len(self.stack):]
        self.tags.append(tag)
        self.stack.append(name)
        if name == b"template":
            self.template_decided.append(False)
        if name in _MARKERS:
            self._listed(_Entry(name, b"", None, len(self.stack) - 1))

    def _listed(self, entry: _Entry) -> None:
        """Put an entry, its element just pushed, at the end of the list."""
        self.active.append(entry)
        self.on_stack.append(entry)

    def _truncate(self, depth: int) -> None:
        """Pop the open elements from `depth` up, as the parser does: a formatting element's
        entry stays in the list, off the stack; a marker's element (a cell, a caption, an
        object...) clears the list back to its marker (a close pops one only so)."""
        if self.pointed is not None and depth <= self.pointed:
            self.pointed = None
        del self.stack[depth:]
        if depth < self.cut_low:
            self.cut_low = depth
        while self.tables_at and self.tables_at[-1][0] >= depth:
            self.tables_at.pop()
        if self.taken_out:
            self.taken_out = [taken for taken in self.taken_out if taken < depth]
        on_stack = self.on_stack
        while on_stack and on_stack[-1].depth >= depth:
            entry = on_stack.pop()
            entry.on = False
            if not entry.listed:
                self.unlisted -= 1
            elif entry.key is None:
                while self.active.pop() is not entry:
                    pass

    def _unlist(self, entry: _Entry) -> None:
        """Drop an entry from the list (its element, if on the stack, stays there)."""
        for i in range(len(self.active) - 1, -1, -1):
            if self.active[i] is entry:
                del self.active[i]
                break
        entry.listed = False
        if entry.on:
            self.unlisted += 1

    def _last_entry(self, name: bytes) -> _Entry | None:
        """The last entry of that name in the list after its last marker."""
        for entry in reversed(self.active):
            if entry.key is None:
                return None
            if entry.name == name:
                return entry
        return None

    def _pending(self) -> bool:
        """Whether the next text, or a start tag not in `_NO_RECONSTRUCT`, makes the parser
        reconstruct the active formatting elements: the list's last entry is an element off the
        stack, and the parser reads it by the body's rules (no SVG/MathML, no table's own modes;
        a template's content is behind its marker)."""
        return bool(self.active) and not self.active[-1].on and self.active[-1].key is not None and \
            not self.foreign and not self._fostering()

    def _reconstruct(self) -> None:
        """"Reconstruct the active formatting elements" (the HTML standard): the entries off the
        stack at the end of the list (after its last entry on the stack, or marker) are opened
        again, in the list's order, each a new element with the same start tag, now on the stack."""
        active = self.active
        first = len(active)
        while first > 0 and active[first - 1].key is not None and not active[first - 1].on:
            first -= 1
        for entry in active[first:]:
            self._push(entry.name, _reopening(entry.tag))
            entry.on, entry.depth = True, len(self.stack) - 1
            self.on_stack.append(entry)
        if len(self.stack) > _MAX_OPEN:
            self.trusted = False

    def _off_stack(self) -> bytes | None:
        """Markup that puts the list's entries off the stack back in the list, off the stack, after
        the start tags that open again what is open (`_open_tags`), or None where the list is not
        what those and this rebuild (a marker in it: see `_off_stack_parts`).
        Where the scan vouches, the list is the formatting elements on the
        stack, in its order, then those off it (what pushes an entry first reconstructs those off
        it; a pop takes the last ones on it off). A `button` holds them: its start tag reconstructs
        nothing (all are on the stack there), each of their start tags pushes its element and entry
        (no fourth of a kind: the page's list has none), and its end tag pops them, as a block's
        close did on the page; the walk skips a button, so the empty one ends no block."""
        parts = self._off_stack_parts()
        return parts[0] if parts is not None and len(parts) == 1 else None

    def _off_stack_parts(self) -> list[bytes] | None:
        """`_off_stack`'s markup for each stretch of the list between its markers (a cell's: the
        stretch after it goes after the cell's start tag and those open in it), or None where the
        list is not what they rebuild: an element on the stack the Noah's Ark clause dropped
        from it; two `a` or `nobr` entries, which Lexbor's adoption agency may leave; an entry
        on the stack after one off it, in a stretch."""
        if self.unlisted or any(sum(e.name == name for e in self.active) > 1 for name in (b"a", b"nobr")):
            return None  # (a second `a` or `nobr` start tag runs the adoption agency first)
        parts: list[bytes] = []
        off: list[bytes] = []
        for entry in self.active:
            if entry.key is None:
                parts.append(b"<button>" + b"".join(off) + b"</button>" if off else b"")
                off = []
            elif not entry.on:
                off.append(entry.tag)
            elif off:
                return None
        parts.append(b"<button>" + b"".join(off) + b"</button>" if off else b"")
        return parts

    def _table_context(self) -> int:
        """Where the innermost open element of a table's modes is on the stack, -1 if none."""
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] in _TABLE_CONTEXT:
                return i
        return -1

    def _close_to(self, at: int) -> None:
        """Close the cell or caption at `at` of the stack and all above it, as the parser does
        (it also clears the formatting elements opened in it); not followed where that would
        pop a form (its pointer stays set), or an element whose marker
        keeps formatting opened in the cell for after the table (`_UNCLOSABLE_IN_CELL`)."""
        if any(name in _UNCLOSABLE_IN_CELL for name in self.stack[at + 1 :]):
            self.trusted = False
        else:
            self._truncate(at)

    def _table_start(self, name: bytes, tag: bytes) -> bool:
        """Follow a start tag as a table's insertion modes do (the HTML standard's "in table",
        "in table body", "in row", "in column group", and a table's tags in a cell or caption,
        which close it first); False where the body's rules read the tag (no table open, or in
        a cell or caption a tag that is not a table's; `script` and `style`, which a table
        holds as the head would). A `table` in a table's own modes closes it first. Where the
        parser would foster-parent (any other tag), the scan stops vouching. A row starting where nothing
        but a row group is open above the table sets `row_opened`."""
        self.row_opened = False
        fostered = self._foster_parented()
        if fostered >= 0 and name not in _TABLE_ANY:
            # the table's modes give the tag to the body's rules, inside what they foster-parented
            if name == b"template":
                self._push(name, None)  # the head's rules: into them, where the table reads on after it
                return True
            if name == b"input" and _hidden_input(tag):
                return True  # the table's own rule: into them, closed at once, nothing reconstructed
            if name in _FOSTERED_OPEN or name in _RAW_TEXT or name in _FOSTERED_VOID:
                return False
            if name == b"form":
                # the table's own rule: a form goes into them, closed at once, where it sets the
                # pointer (ignored while it is set)
                if not self.form_pointer:
                    self._point_to_form(open_=False)
            else:
                self.trusted = False
            return True
        if name not in _TABLE_ANY and not self._fostering():
            return False  # the body's rules, in a cell or caption too (the common case: first)
        context = self._table_context()
        if context < 0 or self.stack[context] in (b"td", b"th", b"caption"):
            if name not in _TABLE_STRUCTURE:
                return False
            if context < 0:
                return True  # ignored in the body
            self._close_to(context)
            if not self.trusted:
                return True
        elif fostered >= 0:
            self._clear_fostered(fostered)
            if not self.trusted:
                return True
        implied = False  # a row group this tag opened: a piece cut before the tag would not hold it
        while True:  # each step reprocesses the tag in the mode the one before left
            top = self.stack[-1] if self.stack else b""
            if name == b"table" and top in _FOSTERING:
                # a table's start closes the open table (its own elements, all that stands above
                # it where the scan vouches), then the mode that leaves reads it: the body's, or
                # a cell's of the table around it
                self._truncate(len(self.stack) - 1 - self.stack[::-1].index(b"table"))
                return False
            if name in _FOSTERED_VOID and top != b"colgroup" and top in _FOSTERING:
                if not (name == b"input" and _hidden_input(tag)):  # the table holds a hidden one itself
                    self._foster(reconstructs=name not in _NO_RECONSTRUCT)
                return True
            if name in _RAW_TEXT and name not in _IN_TABLE_RAW and top != b"colgroup" and top in _FOSTERING:
                self._foster(reconstructs=name not in _NO_RECONSTRUCT)
                return False  # the body's rules read it, before the table: nothing left open
            if name in _FOSTERED_OPEN and top != b"colgroup" and top in _FOSTERING:
                if name == b"a" and (listed := self._last_entry(b"a")) is not None and not listed.on:
                    # the body's rules run the adoption agency for the listed `a` before they
                    # reconstruct, which `_foster` does first: off the stack, it leaves the list
                    # here, before (on the stack, out of scope, it only leaves the stack and the
                    # list: `_close_implied`, after, to the same end)
                    self._unlist(listed)
                self._foster(reconstructs=name not in _NO_RECONSTRUCT)
                return False  # the body's rules open it, before the table
            if name == b"form" and top != b"colgroup" and top in _FOSTERING:
                # ignored while the pointer is set; else the form goes into the table, sets the
                # pointer and closes at once
                if not self.form_pointer:
                    self._point_to_form(open_=False)
                return True
            if name == b"template" and top in _FOSTERING:
                self._push(name, None)  # the head's rules: into the table, which reads on after it
                return True
            if top == b"colgroup":
                if name == b"col":
                    return True  # void
                self._truncate(len(self.stack) - 1)
            elif top == b"table":
                if name in _IN_TABLE_RAW:
                    return False
                if name in (b"tr", b"td", b"th"):
                    self._push(b"tbody", b"<tbody>")  # implied
                    implied = True
                    continue
                if name in _SECTIONS:
                    self._push(name, _reopening(tag))
                elif name in (b"caption", b"colgroup"):
                    self._push(name, None)
                elif name == b"col":
                    self._push(b"colgroup", None)  # implied; `col` is void
                else:
                    self.trusted = False  # foster-parented, left open above the table
                return True
            elif top in _SECTIONS:
                if name in _IN_TABLE_RAW:
                    return False
                if name == b"tr":
                    self.row_opened = not implied
                    self._push(b"tr", _reopening(tag))
                    return True
                if name in (b"td", b"th"):
                    self._push(b"tr", b"<tr>")  # implied
                elif name in _TABLE_STRUCTURE:
                    self._truncate(len(self.stack) - 1)  # closes the row group
                else:
                    self.trusted = False
                    return True
            elif top == b"tr":
                if name in _IN_TABLE_RAW:
                    return False
                if name in (b"td", b"th"):
                    self._push(name, _reopening(tag))
                    return True
                if name not in _TABLE_STRUCTURE:
                    self.trusted = False
                    return True
                self._truncate(len(self.stack) - 1)  # closes the row
            else:
                self.trusted = False  # a table's mode with something else on top: not followed
                return True

    def _table_end(self, name: bytes) -> bool:
        """Follow an end tag as a table's insertion modes do (see `_table_start`); False where
        the body's rules read it."""
        if name not in _TABLE_ANY and not self._fostering():
            return False  # in a cell or caption, the body's rules (which ignore `</body>`, `</html>`)
        context = self._table_context()
        if context < 0:
            return False
        if (fostered := self._foster_parented()) >= 0:
            # what the table foster-parented closes where the table's mode acts on the tag: the
            # table's, its element's (the row group's, the row's), a row's group from the row;
            # the mode ignores the rest (a cell's, a caption's...), which leaves it open
            own = self.stack[fostered]
            if name != b"table" and name != own and not (own == b"tr" and self.stack[fostered - 1] == name):
                return True
            self._clear_fostered(fostered)
            if not self.trusted:
                return True
        current = self.stack[context]
        if current in (b"td", b"th"):
            if name in (b"td", b"th"):
                if name == current:
                    self._close_to(context)
                return True  # the other: not in table scope, ignored
            if name == b"table" or name == b"tr" or name in _SECTIONS:
                table = len(self.stack) - 1 - self.stack[::-1].index(b"table")
                if name in self.stack[table:context]:  # in table scope: closes the cell first
                    self._close_to(context)
                    return not self.trusted or self._table_end(name)
                return True
            return name in (b"body", b"caption", b"col", b"colgroup", b"html")  # ignored
        if current == b"caption":
            if name in (b"caption", b"table"):
                self._close_to(context)
                return name == b"caption" or not self.trusted or self._table_end(name)
            return name in _TABLE_IGNORED_ENDS
        if context != len(self.stack) - 1:
            self.trusted = False
            return True
        if current == b"colgroup":
            if name != b"col":
                self._truncate(len(self.stack) - 1)
                return name == b"colgroup" or self._table_end(name)
        elif name == current:
            self._truncate(len(self.stack) - 1)
        elif name == b"table" or (current == b"tr" and name in _SECTIONS and self.stack[-2] == name):
            self._truncate(len(self.stack) - 1)  # closes the row or row group, then the tag again
            return self._table_end(name)
        elif name not in _TABLE_IGNORED_ENDS:
            self._fostered_end(name)
        return True

    def _fostered_end(self, name: bytes) -> None:
        """An end tag a table's modes give to the body's rules (foster parenting enabled) while the
        current node is the table's own (`_FOSTERING`). Every open element it could close stands
        below the table, out of every scope (the table bounds them all) and past the special
        element the standard's "any other end tag" stops at (the current node), so the tag is
        ignored (`<center><table></center>`: old pages close a wrapper early), but these: a
        formatting element's drops its entry from the list where that entry is off the stack (the
        adoption agency's first check); `</p>` and `</br>` insert an element that closes at once,
        foster-parented (`_foster`); `</form>` clears the form pointer."""
        if name in (b"p", b"br"):
            self._foster(reconstructs=name == b"br")  # `</br>` is a `<br>`; `</p>`, an empty `p`, reconstructs none
        elif name == b"form":
            self.form_pointer = False
        elif name in _FORMATTING and (entry := self._last_entry(name)) is not None and not entry.on:
            self._unlist(entry)

    def _open_tags(self, depth: int | None = None) -> list[bytes] | None:
        """The start tags of the open elements (those below `depth`), in the stack's order, or
        None where one has none to be opened again by (`tags`: not reopenable, or with an
        attribute the walk reads). A
        form's is followed by `_POINTER_CLEARED` where the pointer does not point to it (a
        `</form>` out of its scope cleared it, or a later form set it): each form start tag sets
        it (the pointer is clear before each, as on the page, where that form opened)."""
        depth = len(self.stack) if depth is None else depth
        if any(self.stack[taken] in _AROUND_TEXT for taken in self.taken_out if taken < depth):
            return None  # inline text in an element taken off the stack: see `_close_form`
        tags = self.tags[:depth]
        if None in tags:
            return None
        if b"form" in self.stack:
            pointed = self.pointed if self.form_pointer and self.pointed is not None else -1
            tags = [tag + _POINTER_CLEARED if name == b"form" and i != pointed else tag  # type: ignore[operator]
                    for i, (name, tag) in enumerate(zip(self.stack, tags))]
        return tags  # type: ignore[return-value]  # no None, checked

    def _pointer_reopen(self) -> bytes:
        """What sets the form pointer again, after the open elements' start tags, where it points
        to a form no longer open (a block's or a cell's close popped it: `<div><form></div>`):
        `_POINTER_SET`; else nothing."""
        return _POINTER_SET if self.form_pointer and self.pointed is None else b""

    def _row_cut(self) -> tuple[bytes, bytes] | None:
        """With a row just opened in a row group on top of the stack, the markup that opens again
        all that was open before it (the containers, the table, the row group: see `_reopen`)
        and the table's own tags, when
        each has one to open it with (none of the attributes the walk reads); else None. A row
        parses alone as in place behind them: the cell and row before it closed (at a piece's
        end as by the row's start), the formatting elements above the table reopened with the
        same list (see `_formatting_start`; those off the stack before the table's tags: they
        were off it where the table opened, which reconstructs none)."""
        tags, off = self._open_tags(len(self.stack) - 1), self._off_stack()  # (a row pushes no marker)
        if tags is None or off is None or len(tags) < 2 or b"pre" in self.stack:  # a `pre` is one block of code
            return None
        if not _TABLE_CONTEXT.isdisjoint(self.stack[:-3]):
            return None  # a table in a cell: what the cell holds is its text
        return b"".join(tags[:-2]) + self._pointer_reopen() + off + tags[-2] + tags[-1], tags[-2] + tags[-1]

    def _reopen(self, name: bytes, attrs: bytes) -> bytes | None:
        """What a piece starting with the start tag `name` must begin with to be parsed as it is
        in place, `None` where no cut is: the start tags of the open elements, when each is a
        container the walk reads only as a block of text (`_REOPENABLE`) or a formatting element
        or phrasing element it reads as inline text (`_AROUND_TEXT`), with none of the attributes it reads
        (`READ_IN_MARKUP`), and `name` starts a block (or an item of the list open innermost)
        that the walk does not skip (none of those attributes in `attrs`). There the walk ends a
        block anyway, so an element closed at a piece's end and opened again adds none; nothing
        but them is open, so the parser's state is theirs (for the list of active formatting
        elements too, its entries off the stack after them: see `_formatting_start`; none of
        these start tags reconstructs them)."""
        tags, off = self._open_tags(), self._off_stack()
        if tags is None or off is None or self._table_context() >= 0:
            return None  # between a table's rows, in a cell, or foster-parented: `_row_cut`, `_cell_cut`
        if b"pre" in self.stack:
            return None  # a `pre` is one block of code: cut only in its text (`_pre_reopen`)
        if not self.stack:
            return self._pointer_reopen() + off if name in _CUT_BEFORE else None
        return b"".join(tags) + self._pointer_reopen() + off if self._starts_block(name, attrs) else None

    def _starts_block(self, name: bytes, attrs: bytes) -> bool:
        """Whether a start tag starts a block the walk reads, where a cut inside open containers
        may fall: a block's (not a table's: what a table foster-parents goes before it, into text
        the container's close at a piece's end would have ended), or an item's of the list open
        innermost; with none of the attributes the walk reads."""
        return not READ_IN_MARKUP.search(attrs) and (
            (name in _CUT_BEFORE and name != b"table") or name in _ITEMS.get(self.stack[-1], ()))

    def _cell_cut(self, at: int, name: bytes | None = None, attrs: bytes = b"") -> "Cut | None":
        """The cut before the start tag `name` at `at` in a table's cell (a page laid out in a
        table holds it all in one), or None where none is: as `_reopen` has it in the body (a
        block's start, or an item's of the list open innermost; and a table's, whose cut is
        dropped if it foster-parents anything: `_foster`), or before a word of text
        (`name` None) as `_text_reopen` has it (only formatting and phrasing elements open in
        the cell, those off the stack in it reconstructed by the text before), with the containers,
        formatting and phrasing elements open around the table and in the cell, and the
        table's own elements (the table, its row group, the row, the cell), each with a start
        tag to open it again by. The piece opens them all again, and the entries of the list
        of active formatting elements off the stack on both sides of the cell's marker
        (`_off_stack_parts`); the walk joins the cell's parts, and the table's, where the
        pieces reopened them (`Piece.cell`): the block's start, or the whitespace before the
        word, sets the cell's text apart there on the page too. Not in a table in a cell, nor
        in a caption, a `pre` or a template, nor above a form `</form>` took off the stack in
        the cell (`_close_form`: the walk reads the text as the body's, but a piece would hold
        the table's markup without that form)."""
        table = self._table_context() - 3
        if table < 0 or self.stack[table + 3] not in (b"td", b"th") or self.stack[table] != b"table" or \
                b"pre" in self.stack or not _TABLE_CONTEXT.isdisjoint(self.stack[:table]):
            return None
        if any(taken > table for taken in self.taken_out):
            return None  # in the table, the form `</form>` took off the stack holds them: its markup would part
        if name is None:
            if any(open_name not in _AROUND_TEXT for open_name in self.stack[table + 4 :]):
                return None
        elif not (self._starts_block(name, attrs) or (name == b"table" and not READ_IN_MARKUP.search(attrs))):
            return None
        tags, parts = self._open_tags(), self._off_stack_parts()
        if tags is None or parts is None or len(parts) != 2 or (name is None and parts[1]) or \
                next(entry for entry in self.active if entry.key is None).depth != table + 3:
            return None
        before, after = parts
        inside = b"".join(tags[table:]) + self._pointer_reopen() + after
        return Cut(at, b"".join(tags[:table]) + before + inside, inside, cell=True)

    def _text_reopen(self) -> bytes | None:
        """What a piece that starts with a word in the text here must begin with to be parsed as
        it is in place (`None` where no cut is): nothing, directly in the body, or the start tags
        of the formatting and phrasing elements open around the text when nothing else is open
        (none with an attribute the walk reads). The walk reads them as inline text, so one
        closed at a piece's end and opened again ends no block; a container would. The text
        before the cut has reconstructed what was off the stack."""
        tags = self._open_tags()
        if tags is None or self._off_stack() != b"" or any(name not in _AROUND_TEXT for name in self.stack):
            return None
        return b"".join(tags) + self._pointer_reopen()

    def _pre_reopen(self) -> bytes | None:
        """With a `pre` on top of the stack, what a piece that starts in its text must begin with
        to be parsed as it is in place (`None` where no cut is): the start tags of the open
        elements around the `pre` (containers, formatting and phrasing elements, none with an
        attribute the walk reads) and its own, then a line's end. The parser drops a line's end right after
        a `pre` start tag (the HTML standard's rule for `pre`, `listing` and `textarea`), so the
        piece's text is the text after the cut, whole; the walk joins the `pre`'s parts into one
        block of code (`Piece.pre`). Nothing else is open in the `pre`, so nothing is
        reconstructed; the cut falls after a line's end, so never inside a character reference
        or a CR LF pair."""
        tags = self._open_tags()
        if tags is None or self._off_stack() != b"" or b"pre" in self.stack[:-1] or self._table_context() >= 0:
            return None  # (in a table: in a cell, or before the table, foster-parented)
        return b"".join(tags[:-1]) + self._pointer_reopen() + tags[-1] + b"\n"

    def _pop_through(self, names: frozenset[bytes], stops: frozenset[bytes]) -> None:
        """Close the innermost open element of `names` as the parser does, popping the elements
        above it, when it is found before any of `stops` (the scope the parser looks in, or
        where its search ends, a template among them); nothing where it is not."""
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] in names:
                self._truncate(i)
                return
            if self.stack[i] in stops:
                return

    def _close_implied(self, name: bytes, attrs: bytes) -> None:
        """The open elements a start tag in the body closes before it opens (the HTML standard's
        "in body" rules for `li`, `dd`, `dt`, a `p` in button scope, headings, a `button` in
        scope, ruby; an `option`, `optgroup`, `hr` or `input` in a select in scope, as Lexbor
        has them), and
        the formatting elements it reconstructs (`_reconstruct`) and drops from the list (a
        nested `a`, the Noah's Ark clause: `_formatting_start`)."""
        if name == b"button":
            self._pop_through(frozenset({b"button"}), _SCOPE)  # a nested one closes the open one
        if name == b"li":
            self._pop_through(frozenset({b"li"}), _ITEM_SEARCH_STOP)
        elif name in (b"dd", b"dt"):
            self._pop_through(frozenset({b"dd", b"dt"}), _ITEM_SEARCH_STOP)
        if name in _CLOSES_P or (name == b"table" and _table_closes_p(self.doctype)):
            self._pop_through(frozenset({b"p"}), _BUTTON_SCOPE)  # (in quirks mode, a table goes into it)
        top = self.stack[-1] if self.stack else b""
        if name in _HEADINGS and top in _HEADINGS:
            self._truncate(len(self.stack) - 1)
        elif name in (b"option", b"optgroup", b"hr") and self._in_scope(b"select"):
            self._implied_ends(b"optgroup" if name == b"option" else b"")  # an option's stays in its group
        elif name in (b"option", b"optgroup") and top == b"option":
            self._truncate(len(self.stack) - 1)
        elif name == b"input" and self._in_scope(b"select"):
            self._pop_through(frozenset({b"select"}), _SCOPE)  # an input closes the select
        elif name in _RUBY and self._in_scope(b"ruby"):
            self._implied_ends(b"rtc" if name in (b"rt", b"rp") else b"")  # an `rtc` holds ruby text
        if name == b"a" and (listed := self._last_entry(b"a")) is not None:
            # the adoption agency for the `a` in the list, as its end tag runs it, before the
            # reconstruction (a link left open in a `p` is reconstructed in the next one, which
            # opens another); then that `a` leaves the list and the stack, where the agency has
            # not taken it off (as Lexbor moves the list, its entry may stay: `_furthest_block`)
            self._formatting_end(b"a")
            if self.trusted and listed.listed:
                if listed.on:  # out of scope (below a table: the new `a` is foster-parented)
                    if self.tags[listed.depth] is None:
                        self.trusted = False  # what stands above it stays in it, which the walk reads
                        return
                    self.on_stack.remove(listed)
                    self._take_out(listed.depth)
                    listed.on = False
                self._unlist(listed)
        if name not in _NO_RECONSTRUCT and self._pending():
            self._reconstruct()
        if name == b"nobr" and self._in_scope(name):
            # a nested `nobr` closes the open one as its end tag would, then reconstructs again
            self._formatting_end(name)
            if self.trusted and self._pending():
                self._reconstruct()
        if name in _NOT_NESTED and self._in_scope(name):
            self.trusted = False  # left by the adoption agency (a `nobr` reconstructed counts)
        elif name in _FORMATTING:
            self._formatting_start(name, attrs)

    def _implied_ends(self, kept: bytes = b"") -> None:
        """"Generate implied end tags": pop the current node while it is one of `_IMPLIED` (but `kept`)."""
        while self.stack and self.stack[-1] in _IMPLIED and self.stack[-1] != kept:
            self._truncate(len(self.stack) - 1)

    def _in_scope(self, name: bytes) -> bool:
        """Whether an element of that name is open in the default scope (none of `_SCOPE` above it)."""
        for open_name in reversed(self.stack):
            if open_name == name:
                return True
            if open_name in _SCOPE:
                return False
        return False

    def _formatting_start(self, name: bytes, attrs: bytes) -> None:
        """The Noah's Ark clause: a fourth element of the same name and attributes since the last
        marker drops the earliest from the list (its element stays where it is, on the stack or
        off it).

        Why a piece may open the formatting elements again by their start tags (then those off
        the stack: `_off_stack`): where the scan vouches, it holds the list as the parser does.
        It follows each push (a start tag, `_reconstruct`), pop (a close, its own end tag or a
        block's, implied or not: `_truncate`; a cell's close clears the list back to its
        marker), drop (this clause; an end tag for an entry off the stack, a nested `a`: `_end`,
        `_close_implied`), and the adoption agency (`_formatting_end`, `_furthest_block`);
        anything else the parser does with the list stops it."""
        key = _key(name, attrs)
        same: list[_Entry] = []
        for entry in reversed(self.active):
            if entry.key is None:
                break
            if entry.key == key:
                same.append(entry)
        if len(same) >= 3:
            self._unlist(same[-1])

    def _start(self, name: bytes, attrs: bytes, at: int, tag_start: int) -> int:
        """Follow a start tag from `tag_start` to `at`; where the next token begins."""
        if self.foreign:
            top = self.stack[-1]
            if top in _INTEGRATION_POINTS and not (top in _MATHML_TEXT and name in (b"mglyph", b"malignmark")):
                self.trusted = False
            elif not _SELF_CLOSING.search(attrs):
                self.stack.append(name)
                self.foreign += 1
            return at
        if name in _NEVER:
            self.trusted = False
        elif name in _FOREIGN:
            if not _SELF_CLOSING.search(attrs):
                self.stack.append(name)
                self.foreign += 1
        elif name in _RAW_TEXT:
            return self._raw_text(name, at)
        elif name not in _VOID and name not in _IGNORED:
            if name in _FORMATTING:
                self.stack.append(name)
                self._listed(_Entry(name, self.source[tag_start:at], _key(name, attrs), len(self.stack) - 1))
            else:
                self._push(name, None)  # a marker for `object` and the like
                if name == b"form":
                    self._point_to_form(open_=True)
        return at

    def _raw_text(self, name: bytes, at: int) -> int:
        """Skip the text of a raw text or RCDATA element to just past its end tag."""
        if name == b"script":
            close = _script_end(self.source, at)
        else:
            found = re.compile(rb"</" + re.escape(name) + rb"[" + _WS + rb"/>]", re.I).search(self.source, at)
            close = None if found is None else found.start()
        if close is None:
            self.trusted = False
            self.to_end = True
            return len(self.source)
        token = _TOKEN.match(self.source, close)
        if token is None:
            self.trusted = False
            return len(self.source)
        return token.end()

    def _end(self, name: bytes) -> None:
        """Follow an end tag: it closes the innermost open element of its name (a heading's, the
        innermost open heading of any level) in its scope, with everything above it, for the end
        tags that close those (`_CLOSES_IMPLIED`), or is ignored when none is open there. Anything
        else stops the scan vouching: a stack left larger than the parser's would pair the page's
        later end tags with other elements than the parser does, and reopen what it has closed. A
        formatting element's runs the adoption agency (`_formatting_end`); a phrasing element's,
        or a ruby's or its text's (`rb`, `rt`...), closes it with the elements above it, or is ignored
        past a special element."""
        if name == b"form" and not self.foreign:
            # the form the pointer points to, in scope, closes (the pointer is cleared anyway);
            # one left open by an earlier `</form>` out of scope is not closed by the next
            pointed, self.form_pointer = self.form_pointer, False
            if pointed and self.pointed is not None:
                self._close_form(self.pointed)
            self.pointed = None
            return
        if not self.foreign and name in _FORMATTING:
            self._formatting_end(name)
        elif self.foreign:
            # SVG/MathML's: the innermost of its name among them closes with what stands above
            # it (`<svg><path></svg>`); past them, the HTML below reads the tag: not followed
            foreign = self.stack[len(self.stack) - self.foreign :]
            if name in foreign:
                closed = len(foreign) - foreign[::-1].index(name) - 1
                self._truncate(len(self.stack) - len(foreign) + closed)
                self.foreign = closed
            else:
                self.trusted = False
        elif self.stack and self.stack[-1] == name:
            self._truncate(len(self.stack) - 1)
        elif name == b"br":
            if self._pending():
                self._reconstruct()  # `</br>` is a `<br>`, which closes at once
        elif name in _HEADINGS and not _HEADINGS.isdisjoint(self.stack):
            self._pop_through(_HEADINGS, _SCOPE)  # `</h1>` closes an open `h2` too
        elif name in _VOID or name in _IGNORED or name not in self.stack:
            pass  # ignored (`</p>` opens and closes an empty `p`: nothing stays open)
        elif name in _CLOSES_IMPLIED:
            self._pop_through(frozenset({name}), _END_TAG_SCOPE.get(name, _SCOPE))
        elif name in _ANY_OTHER_END:
            self._pop_through(frozenset({name}), _SPECIAL)  # "any other end tag"
        else:
            self.trusted = False  # the adoption agency, or an end tag that closes what is not implied

    def _close_form(self, i: int) -> None:
        """`</form>` while the form pointer is set: the open form it points to (at `i`), where it is
        in scope, leaves the stack after the implied end tags above it close, wherever it stands; the elements still
        above it stay open, in it (`<form><div></form>` leaves the `div` open). A piece may open
        them again without the form where the walk reads it only as a container (it has a start
        tag in `tags`); where the walk reads its attributes (`hidden`), it stops. The form is a
        block to the walk, which ends where the form's content does: after the lowest of them
        closes, on the page. A piece that opens them again without it ends no block there, so
        no cut falls while they stand in it (`taken_out`) where the lowest is inline text
        (`<form><span>a</form>b<p>c</p>e</span>d`: `e` and `d` are two blocks); a block's close
        ends one anyway."""
        if not _SCOPE.isdisjoint(self.stack[i + 1 :]):
            return  # out of scope: it stays open
        self._implied_ends()
        if len(self.stack) - 1 == i:
            self._truncate(i)
        elif self.tags[i] is None:
            self.trusted = False
        else:
            self._take_out(i)

    def _take_out(self, depth: int) -> None:
        """Take the element at `depth` off the stack from where it stands, the elements above it
        staying open (a form `</form>` closes below them; an `a` out of scope that another `a`
        start tag drops): only the stack changes, not the tree, where they stay in it, from the
        depth it leaves in `taken_out` up (one each: a later one may stand in an earlier one). A
        piece opens them again without it: the caller has checked that the walk reads it only
        as a container or as inline text (its start tag is in `tags`)."""
        del self.stack[depth], self.tags[depth]
        self.cut_low = _MAX_OPEN + 1  # the elements above it move down: all count as where they were
        if self.pointed is not None and depth <= self.pointed:
            self.pointed = None if depth == self.pointed else self.pointed - 1
        for entry in self.on_stack:
            if entry.depth > depth:
                entry.depth -= 1
        if self.pending_table > depth:
            self.pending_table -= 1
        self.tables_at = [(at - 1 if at > depth else at, start) for at, start in self.tables_at]
        # (those above it that stood in one taken out before still do, a step lower)
        self.taken_out = [taken - 1 if taken > depth else taken for taken in self.taken_out if taken != depth]
        self.taken_out.append(depth)

    def _formatting_end(self, name: bytes) -> None:
        """A formatting element's end tag: the HTML standard's adoption agency algorithm, on the
        stack and the list. The current node of that name, dropped from the list, is popped;
        else, up to eight times, the list's last entry of that name after its last marker is the
        formatting element: off the stack, it is dropped from the list; on it but out of scope,
        the tag is ignored; with no special element above it, it is popped with what is above it
        and dropped; else the first special element above it is the furthest block, which the
        element's new copy goes into (`_furthest_block`), and the next round closes that copy
        (after the eighth, the copy stays open). Where no entry is found, the standard's "any other end tag" reads the stack, which the
        scan follows only where none of that name is open."""
        top = len(self.stack) - 1
        if self.stack[-1:] == [name] and self.on_stack and self.on_stack[-1].depth == top and \
                not self.on_stack[-1].listed:
            self._truncate(top)
            return
        for rounds in range(8):
            entry = self._last_entry(name)
            if entry is None:
                if rounds or name in self.stack:
                    self.trusted = False
                return
            if not entry.on:
                self._unlist(entry)
                return
            above = self.stack[entry.depth + 1 :]
            if not _SCOPE.isdisjoint(above):
                return  # not in scope: ignored
            block = next((i for i, e in enumerate(above) if e in _SPECIAL), None)
            if block is None:
                self._truncate(entry.depth)
                self._unlist(entry)
                return
            self._furthest_block(entry, entry.depth + 1 + block)
            if not self.trusted:
                return

    def _furthest_block(self, formatting: _Entry, block: int) -> None:
        """One round of the adoption agency with a furthest block (`block`, on the stack), as it
        moves the stack and the list; the tree's moves are the parser's business, but for one:
        where the element below the formatting element is a table's (a table, row group or row),
        the block is foster-parented before the table, where the formatting element went when
        the table foster-parented it (the cuts held in the table were dropped then: `_foster`).

        Walking down from the block to the formatting element: the fourth element and those
        after it are dropped from the list; each element not (or no longer) in the list leaves
        the stack; each still in it is replaced by a copy from its start tag, in place. The
        formatting element leaves the stack; its copy goes on the stack just above the block.
        In the list, the scan follows Lexbor, which parses the whole page, where it is not quite
        the HTML standard: Lexbor takes the formatting element's index and the bookmark's (just
        after the copy nearest the block, else the formatting element's) before the walk, drops
        the entry at the first, then puts the copy's at the second. So the copy's entry goes one
        further on where the formatting element's stood before the bookmark and another follows
        it; and where the walk dropped entries ahead of it, another entry leaves the list in
        its place, and its own stays, off the stack (`<a hidden><font><h2><b><i><u><s><p>x</a>`
        then hides the text after the heading)."""
        depth = formatting.depth
        if any(taken > depth for taken in self.taken_out):
            self.trusted = False  # the elements it moves out of an element taken off the stack: not followed
            return
        cell = self._table_context()
        if block < self.cut_low and cell >= 0 and self.stack[cell] in (b"td", b"th"):
            # it moves the block, open where a cut fell in the cell (the piece before it holds
            # it): the table's markup, which the walk keeps, would differ, not its text
            self.pending = [cut for cut in self.pending if not (cut.cell and cut.at > self.cell_at)]
        entries = {entry.depth: entry for entry in self.on_stack if entry.depth >= depth}
        kept: list[int] = []
        at = bookmark = self.active.index(formatting)
        for count, i in enumerate(range(block - 1, depth, -1), start=1):
            entry = entries.get(i)
            if entry is not None and entry.listed and count > 3:
                self._unlist(entry)
            if entry is None or not entry.listed:
                if entry is not None:  # off the stack, no longer counted as left on it
                    entry.on = False
                    self.unlisted -= 1
                continue
            if not kept:
                bookmark = self.active.index(entry) + 1
            kept.append(i)
        if at < len(self.active) and self.active[at] is formatting:
            del self.active[at]
            formatting.listed = False
        elif at < len(self.active):
            self._unlist(self.active[at])
        formatting.on = False  # its element leaves the stack (its entry may stay in the list)
        copy = entries[depth] = _Entry(formatting.name, formatting.tag, formatting.key, depth)
        self.active.insert(min(bookmark, len(self.active)), copy)
        order = [*range(depth), *reversed(kept), block, depth, *range(block + 1, len(self.stack))]
        self.stack[:] = [self.stack[i] for i in order]
        if self.pointed is not None and self.pointed >= depth:  # a form is special: the block or above it
            self.pointed = order.index(self.pointed) if self.pointed in order else None
        self.tags[:] = [self.tags[i] for i in order]
        del self.on_stack[len(self.on_stack) - len(entries):]
        for new, old in enumerate(order[depth:], start=depth):
            entry = entries.get(old)
            if entry is not None and entry.on:
                entry.depth = new
                self.on_stack.append(entry)


class Cut(NamedTuple):
    """Where a document may be cut (an offset), the markup that opens again what is open there,
    and what the piece before the cut ends inside: for a cut in a table, the markup that opens
    the table again, from its start tag on (its row group's start tag, between its rows; in a
    `cell`, its row's and the cell's, and what is open in it), else b""; for a cut in a `pre`'s
    text, `pre`."""

    at: int
    reopen: bytes = b""
    table: bytes = b""
    pre: bool = False
    cell: bool = False


class Piece(NamedTuple):
    """A piece of a document to parse alone (behind its DOCTYPE and the markup that reopens what
    is open where it starts), and, when it ends inside an element that the next piece opens
    again and continues: a table (the markup that opens it again, from its start tag on: see
    `Cut`), with a row whose last cell the next piece's first row continues (`cell`), or a `pre`
    (in its text: `pre`)."""

    markup: bytes
    table: bytes = b""
    pre: bool = False
    cell: bool = False


def map_releaser(source: mmap.mmap) -> Callable[[int], None]:
    """A map's `released`: its pages before an offset let go (its memory, not the file)."""
    def released(offset: int) -> None:
        if whole_pages := offset - offset % mmap.PAGESIZE:
            source.madvise(mmap.MADV_DONTNEED, 0, whole_pages)

    return released


def windows(source: Source, size: int, past: int = 0, released: Callable[[int], None] | None = None) -> Iterator[bytes]:
    """`source` `size` bytes at a time, each with `past` bytes after it (a pattern that starts in
    a window is whole in it); `released` is told after each window that the bytes before its end
    may go."""
    for at in range(0, len(source), size):
        yield source[at : at + size + past]
        if released is not None:
            released(at + size)


def html_pieces(source: Source, every: int = PIECE_BYTES,
                released: Callable[[int], None] | None = None) -> Iterator[Piece]:
    """`source` (an HTML document's UTF-8 bytes, or a map of them) as pieces to parse one by
    one, each after the first behind the document's DOCTYPE and what it reopens (see
    `_Scan._reopen`, `_Scan._row_cut`, `_Scan._cell_cut`); the whole
    document when it is no longer than `every`.
    `released(offset)` is told when the bytes before `offset` may leave memory (a map of them
    reads them again if they are read again): each piece's bytes are let go once copied, before
    it is parsed, and the scan's reading ahead as it goes, through a table or a long text."""
    scan = _Scan(source, released)

    def piece(start: int, end: int, reopen: bytes, cut: Cut) -> Piece:
        # copied (bytes whole are not), then let go from the map before it is parsed; no name
        # here holds it once yielded
        markup = source[start:end] if start == 0 else scan.doctype + reopen + source[start:end]
        if released is not None:
            released(end)
        return Piece(markup, cut.table, cut.pre, cut.cell)

    if len(source) <= every or any(_FRAMESET.search(w) for w in windows(source, every, len(b"<frameset") - 1, released)):
        yield piece(0, len(source), b"", Cut(len(source)))
        return
    start, reopen = 0, b""
    for cut in scan.cuts(every):
        yield piece(start, cut.at, reopen, cut)
        start, reopen = cut.at, cut.reopen
    yield piece(start, len(source), reopen, Cut(len(source)))
