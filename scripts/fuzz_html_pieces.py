"""Fuzz the piece-wise HTML parse: random pages parsed whole and a piece at a time must agree.

Pages of table, list, container, form, `pre` and formatting markup (formatting left open in blocks
too, which the parser reconstructs in the blocks after them), well and badly formed, are parsed whole
and a piece at a time at many piece sizes; both must give the same blocks (`html_blocks`: kind,
text, level, table markup, page ends), and no piece may fail what its cut promised (the reader
would then parse the page whole again, which gives the right blocks and hides the fault).

    python scripts/fuzz_html_pieces.py [--pages 300] [--seed 1]

Prints each page that differs (with the piece size) and exits non-zero if any did.
"""

import argparse
import logging
import random
import sys

from indx_assets.pipeline.readers.html import html_blocks, log
from indx_assets.pipeline.readers.html_cuts import html_pieces

#: Fragments a page is drawn from: a table's structure closed or not, cells with inline markup,
#: and what a table foster-parents or closes implicitly.
FRAGMENTS = [
    "<table>", "<table class=t border=1>", "<table style='display:none'>", "<table hidden>", "</table>",
    "<thead>", "</thead>", "<tbody>", "<tbody class=b>", "</tbody>", "<tfoot>", "</tfoot>",
    "<tr>", "<tr class=r>", "<tr hidden>", "</tr>", "<td>", "<td rowspan=2>", "<td colspan=3>", "</td>",
    "<th>", "</th>", "<caption>cap", "</caption>", "<colgroup><col><col>", "<col span=2>", "</colgroup>",
    "cell text ", " ", "\n", "&nbsp;", "stray", "<b>bold", "</b>", "<i>it</i>", "<a href=x>link</a>",
    "<p>para", "</p>", "<div>", "</div>", "<div id=w>", "<section>", "</section>", "<ul><li>a<li>b</ul>",
    "<br>", "<span>s</span>", "<form>", "</form>", "<input type=hidden>", "<select><option>o</select>",
    "<script>x<y</script>", "<script><!--<script>d</script>--></script>", "<script><!--<script></script>", "<style>p{}</style>", "<!-- c -->", "<pre>code\n</pre>", "<h2>head</h2>",
    "<template><tr><td>t</template>", "<svg><tr>svg</tr></svg>", "<table><tr><td>nested</td></tr></table>",
    "<p style='page-break-after: always'>brk</p>", "<div style='color: red'>", "<div style='display:none'>",
    "<p style='dis&#112;lay:none'>ref</p>", "<div style='break-before: page'>", "<table style='width: 100%'>", "<tr><td>a</td><td>b</td></tr>\n", "<tr><td>x<td>y\n",
    "<tr><td>x</td> fostered <td>z</td></tr>",
    # forms: nested (ignored while one is open), closed out of order, in a table, hidden
    "<form>", "<form id=form1 runat=server>", "</form>", "<form hidden>", "<form action='a?b=1&amp;c=2'>",
    "<fieldset>f", "</fieldset>", "<button>b</button>", "<button>", "</button>", "<input name=q>", "<template><form>t</form></template>",
    # pre: line ends at its start and end, CR LF, inline markup, blocks and references in it
    "<pre>", "<pre class=c>", "<pre>\n", "</pre>", "<pre hidden>", "<listing>\n", "</listing>", "\r\n", "\r",
    "line of code\n", "  indented\n", "\n\n", "a &lt; b &amp;&amp; c\n", "<span class=k>if</span> x:\n",
    "<textarea>\nt\n</textarea>",
    # formatting elements: open around blocks, misnested, nested past the Noah's Ark clause's three
    "<font face=Arial>", "<font size=2>", "</font>", "<b>", "<b class=x>", "</b>", "<i>", "</i>", "<em>", "</em>",
    "<strong>", "</strong>", "<u>", "</u>", "<s>", "<tt>", "<small>", "<big>", "<code>", "</code>", "<strike>",
    "<a href=y>", "<a href='/z'>", "</a>", "<nobr>", "</nobr>", "<b hidden>", "<font style='display:none'>",
    "<i style='page-break-after: always'>", "<b><b><b>", "</body>", "</html>", "words in b ", "<li>item",
    "<span>", "<span class=s>", "</span>", "<sub>", "</sub>", "<label>", "</label>", "<span hidden>", "<q>", "</q>",
    # blocks that reconstruct nothing before them, ruby text, a form closed below a block
    "<dialog>dlg</dialog>", "<search>", "</search>", "<ruby>r<rt>t</rt></ruby>", "<rb>", "</rb>", "<rtc>",
    "<form><div>in a form", "<div><form><section>", "<object>", "</object>", "<marquee>m", "</marquee>",
    # ruby with its end tags left out (`rt`, `rp`, `rb` closed by the next, all by `</ruby>`)
    "<ruby>", "</ruby>", "<rt>", "<rp>(", "</rt>", "</rtc>", "<ruby>漢<rp>(<rt>kan<rp>)</ruby>", "<ruby hidden>",
    # a select as Lexbor parses it (by the body's rules, a scope's boundary; options closed implicitly)
    "<select>", "<select name=s>", "</select>", "<option>o", "</option>", "<optgroup label=g>", "</optgroup>",
    "<select><option>a<option>b</select>", "<select hidden><option>h</select>", "<input>", "<hr>",
    # a template: its content closed whole by its end tag, in the body or a table's modes
    "<template>", "</template>", "<template><p>t<div>u</template>", "<template><li>i<b>j</template>",
    "<template><col>", "<template><b hidden><object></template>", "<template><td><b>c</td></template>",
    # SVG and MathML, text and tags in their integration points (read as HTML)
    "<math><mi>x</mi><mo>=</mo><mn>2</mn></math>", "<math><mi>", "<svg><title>t</title><desc>d</desc></svg>",
    "<svg><title><form>f</form></title></svg>", "<svg><desc><a href=q>s</a></desc></svg>", "<svg><g><path d=M0></svg>",
    "<svg>", "</svg>", "<g>", "</g>", "<svg><g><p>x", "<svg><font color=red>f", "<svg></p>", "<svg><style>s{}</style></svg>",
    "<svg><style><p>x</p></style>", "<math><textarea>",
    # raw text (foster-parented in a table), NULs in text
    "<textarea>t</textarea>", "<xmp>x</xmp>", "<title>t</title>", "<iframe>i</iframe>", "\0", "a\0b",
    # the form pointer left set with its form closed, or cleared with it open
    "<div><form><p>f</div>", "<table><tr><td></form></td></tr></table>", "<object></form></object>",
    # a noscript: markup (scripting off), special, reconstructing, popped by a block's close
    "<noscript>", "</noscript>", "<noscript><img src=x></noscript>", "<noscript><p>n</p></noscript>",
    # a link, `nobr` or button opened again below a marker, the first left open out of scope
    "<a href=o><table><tr><td><a href=i>in", "<nobr><object><nobr>", "<button><table><tr><td><button>",
    "<a href=o><table><a href=f>fostered", "<a href=o><table><tr><td>r</td></tr><a href=f>", "<p><a href=l>x</p><table><a href=m>",
    # end tags a table's mode ignores (or acts on) while what it foster-parented is open
    "<table><tr><div>f</td>g", "<table><tbody><tr><span>s</tbody>t", "<tr><b>x</th>",
    "<table><b><div>x</b>y</div>", "<tr><font><p>f</font>",  # a furthest block foster-parented
    "<table><div><form>f</div>", "<tr><span><form hidden>g",  # the table's own form, in what it foster-parented
    # `</br>`; a hidden input and whitespace written as references, which a table holds itself
    "<p><b>x</p></br>y", "<table><input type=hidden>", "<tr><input type=HIDDEN>", "<table>&#32;", "<tr>&#10;&nbsp;",
    "<table><pre>\nfostered\nlines\n", "<tr><pre>p\nq\nr\n</pre>",  # a `pre` foster-parented
    "<p>open<table>", "<p hidden>h<table>",  # a table in a `p`: in it in quirks mode
    # forms a template or SVG holds; references to control characters; a name starting with `=`
    "<template><form></form></template>", "<svg><form></form></svg>", "&#1;", "<b title=&#1; =x>",
]
ROW = ["<tr><td>r {i}</td><td><b>x</b> {i}</td></tr>\n", "<tr><td>r {i}<td>y {i}\n", "<tr><th>h {i}</th></tr>",
       # cells whose markup stays in them, closed out of order or not at all (read a row at once)
       "<TR><TD>a {i}</th><td><p>p<li>l<h1>h<h2>i</h1></TD>\n", "<tr class=x><td><a>x<a>y<nobr>n<nobr>m</b></br></td>",
       "<tr><th title='a>b'>t {i}<td><div>d<p>q</div>e</p><td><b><i>bi</b>i</i></tr>  ",
       "<tr><td><!-- <tr> --> c {i}</td></tr>", "<tr><td>a < b {i}</td></tr>"]
