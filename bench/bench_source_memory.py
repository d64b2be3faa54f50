"""Peak memory of storing and reading one large source: `source_documents` then `page_outputs`.

    python bench/bench_source_memory.py [--mb 256] [--rounds 3] [--reader] [--chunk] [--against /work/main/.venv/bin/python]

Each case runs in its own process (peak RSS is per process: VmHWM) against a fresh data directory:
a baseline with a one-line file, then a binary file of `--mb` MiB (NUL bytes, so the text reader
refuses it: the case of issue 17, where 1 GiB cost 5.5 GB) and a file of words of the same size as
plain text, Markdown and HTML (one page whose text is stored; `--formats` picks them), a server log
and a word list (`text-log`, `text-words`: lines drawn afresh, so its words are distinct), a log
with a blob longer than a chunk in one line of 500 (`text-log-blobs`: its chunks cut a word, so the
page is measured word by word, `fidelity.measure_page`), prose wrapped at 72 characters in one
paragraph (`text-wrapped`, and as Markdown `markdown-wrapped`), distinct words hyphenated across
every line end (`text-hyphenated`), a Markdown list of links (`markdown-list`), and pages of HTML's
other shapes (`_BLOCKS`): short paragraphs (an element every 80 bytes, where the parser's tree and
the walk over it dominate), paragraphs and list items closed only implicitly, paragraphs inside
wrapping containers, one large table (and one as a page writes it: `html-table-page`), paragraphs
in one form around the page (`html-form`) or in formatting elements around it, as old pages write
them (`html-font`), or each with a `font` left open in it, which the parser reconstructs in the
next (`html-font-unclosed`), or each in a `b` closed inside it (`html-misnested`, the adoption
agency with a furthest block), sections of tables and forms as old sites write them
(`html-old-tables`), rows whose cells a `font` wraps (`html-font-rows`), tables with a `div` among
their rows (`html-fostered-blocks`), sections of a page with no DOCTYPE, a table in a `p` and a
form a `div` closes (`html-quirks`), sections with a select, a template, an SVG icon, a MathML
formula, ruby and an escaped script (`html-modern`), a page laid out in a table, all its text in
one cell (`html-layout`), a forum's page of posts, each a table in that cell (`html-forum`), one
large `pre` (`html-pre`), and a page in Windows-1252; and Markdown of one long block: a mail thread
quoted whole (`markdown-quote`; one with no blank line, one paragraph:
`markdown-quote-paragraph`; a reply quoting them: `markdown-quote-nested`,
`markdown-quote-nested-paragraph`), indented code (`markdown-code`), a fence (`markdown-fence`) and an
HTML table pasted in (`markdown-html`). Prints each case's peak above the baseline as a multiple of
the file's size, the median of `--rounds`; the bound for a file under INDX_MAX_FILE_MB is 2x.
`--chunk` cuts the read pages too (`chunk_map`: the peak is then the larger of the read's and the
cut's), `--reader` measures the reader alone (see `READER_PROBE`). `--against` names another
interpreter (another tree's venv, main's) whose cases run in the same rounds, each beside this
tree's, so both are measured on the same load.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import json, re, sys
from indx_assets.wiring.definitions import build_definitions
from indx_assets.app.runner import materialize_partitions, open_instance, sync_partitions
from indx_assets.wiring.settings import Settings

settings = Settings.from_env()
instance = open_instance(settings)
sync = sync_partitions(instance, settings)
build_definitions(settings)
results = materialize_partitions(instance, settings, sync.current, selection=sys.argv[1].split(","))
peak = int(re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) << 10
print(json.dumps({"peak": peak, "success": all(r.success for r in results)}))
"""

#: The stages every case runs (`--chunk` adds `chunk_map`).
STAGES = ("source_documents", "page_outputs")

#: `--reader`: the file's reader alone (`read_document_file`, as `page_outputs` reads
#: `content.bin`), its peak above the process just before the read (VmHWM reset there), so no
#: memory the pipeline freed before the read can hide what the read costs.
READER_PROBE = """
import importlib, json, re, sys
from indx_assets.pipeline.readers import FILE_READERS, read_document_file

def status(key):
    return int(re.search(key + r":\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) << 10

path, media_type = sys.argv[1:]
importlib.import_module(FILE_READERS[media_type].partition(":")[0])  # its imports are not the read's
open("/proc/self/clear_refs", "w").write("5")  # VmHWM from here
before = status("VmRSS")
with open(path, "rb") as file:
    read = read_document_file(file, media_type)
print(json.dumps({"peak": status("VmHWM") - before, "success": read.status in ("ok", "failed")}))
"""
_MEDIA_TYPES = {".txt": "text/plain", ".md": "text/markdown", ".html": "text/html"}