#: Blocks of old pages that leave a formatting element open in them: the block's close pops it,
#: and the parser reconstructs it in the next block's text (or whitespace in the body); with
#: the same attributes each time (the Noah's Ark clause keeps three), or others.
UNCLOSED = [
    "<p><font face=Arial size=2>para {i}</p>", "<p><font face=Arial>p {i}</p>\n", "<p><b>b {i}</p>",
    "<p><b><i>bi {i}</p>", "<li><font size=2>l {i}", "<div><b>d {i}</div>", "<p><a href=x{i}>a {i}</p>",
    "<p><nobr>n {i}</p>", "<h2><font face=Arial>h {i}</h2>", "<p>p {i}</p>", "<p><span><b>s {i}</span> t</p>",
    "<p><b>x<i>y</b>z {i}</i></p>", "<ul><li><font face=Arial>a {i}<li>b</ul>", "</font>", "</b>", " words {i} ",
    "<p><font size=2 face=Arial>", "<p><font face=\"Arial\" size=\"2\">q {i}</p>", "<p><font color=#{i}>c {i}</p>",
    "<div><p><font face=Arial>v {i}</div>", "<table><tr><td>t {i}</td></tr><tr><td>u</td></tr></table>",
    "<p>para {i} <a href=x{i}>link</p>", "<p><a href=x{i}>a <b>b {i} <a href=y>c</b></p>",
    "<p><span>s {i} <a href=z{i}>t</span> u</p>", "<p>h {i} <a href=h{i} hidden>h</p>",
    # the same attributes to the Noah's Ark clause through character references, or not
    "<p><font title='a&amp;b'>r {i}</p>", "<p><font title=a&#38;b>r {i}</p>", "<p><font title='a&ampd'>r {i}</p>",
    "<p><font title=\"a&amp b\">r {i}</p>", "<p><font title='a& b'>r {i}</p>",
]
#: What a page laid out in a table holds in its cells: blocks, formatting left open in them,
#: list items, text and line breaks, a table in the cell, the next cell or row.
CELL = UNCLOSED + ["<p>para {i}\n", "<div>d {i}</div>", "<li>l {i}", "<h2>h {i}</h2>", "words {i} ", "<ul><li>u {i}",
                   "<table><tr><td>in {i}</table>", "</td><td>c {i}", "<tr><td>row {i}", "<td><p>cell {i}",
                   "<th><div>th {i}", "<td hidden><p>h {i}", "<dl><dt>t {i}<dd>d", "<center><p>c {i}</center>",
                   "<br>line {i} and words\n", "<font size=2>f {i} ", "text {i} <span>in a span {i}</span> ",
                   "<table><tr><td>a {i}</td><td>b</td></tr></table>", "t {i}<table>fostered {i}<tr><td>x</table>",
                   "<table><tr><td>c {i}</td></tr><tr><div>fostered</div></tr></table>", "<form><div></form><p>f {i}"]