_PARAGRAPH = b"<p>The harbour wall held the <b>tide</b> back, and the town slept behind it.</p>\n"
#: The HTML cases' pages: a block of about 1 MiB repeated (`_write`), behind its `head` once.
_BLOCKS = {
    "html-paragraphs": (b"", _PARAGRAPH * 12945),
    # paragraphs and list items closed only implicitly, as much real HTML is written
    "html-implicit": (b"", b"<p>The harbour wall held the <b>tide</b> back, and the town slept behind it.\n" * 13284),
    "html-list": (b"<ul>", b"<li>The harbour wall held the <b>tide</b> back, and the town slept behind it.\n" * 13284),
    # paragraphs inside the containers a real page wraps its content in
    "html-wrapped": (b"<div id=page><main class=content>", _PARAGRAPH * 12945),
    # short paragraphs in formatting elements around the whole page, as old pages write them
    "html-font": (b"<font face=Arial size=2><b>", _PARAGRAPH * 12945),
    # short paragraphs each with a `font` left open in it, as old pages exported by word
    # processors write them: its close pops it and the parser reconstructs it in the next
    # paragraph, so from the fourth on each holds four nested (three reconstructed, the Noah's
    # Ark clause's bound, and its own)
    "html-font-unclosed": (b"", b"<p><font face=Arial size=2>The harbour wall held the <b>tide</b> back, and the town"
                                b" slept behind it.</p>" * 11140),
    # short paragraphs each in a `b` closed inside it, as old pages misnest them: its end tag
    # runs the adoption agency with the paragraph as its furthest block
    "html-misnested": (b"", b"<b><p>The harbour wall held the <i>tide</i></b> back, and the town slept behind it.</p>\n"
                            * 12945),
    # sections as old sites write them: each table in a `center` its start tag closes early (the
    # table's modes ignore the end tag), a form opened in a cell and closed by the cell's close,
    # its `</form>` after the table
    "html-old-tables": (b"", b"<center><table width='728' border=1></center><tr><td><form action=/q><b>Grade</b>"
                             b" harbour wall</td><td>held the tide</td></tr></table></form></center>\n<p>The harbour"
                             b" wall held the <b>tide</b> back.</p>\n" * 5380),
    # sections of tables whose rows wrap their cells in a `font`, as old sites write them: the
    # table's modes foster-parent it, the cell's start tag closes it, `</font>` drops its entry
    "html-font-rows": (b"", b"<table border=0><tr><font face=Arial size=2><td>harbour wall</td><td>held the tide</td>"
                            b"</font></tr></table>\n<p>The harbour wall held the <b>tide</b> back.</p>\n" * 6834),
    # sections of tables with a note in a `div` among their rows, as templates write them: the
    # table's modes foster-parent the `div`, open, before the table until `</div>`
    "html-fostered-blocks": (b"", b"<table border=0><tr><td>harbour wall</td><td>held the tide</td></tr><div class=note>"
                                  b"Noted in <b>1887</b></div></table>\n<p>The harbour wall held the <b>tide</b> back.</p>\n"
                                  * 6168),
    # sections as old sites write them, with no DOCTYPE (quirks mode): a table opened in a `p`
    # (it goes into the `p` there), under a search form a `div`'s close popped (the form pointer
    # stays set), `</br>`, a tracking pixel in a `noscript`
    "html-quirks": (b"<div id=search><form action=/q><input name=q></div>\n",
                    b"<div class=box><p>Harbour records<table border=1><tr><td>harbour wall</td><td>held the tide"
                    b"</td></tr></table></div>\n<p>The harbour wall held the <b>tide</b> back.</br>Noted in 1887.</p>"
                    b"\n<noscript><img src=/pixel.gif></noscript>\n" * 4900),
    # sections as current pages write them: a select of options with their end tags left out, a
    # template of a table's row, an SVG icon with a title (its path left unclosed), a MathML
    # formula, ruby with `</rt>` left out, an old script escaped with `<!--`
    "html-modern": (b"<!DOCTYPE html>",
                    (b"<div class=filters><select name=port><option>Bristol<option>Leith<option selected>Whitby"
                     b"</select></div>\n<template id=row><tr><td class=name></td><td class=year></td></tr></template>\n"
                     b"<p><svg class=icon viewBox='0 0 8 8'><title>Anchor</title><path d='M4 0v8'></svg> The harbour"
                     b" wall held <math><mi>h</mi><mo>=</mo><mn>3</mn></math> metres of <ruby>\xe6\xbd\xae<rt>shio"
                     b"</ruby> back.</p>\n<script><!-- document.write('<script src=/count.js></script>'); //--></script>\n")
                    * 2309),
    # a page laid out in a table, as old sites and mail write it: a column of links, then all its
    # text in one cell, in a `font`
    "html-layout": (b"<center><table width=728 border=0><tr><td valign=top class=nav><a href=/>Home</a><br>"
                    b"<a href=/news>News</a></td><td class=content><font face=Arial size=2>",
                    (b"<h2>The harbour</h2>\n" + b"<p>The harbour wall held the <b>tide</b> back, and the town"
                     b" <font color=navy>slept</font>.</p>\n" * 4) * 2600),
    # a forum's page: each post a table in the page's one cell
    "html-forum": (b"<table width=100% class=forumline><tr><td class=row1>",
                   b"<table class=post width=100%><tr><td class=author><b>harbourmaster</b><br>Posts: 12</td>"
                   b"<td class=body>The harbour wall held the <b>tide</b> back, and the town slept behind it.<br>"
                   b"<br>It held again last night.</td></tr></table>\n" * 5000),
    # one table of short rows
    "html-table": (b"<table>", b"<tr><td>harbour wall</td><td>held the tide</td><td>1887</td></tr>\n" * 17246),
    # one table as a page writes it: in a wrapping div, a header row group, cells closed only
    # implicitly or holding inline markup, rows and columns spanned
    "html-table-page": (b"<div id=page><table class=data><thead><tr><th>Place<th>What<th>Year</thead><tbody>\n",
                        (b"<tr class=odd><td rowspan=2><a href='/harbour'>harbour wall</a><td colspan=2>held the"
                         b" <b>tide</b> back\n<tr><td>1887<td><i>stone</i>\n") * 9362),
    # short paragraphs in one form around the page, as ASP.NET writes it
    "html-form": (b"<form method=post action='./Default.aspx' id=form1><div class=aspNetHidden><input type=hidden"
                  b" name=__VIEWSTATE id=__VIEWSTATE value='dDwtMTA4MTM2'></div><div id=page>", _PARAGRAPH * 12945),
    # one large `pre` of short lines of code
    "html-pre": (b"<div class=highlight><pre class=code>\n",
                 b"    wall = harbour.hold(tide, town=\"slept\")  # &lt;behind it&gt;\n\n" * 15420),
    # a page in Windows-1252, not UTF-8
    "html-cp1252": (b"", "<p>The harbour wall held the tide, café crème à la française.</p>\n".encode("cp1252") * 15420),
    # Markdown: a mail thread quoted whole (one blockquote of short paragraphs)
    "markdown-quote": (b"", b"> The harbour wall held the *tide* back, and the town slept behind it.\n> It held again"
                            b" last night.\n>\n" * 10382),
    # Markdown: a reply quoting a reply whole (a blockquote of one blockquote of short paragraphs)
    "markdown-quote-nested": (b"> On Monday, the harbour master wrote:\n",
                              b"> > The harbour wall held the *tide* back, and the town slept behind it.\n"
                              b"> > It held again last night.\n> >\n" * 9799),
    # Markdown: a reply quoting a mail with no blank line in it (a paragraph of a quote in a quote)
    "markdown-quote-nested-paragraph": (b"> On Monday, the harbour master wrote:\n",
                                        b"> > The harbour wall held the *tide* back, and the town slept behind it.\n" * 14364),
    # Markdown: a mail quoted whole with no blank line in it (one paragraph of the whole page)
    "markdown-quote-paragraph": (b"", b"> The harbour wall held the *tide* back, and the town slept behind it.\n" * 14768),
    # one indented code block, blank lines within it
    "markdown-code": (b"", b"    wall = harbour.hold(tide, town='slept')  # behind it\n\n" * 18078),
    # one fenced code block (a log or a program pasted in), never closed: the rest of the page
    "markdown-fence": (b"```python\n", b"    wall = harbour.hold(tide, town='slept')  # behind it\n" * 18078),
    # one raw HTML block: a table pasted in, no blank line in it
    "markdown-html": (b"<table>\n", b"<tr><td>harbour wall</td><td>held the tide</td><td>1887</td></tr>\n" * 15887),
}


def _log_line(rnd: random.Random) -> bytes:
    return (f"2026-12-05T12:{rnd.randrange(60):02d}:{rnd.randrange(60):02d}.{rnd.randrange(1000):03d}Z INFO"
            f" [worker-{rnd.randrange(8)}] GET /api/v1/items/{rnd.randrange(10**6)}?session={rnd.getrandbits(32):08x}"
            f" {rnd.choice((200, 200, 304, 404))} {rnd.randrange(2000)}ms\n").encode()


def _blob_line(rnd: random.Random) -> bytes:
    """A log line, one in 500 carrying a blob longer than a chunk (a payload dumped whole)."""
    blob = b" payload=" + rnd.randbytes(4_500).hex().encode() if rnd.random() < 0.002 else b""
    return _log_line(rnd).rstrip(b"\n") + blob + b"\n"


def _word_line(rnd: random.Random) -> bytes:
    return "".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randrange(4, 12))).encode() + b"\n"


_PROSE = "the harbour wall held tide back and town slept behind it boats rode at anchor".split()


def _wrapped_line(rnd: random.Random) -> bytes:
    words = [rnd.choice(_PROSE) + ("." if rnd.random() < 0.1 else "") for _ in range(12)]
    return " ".join(words).capitalize()[:72].rstrip().encode() + b"\n"