#: Lines of a long `pre`.
LINE = ["    line {i} of code\n", "\n", "  x = {i} &amp;&amp; y &lt; z\n", "\r\n", "<b>bold {i}</b>\n", "tab\t{i}\n",
        "<span>s {i}\n</span>", " {i} "]


def page(rng: random.Random) -> bytes:
    doctype = rng.choice(["<!DOCTYPE html>", "", "<!DOCTYPE html>", "",  # quirks or not, by another DOCTYPE too
                          '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">',
                          '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">'])
    parts = [doctype, "<html><body>", rng.choice(["", "<div id=page>", "<main><div>"])]
    for _ in range(rng.randint(1, 6)):
        if rng.random() < 0.2:  # a page laid out in a table: blocks in its cells, with a few fragments mixed in
            parts.append(rng.choice([
                "<table width=100%><tr><td>nav</td><td>", "<table><tr><td>", "<table><tbody><tr><th>",
                "<center><table border=0><tr><td valign=top><font face=Arial>", "<table><tr><td><div>",
                "<table><tr><td class=c><ul>", "<b><table><tr><td><i>", "<table><tr><td hidden>"]))
            for i in range(rng.randint(5, 60)):
                parts.append(rng.choice(CELL).format(i=i))
                if rng.random() < 0.08:
                    parts.append(rng.choice(FRAGMENTS))
            parts.append(rng.choice([
                "</td></tr></table>", "</td><td>side</td></tr><tr><td>foot</td></tr></table>", "", "</table>",
                "</td></tr><tr><td>", "</table></center>", "</td></tr>fostered</table>"]))
        elif rng.random() < 0.4:  # a long regular table, with a few fragments mixed in
            parts.append(rng.choice(["<table>", "<table class=t>", "<div><table>", "<table style='margin: 0'>",
                                     "<div style='color: red'><table>"]))
            parts.append(rng.choice(["", "<thead><tr><th>A<th>B</thead>", "<caption>c</caption>", "<tbody>"]))
            for i in range(rng.randint(5, 60)):
                parts.append(rng.choice(ROW).format(i=i))
                if rng.random() < 0.08:
                    parts.append(rng.choice(FRAGMENTS))
            parts.append(rng.choice(["</table>", "</tbody></table>", "", "</table></div>"]))
        elif rng.random() < 0.3:  # formatting elements around many blocks, with a few fragments mixed in
            parts.append(rng.choice(["<font face=Arial><b>", "<b>", "<font size=2>", "<a href=x><i>",
                                     "<div><font color=red>", "<nobr>", "<strong><em>", "<span class=x>",
                                     "<font size=2><span>"]))
            for i in range(rng.randint(5, 60)):
                parts.append(rng.choice(["<p>para {i}\n", "<p>p {i}</p>", "<div>d {i}</div>", "<ul><li>l {i}</ul>",
                                         "words {i} and more words ", "<br>line {i}\n", "<b>bold {i}</b> "])
                             .format(i=i))
                if rng.random() < 0.08:
                    parts.append(rng.choice(FRAGMENTS))
            parts.append(rng.choice(["</b></font>", "</b>", "</font>", "</i></a>", "</font></div>", "", "</em>",
                                     "</span>"]))
        elif rng.random() < 0.35:  # formatting left open in blocks, with a few fragments mixed in
            for i in range(rng.randint(5, 60)):
                parts.append(rng.choice(UNCLOSED).format(i=i))
                if rng.random() < 0.08:
                    parts.append(rng.choice(FRAGMENTS))
        elif rng.random() < 0.5:  # a long form or `pre`, with a few fragments mixed in
            form = rng.random() < 0.5
            parts.append(rng.choice(["<form id=form1>", "<div><form method=post>", "<form>"]) if form
                         else rng.choice(["<pre>", "<pre>\n", "<div class=highlight><pre class=code>", "<pre>\n\n"]))
            for i in range(rng.randint(5, 60)):
                parts.append((rng.choice(["<p>para {i}\n", "<div>d {i}</div>", "<ul><li>l {i}</ul>"]) if form
                              else rng.choice(LINE)).format(i=i))
                if rng.random() < 0.08:
                    parts.append(rng.choice(FRAGMENTS))
            parts.append(rng.choice(["</form>", "</form></div>", "", "</pre>", "</pre></div>", "\n</pre>"]))
        else:
            parts.extend(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 25)))
        parts.append(rng.choice(["<p>between</p>\n", " words ", ""]))
    return "".join(parts).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    read_again: list[logging.LogRecord] = []  # the reader's warnings: a page parsed whole again
    handler = logging.Handler(logging.WARNING)
    handler.emit = read_again.append  # type: ignore[method-assign]
    log.addHandler(handler)
    failed = cut = put_back = in_cell = 0
    for n in range(args.pages):
        html = page(rng)
        whole = html_blocks(html, 1 << 40)
        for every in range(24, min(len(html), 1200), 37):
            pieces = list(html_pieces(html, every))
            cut += len(pieces) > 1
            in_cell += any(piece.cell for piece in pieces)
            put_back += any(b"</button>" in piece.markup for piece in pieces[1:]) and b"button" not in html
            read_again.clear()
            if html_blocks(html, every) != whole or read_again:
                failed += 1
                print(f"page {n} differs at pieces of {every} bytes:\n{html.decode()}\n", flush=True)
                break
    print(f"{args.pages} pages, {cut} cut parses ({put_back} putting formatting back off the stack, {in_cell} cut in a"
          f" cell), {failed} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