def _hyphenated_line(rnd: random.Random) -> bytes:
    words = ["".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randrange(3, 11))) for _ in range(9)]
    return " ".join(words).encode() + b"-\n"  # the last word goes on on the next line


def _list_line(rnd: random.Random) -> bytes:
    return f"- [Tide table {rnd.randrange(10**6)}](https://example.org/tides/{rnd.getrandbits(32):08x}) held back\n".encode()


#: Text files of lines, each line drawn afresh: a server log (a session id and numbers on every
#: line), a word list, a distinct word a line (a page of distinct tokens), and prose wrapped at
#: 72 characters with no blank line (one paragraph of sentences, as text dumped from a PDF), as
#: plain text and as Markdown, distinct words hyphenated at every line end (a word across each
#: line break, as a typeset book's text), and a Markdown list of links (one list, an item a line).
_LINES = {"text-log": _log_line, "text-log-blobs": _blob_line, "text-words": _word_line,
          "text-wrapped": _wrapped_line, "markdown-wrapped": _wrapped_line, "text-hyphenated": _hyphenated_line,
          "markdown-list": _list_line}


def _write(path: Path, size: int, binary: bool, name: str) -> None:
    if name in _LINES:
        rnd, line = random.Random(7), _LINES[name]
        with open(path, "wb") as f:
            written = 0
            while written < size:
                written += f.write(b"".join(line(rnd) for _ in range(1000))[: size - written])
        return
    head, block = _BLOCKS.get(name, (b"", b"harbour wall tide " * 58254))  # about 1 MiB
    with open(path, "wb") as f:
        if binary:
            f.write(b"\x00" * 64)
        written = f.write(head)
        while written < size:
            written += f.write(block[: size - written])


def _peak(folder: Path, python: str, name: str, size: int, binary: bool, suffix: str = ".txt",
          reader: bool = False, chunk: bool = False) -> int:
    corpus, home = folder / f"corpus-{name}", folder / f"home-{name}"
    if not corpus.exists():  # written once, read by every round
        corpus.mkdir()
        _write(corpus / f"{name}{suffix}", size, binary, name)
    subprocess.run(["rm", "-rf", str(home)], check=True)  # a fresh data directory per run
    env = {**os.environ, "INDX_HOME": str(home), "INDX_CORPUS": str(corpus)}
    # run in `folder`: `-c` puts the working directory first on the path, and a tree's checkout
    # there would be imported in place of the interpreter's own install
    command = [python, "-c", READER_PROBE, str(corpus / f"{name}{suffix}"), _MEDIA_TYPES[suffix]] if reader \
        else [python, "-c", PROBE, ",".join(STAGES + (("chunk_map",) if chunk else ()))]
    done = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["success"], done.stderr[-2000:]
    return result["peak"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--formats", default="binary,text,markdown,html",
                        help="of binary, text, markdown, html, " + ", ".join([*_LINES, *_BLOCKS]))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--against", help="another interpreter whose cases run beside this one's")
    parser.add_argument("--reader", action="store_true", help="the reader alone, its peak above the process before it")
    parser.add_argument("--chunk", action="store_true", help="the chunk stage too (`chunk_map`), after the read")
    args = parser.parse_args()
    size = args.mb << 20
    pythons = {"this tree": sys.executable, **({args.against: args.against} if args.against else {})}
    cases = {"binary": (True, ".txt"), "text": (False, ".txt"), "markdown": (False, ".md"), "html": (False, ".html"),
             **{name: (False, ".md" if name.startswith("markdown") else ".txt") for name in _LINES}, **{name: (False, ".md" if name.startswith("markdown") else ".html") for name in _BLOCKS}}
    above = "the process before the read" if args.reader else "a one-line file's"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in args.formats.split(","):
            binary, suffix = cases[name]
            ratios: dict[str, list[float]] = {tree: [] for tree in pythons}
            for _ in range(args.rounds):
                for tree, python in pythons.items():
                    baseline = 0 if args.reader else _peak(folder, python, "baseline", 32, binary=False, chunk=args.chunk)
                    peak = _peak(folder, python, name, size, binary, suffix, reader=args.reader, chunk=args.chunk)
                    ratios[tree].append((peak - baseline) / size)
            print(f"{name} file of {args.mb} MiB, peak above {above}, median of {args.rounds}: " + ", ".join(
                f"{tree} {statistics.median(r):.2f}x ({' '.join(f'{x:.2f}' for x in r)})" for tree, r in ratios.items()),
                flush=True)


if __name__ == "__main__":
    main()
