"""The `markdown`, `html` and `text` chunkers: real entry points, real corpus files, spans."""

import base64
import codecs
import mmap
import random
import re
from pathlib import Path

import pytest

from indx_assets.pipeline.chain import ChainConfig, load_chain
from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.chunkers.base import DEFAULT_MAX_TOKENS, ChunkerSettings
from indx_assets.pipeline.chunkers.html import HtmlChunker
from indx_assets.pipeline.chunkers.markdown import MarkdownChunker
from indx_assets.pipeline.chunkers.text import TextChunker
from indx_assets.pipeline.chunking.elements import NarrativeText, Table
from indx_assets.pipeline.chunking.page_numbers import PAGE_NUMBER
from indx_assets.pipeline.read_and_chunk import encode_bytes
from indx_assets.pipeline.readers.html import html_blocks
from indx_assets.pipeline.tokenizer import minilm_tokenizer

SUFFIXES = {".md": "markdown", ".html": "html", ".htm": "html", ".txt": "text"}
MARKDOWN = """# Trams

Zurich runs trams.

## Fleet

| City | Trams |
| --- | --- |
| Zurich | 270 |

```python
print("hello")
```

### Depots

- Oerlikon depot
- Wollishofen depot

# Buses

Buses fill the gaps.
"""


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())


def test_markdown_structure_becomes_typed_chunks_with_a_section_tree() -> None:
    page = PageOutput(1, MARKDOWN)
    (claim,) = MarkdownChunker().chunk(MARKDOWN.encode(), "text/markdown", (page,))
    pieces = claim.pieces
    types = [p.chunk_type for p in pieces]
    assert "table" in types and "code" in types
    table = pieces[types.index("table")]
    # a span runs from a chunk's first word to its last, and the text is that slice when it fits
    assert MARKDOWN[table.start : table.end] == "City | Trams |\n| --- | --- |\n| Zurich | 270"
    assert all(p.text == MARKDOWN[p.start : p.end] for p in pieces)
    code = pieces[types.index("code")]
    assert code.text == '```python\nprint("hello")\n```' == MARKDOWN[code.start : code.end]  # its language is a word
    depots = next(p for p in pieces if "Oerlikon" in p.text)
    assert depots.metadata["section_path"] == ["Trams", "Fleet", "Depots"]
    fleet = pieces[types.index("table")].metadata
    assert fleet["section_title"] == "Fleet" and depots.metadata["parent_section_id"] == fleet["section_id"]
    # small sections combine (as in `unstructured`); the chunk belongs to the section it opens with
    assert pieces[-1].text == "Depots\n\n- Oerlikon depot\n- Wollishofen depot\n\n# Buses\n\nBuses fill the gaps."
    assert pieces[-1].metadata["section_title"] == "Depots"
    assert all(p.bbox_reason == "no_geometry" for p in pieces)
    starts = [p.start for p in pieces]
    assert starts == sorted(starts)


def test_a_quoted_mail_s_blank_quote_lines_are_no_words_of_its_chunks() -> None:
    """A blank line of a blockquote (`>` alone, `> >` in a quote within a quote, `  >` in a
    list item) is the quote's markup, as its other lines' markers are: each was an element of
    its own, a `>` between the quoted paragraphs of every chunk."""
    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    text = ("> On Monday the harbourmaster wrote:\n>\n> > The wall held the tide.\n> >\n> > It held again.\n> \n"
            "> Good news.\n\n- > A quoted item.\n  >\n  > Its second paragraph.\n")
    assert [e.text for e in markdown_elements(text)] == [
        "On Monday the harbourmaster wrote:", "The wall held the tide.", "It held again.", "Good news.",
        "A quoted item.", "Its second paragraph."]
    # past the parser's nesting limit all is kept as text, a line of `>` (a prompt) too
    deep = "- " * 12 + "x\n```\n>>>\n>\n```\n"
    assert [e.text for e in markdown_elements(deep)] == [deep.removesuffix("\n")]
    thread = "> On Monday the harbourmaster wrote:\n>\n" + "> > The wall held the tide, and the town slept.\n> >\n" * 200
    (claim,) = MarkdownChunker().chunk(thread.encode(), "text/markdown", (PageOutput(1, thread),))
    # a chunk is cut from the page, markers and all, from a word to a word: of the 17 chunks it
    # was, 15 opened on a `>` alone and two ended on one (15 chunks now)
    assert all(thread[p.start] in "OT" and thread[p.end - 1] == "." for p in claim.pieces), claim.pieces


def test_chain_options_reach_the_chunkers_and_bad_options_fail_at_configuration() -> None:
    text = ("A sentence of prose that repeats. " * 40 + "\n\n") * 3
    config = ChainConfig(options={"text": {"strategy": "basic", "max_characters": 300, "overlap": 20}})
    encoded = encode_bytes(text.encode(), source_id="x.txt", chain=load_chain(config))
    chunks = encoded.chunk_map.chunks
    assert {c.chunker for c in chunks} == {"text"} and len(chunks) > 3
    assert all(len(c.piece.text) <= 300 for c in chunks)
    for bad, name in (({"max_tokens": 0}, "max_tokens"), ({"strategy": "by_page"}, "strategy"), ({"colour": 1}, "colour"),
                      ({"join_under": 0}, "join_under"), ({"paragraph_starts_chunk": "half"}, "paragraph_starts_chunk")):
        with pytest.raises(ValueError, match=name):
            load_chain(ChainConfig(options={"markdown": bad}))


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("notes.md", MARKDOWN.encode(), "markdown"),
        ("page.html", b"<html><body><h1>Hi</h1><p>Some text here.</p></body></html>", "html"),
        ("notes.txt", b"Plain text.\n\nAnother paragraph.", "text"),
    ],
)
def test_discovered_chunkers_beat_page_for_their_media_types(name: str, content: bytes, expected: str) -> None:
    chain = load_chain(ChainConfig())
    assert chain.names.index(expected) < chain.names.index("page")
    encoded = encode_bytes(content, source_id=name, name=name, chain=chain)
    assert {c.chunker for c in encoded.chunk_map.chunks} == {expected}


@pytest.mark.parametrize("chunker", [MarkdownChunker(), HtmlChunker(), TextChunker()])
def test_bad_pages_are_declined_not_raised(chunker) -> None:
    media = next(iter(chunker.media_types))
    pages = (
        PageOutput(1, "", status="empty"),
        PageOutput(2, "", status="failed", reason="binary"),
        PageOutput(3, "   \n\n  "),
    )
    assert chunker.chunk(b"\x00\x01\x02", media, pages) == ()
    assert chunker.chunk(b"text", "application/pdf", (PageOutput(1, "text"),)) == ()
    # html: blocks that disagree with the page text (someone else's reader) are declined
    if isinstance(chunker, HtmlChunker):
        assert chunker.chunk(b"<p>one</p>", media, (PageOutput(1, "two"),)) == ()
        # found as the blocks are read: at a separator, past the last block, or before the page's end
        for text in ("one two", "one\n\ntwo\n\nthree", "one", "one\n\ntwo!"):
            assert chunker.chunk(b"<p>one</p><p>two</p>", media, (PageOutput(1, text),)) == (), text
        assert chunker.chunk(b"<p>one</p><p>two</p>", media, (PageOutput(1, "one\n\ntwo"),)) != ()
    # markdown: raw HTML is its source, never parsed, so nesting 20,000 deep is only text
    if isinstance(chunker, MarkdownChunker):
        from indx_assets.pipeline.document import DocumentChunk
        from indx_assets.pipeline.fidelity import measure_page

        deep = "# Notes\n\n" + "<div>\n" * 20_000 + "text\n"
        (claim,) = chunker.chunk(deep.encode(), media, (PageOutput(1, deep),))
        chunks = [DocumentChunk("deep.md", f"page:1/chunk:{i}", p.text or "", page=1)
                  for i, p in enumerate(claim.pieces)]
        assert measure_page(1, deep, chunks).passes


_WORD = re.compile(r"\S+")


@pytest.mark.slow
def test_every_corpus_text_file_is_chunked_within_the_limit_in_order(corpus: Path, cut_corpus_file) -> None:
    files = corpus_files(corpus)
    assert files, "no markdown/html/text files in the corpus"
    tok = minilm_tokenizer()
    left_out: dict[str, int] = {}
    for path in files:
        encoded = cut_corpus_file(path)
        expected = SUFFIXES[path.suffix.lower()]
        by_page = {p.page: p.text for p in encoded.read.pages}
        chunks = encoded.chunk_map.chunks
        if not any(t.strip() for t in by_page.values()):
            continue
        assert {c.chunker for c in chunks} == {expected}, path
        previous_end: dict[int, int] = {}
        for mapped in chunks:
            piece, text = mapped.piece, by_page[mapped.page]
            assert piece.text and piece.text.strip(), path
            assert tok.count(piece.text) <= DEFAULT_MAX_TOKENS, (path, piece.text[:80])
            assert piece.start is not None and 0 <= piece.start < piece.end <= len(text), path
            # in order: each chunk starts at or after the start of the previous one
            assert piece.start >= previous_end.get(mapped.page, 0) - (len(piece.text) if piece.metadata.get("is_continuation") else 0)
            previous_end[mapped.page] = piece.start
            if expected == "text":  # paragraphs are verbatim, so every chunk is its own slice
                assert piece.text == text[piece.start : piece.end], path
            # its words are found, in order, inside its span
            cursor, span = piece.start, text[piece.start : piece.end]
            skip = 0
            for word in _WORD.findall(piece.text):
                at = text.find(word, cursor, piece.end)
                if at >= 0:
                    cursor = at + len(word)
                else:
                    skip += 1
            assert skip <= len(piece.text.split()) // 2, (path, piece.text[:80], span[:80])
        if expected in ("text", "html"):
            # covered: every non-space character of the page lies in some chunk's span, but
            # for the page numbers of a document printed in pages (HTML page furniture)
            covered = bytearray(max(len(t) for t in by_page.values()) + 1)
            for mapped in chunks:
                covered[mapped.piece.start : mapped.piece.end] = b"\x01" * (mapped.piece.end - mapped.piece.start)
            for page_text in by_page.values():
                missing = [m.group() for m in _WORD.finditer(page_text) if not covered[m.start()] and m.group() != "|"]
                assert all(expected == "html" and PAGE_NUMBER.fullmatch(word) for word in missing), (path, missing[:5])
                left_out[path.name] = len(missing)
    assert left_out.get("example-10k.html", 0) > 10  # its printed page numbers (a chunk running over one holds it)


def _long_line(topic: str, sentences: int = 8) -> str:
    return " ".join(f"The {topic} paragraph says thing number {i} about {topic}." for i in range(sentences))


@pytest.mark.parametrize("chunker", [MarkdownChunker(), TextChunker()])
def test_long_lines_are_paragraphs_but_hard_wrapped_prose_is_one(chunker) -> None:
    # one paragraph per line, no blank lines between (a Wikipedia dump, a chat log): chunks end at line ends
    lines = [_long_line(t) for t in ("trams", "buses", "ferries")]
    text = "\n".join(lines)
    media = next(iter(chunker.media_types))
    cut = type(chunker)(ChunkerSettings.from_options(max_tokens=140, new_after_n_tokens=100))
    (claim,) = cut.chunk(text.encode(), media, (PageOutput(1, text),))
    assert [p.text for p in claim.pieces] == lines
    assert [(p.start, p.end) for p in claim.pieces] == [(text.index(line), text.index(line) + len(line)) for line in lines]
    # hard-wrapped prose (short lines) is one paragraph: a chunk ends at a sentence end, not a line end
    wrapped = "\n".join(re.findall(r".{1,70}(?:\s|$)", " ".join(lines)))
    (claim,) = cut.chunk(wrapped.encode(), media, (PageOutput(1, wrapped),))
    assert len(claim.pieces) > 1 and all(p.text.endswith(".") for p in claim.pieces)
    # so is prose wrapped wider than an editor would (text dumped from a PDF) where a sentence
    # runs on into a line that starts in lower case
    wide = "\n".join(re.findall(r".{1,120}(?:\s(?=[a-z])|$)", " ".join(lines).lower()))
    assert max(map(len, wide.splitlines())) > 100
    (claim,) = cut.chunk(wide.encode(), media, (PageOutput(1, wide),))
    assert len(claim.pieces) > 1 and all(p.text.endswith(".") for p in claim.pieces)


def test_a_long_paragraph_fills_the_chunk_of_the_line_before_it_with_whole_sentences() -> None:
    text = "Fleet notes\n\n" + _long_line("trams", 12)
    settings = ChunkerSettings.from_options(max_tokens=80, new_after_n_tokens=60)
    (claim,) = TextChunker(settings).chunk(text.encode(), "text/plain", (PageOutput(1, text),))
    first, *rest = claim.pieces
    assert first.text.startswith("Fleet notes\n\nThe trams paragraph says thing number 0")
    assert all(p.text.endswith(".") and minilm_tokenizer().count(p.text) <= 80 for p in claim.pieces)
    assert "".join(p.text for p in rest).replace(" ", "") in text.replace(" ", "")
    # without sentence units the paragraph is isolated and the heading line is a chunk of its own
    whole = ChunkerSettings.from_options(max_tokens=80, new_after_n_tokens=60, sentence_units=False)
    (claim,) = TextChunker(whole).chunk(text.encode(), "text/plain", (PageOutput(1, text),))
    assert claim.pieces[0].text == "Fleet notes"


def test_a_heading_or_a_stray_sentence_does_not_stand_alone() -> None:
    # each too small to be found by what it means: a heading whose section holds only a
    # subsection, and a line left behind a chunk that had passed the soft maximum
    def cut(chunker: type, text: str, media: str, **options: object) -> list[str]:
        settings = ChunkerSettings.from_options(max_tokens=80, new_after_n_tokens=60, **options)
        (claim,) = chunker(settings).chunk(text.encode(), media, (PageOutput(1, text),))
        assert all(p.text == text[p.start : p.end] for p in claim.pieces)
        return [p.text for p in claim.pieces]

    markdown = "# Release 2\n\n## Fixes\n\n" + _long_line("fixes", 6) + "\n"
    assert cut(MarkdownChunker, markdown, "text/markdown", join_under=None)[0] == "Release 2"
    joined = cut(MarkdownChunker, markdown, "text/markdown")
    assert joined[0].startswith("Release 2\n\n## Fixes\n\nThe fixes paragraph says thing number 0")
    prose = _long_line("trams", 7) + "\n\nHe left.\n\n" + _long_line("buses", 6) + "\n"
    assert "He left." in cut(TextChunker, prose, "text/plain", join_under=None)
    first, second = cut(TextChunker, prose, "text/plain")
    assert first.endswith("thing number 6 about trams.\n\nHe left.") and second.startswith("The buses paragraph")


def test_a_small_chunk_joins_no_table_and_no_other_page_when_pages_are_kept_apart() -> None:
    def texts(elements: list, **options: object) -> list[str]:
        settings = ChunkerSettings.from_options(max_tokens=80, new_after_n_tokens=60, **options)
        return [" ".join(chunk.text.split()) for chunk in settings.chunk(elements)]  # sentence units join by \n\n

    long, short = _long_line("trams", 7), "He left."
    pages = [NarrativeText(long, page_number=1), NarrativeText(short, page_number=2)]
    assert texts(pages) == [f"{long} {short}"]
    assert texts(pages, multipage_sections=False) == [long, short]
    table = [NarrativeText(long), Table("Depot Trams"), NarrativeText(short)]
    assert texts(table) == [long, "Depot Trams", short]


def test_a_repeated_passage_is_cut_the_same_way_whatever_comes_before_it() -> None:
    passage = _long_line("ferries", 9)
    text = f"Short note one.\n\n{passage}\n\nAnother note. A second short note here.\n\n{passage}"
    tok = minilm_tokenizer()

    def cuts(**options: object) -> tuple[list[int], list[int]]:
        """Where chunks start inside each copy, relative to the copy's start."""
        settings = ChunkerSettings.from_options(max_tokens=80, new_after_n_tokens=60, **options)
        (claim,) = TextChunker(settings).chunk(text.encode(), "text/plain", (PageOutput(1, text),))
        at = (text.index(passage), text.rindex(passage))
        return tuple([p.start - a for p in claim.pieces if a <= p.start < a + len(passage)] for a in at)  # type: ignore[return-value]

    first, second = cuts()
    assert tok.count(passage) > 60 and first == second == [0, passage.index("The ferries paragraph says thing number 7")]
    # packing across paragraphs instead shifts the cuts by whatever text came before the passage
    first, second = cuts(paragraph_starts_chunk=None)
    assert first != second


@pytest.mark.parametrize("content", [
    "<h1>Caf\u00e9</h1><p>Cr\u00e8me br\u00fbl\u00e9e \u00e0 la fran\u00e7aise.</p>".encode("cp1252"),
    codecs.BOM_UTF16_LE + "<h1>Caf\u00e9</h1><p>Cr\u00e8me \u00e0 la fran\u00e7aise.</p>".encode("utf-16-le"),
    codecs.BOM_UTF8 + "<h1>Titre</h1><p>\x01\x01\x01\x01\x01caf\u00e9</p>".encode(),  # a mark says it is text
], ids=["cp1252", "utf-16", "bom-controls"])
def test_html_in_another_encoding_is_cut_alike_from_its_bytes_and_from_a_map_asked_twice(
        tmp_path: Path, content: bytes) -> None:
    """The chunker decodes a page not in UTF-8 as the reader does (into a file in UTF-8, whose
    map it walks), from the bytes or from a map of the stored file, and leaves the map where it
    was for a chunker after it."""
    from indx_assets.pipeline.readers import ReaderConfig
    from indx_assets.pipeline.readers.html import read_html

    (page,) = read_html(content, ReaderConfig()).pages
    assert page.status == "ok"
    chunker = HtmlChunker(ChunkerSettings.from_options())
    from_bytes = [(type(e).__name__, e.text) for e in chunker.page_elements(content, page) or ()]
    assert [kind for kind, _ in from_bytes] == ["Title", "NarrativeText"]
    (tmp_path / "page.html").write_bytes(content)
    with open(tmp_path / "page.html", "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        for _ in range(2):
            assert [(type(e).__name__, e.text) for e in chunker.page_elements(mapped, page) or ()] == from_bytes
            assert mapped.tell() == 0


def test_the_page_numbers_of_html_printed_in_pages_are_left_out_of_its_chunks() -> None:
    # a filing converted from print: each page's number sits just before a CSS page break
    def page(n: int, number: str, brk: str = '<hr style="page-break-after:always">', sentences: int = 3) -> str:
        return f"<p>{_long_line(f'clause{n}', sentences)}</p><p style='text-align:center'>{number}</p>{brk}"

    html = (
        "<html><body>"
        + page(1, "1", sentences=1)  # short pages: one chunk runs over this page's number
        + page(2, "- 2 -", "", sentences=1)  # the break is the next element's, before it
        + '<div style="page-break-before: always"><p>The answer is</p><p>42</p></div>'  # mid-page: content
        + '<div style="display:none; page-break-after:always"></div>'  # hidden: breaks no page
        + f"<p>{_long_line('clause3', 3)}</p><table><tr><td>Total</td><td>7</td></tr></table>"
        + '<hr style="break-after: page">'
        + page(4, "iv", "")  # the last page: its number ends the document
        + "</body></html>"
    )
    blocks = html_blocks(html)
    assert [b.text for b in blocks if b.ends_page] == ["1", "- 2 -", "Total | 7", "iv"]
    text = "\n\n".join(b.text for b in blocks)
    settings = ChunkerSettings.from_options(max_tokens=60, new_after_n_tokens=40)
    (claim,) = HtmlChunker(settings).chunk(html.encode(), "text/html", (PageOutput(1, text),))
    chunks = [p.text for p in claim.pieces]
    assert not [c for c in chunks if re.search(r"(?m)^\W*(?:1|- 2 -|iv)\W*$", c)], chunks
    assert any("42" in c for c in chunks) and any("Total | 7" in c for c in chunks)
    # the page text keeps them; the chunk whose span runs over one holds its own text instead
    assert "\n\n- 2 -\n\n" in text and text.endswith("\n\niv")
    (spanning,) = [p for p in claim.pieces if p.start < text.index("\n\n1\n\n") < p.end]
    assert spanning.text == "The clause1 paragraph says thing number 0 about clause1.\n\n" \
                            "The clause2 paragraph says thing number 0 about clause2."
    # left out, but named as the page's furniture: no word of the page is lost
    from indx_assets.pipeline.document import DocumentChunk
    from indx_assets.pipeline.fidelity import measure_page

    chunks = [DocumentChunk("printed.html", f"page:1/chunk:{i}", p.text or "", p.chunk_type or "content", 1,
                            metadata=p.metadata) for i, p in enumerate(claim.pieces)]
    assert sorted(n for c in chunks for n in c.metadata.get("page_footer", [])) == ["- 2 -", "1", "iv"]
    # each on the last chunk that starts at or before it (named as the chunks stream out)
    anchors = [p for p in claim.pieces if p.chunk_type != "sentence" and p.start is not None]
    for number, at in (("1", text.index("\n\n1\n\n") + 2), ("- 2 -", text.index("- 2 -")), ("iv", len(text) - 2)):
        (holder,) = [p for p in claim.pieces if number in p.metadata.get("page_footer", [])]
        assert holder is [p for p in anchors if p.start <= at][-1]
    result = measure_page(1, text, chunks)
    assert (result.foreign, result.lost) == (0, 0)


def test_spans_left_out_of_a_page_are_run_over_as_a_scan_of_them_all_finds() -> None:
    """`LeftOut` answers with a binary search what a scan of every left-out span answered (one
    span a printed page, asked for each sentence of the page)."""
    from indx_assets.pipeline.chunkers.base import LeftOut

    rng = random.Random(3)
    for _ in range(400):
        spans = [(a, a + rng.randrange(0, 30)) for a in (rng.randrange(1000) for _ in range(rng.randrange(0, 40)))]
        left_out = LeftOut(spans[:5])
        for span in spans[5:]:
            left_out.add(span)
        for _ in range(60):
            a = rng.randrange(1040)
            span = (a, a + rng.randrange(0, 60))
            assert left_out.runs_over(span) == any(span[0] < e and s < span[1] for s, e in spans), (spans, span)


def test_a_page_of_many_printed_pages_names_each_page_number_on_the_chunk_before_it() -> None:
    """An HTML book of 3,000 printed pages, each ending in its number, cut into sentences: each
    number is named once, on the last chunk that starts before it, and no sentence holds one."""
    paragraph = "The harbour wall held the tide back. The town slept behind it, and the boats rode at anchor."
    html = "<html><body>" + "".join(f'<p>{paragraph} Page {i} ends.</p><p style="page-break-after: always">{i}</p>'
                                    for i in range(1, 3001)) + "</body></html>"
    chain = load_chain(ChainConfig(options={"html": {"sentences": True}}))
    encoded = encode_bytes(html.encode(), source_id="book.html", name="book.html", chain=chain)
    (page,) = encoded.read.pages
    pieces = [m.piece for m in encoded.chunk_map.chunks]
    named = [n for p in pieces for n in p.metadata.get("page_footer", [])]
    assert sorted(named, key=int) == [str(i) for i in range(1, 3001)]
    anchors = [p for p in pieces if p.chunk_type != "sentence"]
    for piece in anchors:
        for number in piece.metadata.get("page_footer", []):
            at = page.text.index(f"\n\n{number}\n\n" if int(number) < 3000 else f"\n\n{number}", piece.start) + 2
            assert piece is [p for p in anchors if p.start <= at][-1]
    sentences = [p for p in pieces if p.chunk_type == "sentence"]
    assert len(sentences) > 6000 and not [p for p in sentences if re.fullmatch(r"\d+", p.text.strip())]


def test_inline_image_data_in_markdown_is_elided_from_chunks_and_sentences() -> None:
    # notebooks and some editors export images inline: 80 kB of base64 that is not text
    payload = base64.b64encode(random.Random(0).randbytes(60_000)).decode()
    text = ("# Figure\n\nThe diagram below shows the flow.\n\n![flow](data:image/png;base64," + payload
            + ")\n\nAfter the figure, more text follows. The [raw data](data:text/csv," + "a%2Cb%0A1%2C2" * 8 + ") is attached.\n")
    settings = ChunkerSettings.from_options(sentences=True)
    (claim,) = MarkdownChunker(settings).chunk(text.encode(), "text/markdown", (PageOutput(1, text),))
    chunks = [p for p in claim.pieces if p.chunk_type == "content"]
    assert [c.text for c in chunks] == [
        "Figure\n\nThe diagram below shows the flow.\n\n![flow](data:image/png;base64,…)\n\n"
        "After the figure, more text follows. The [raw data](data:text/csv,…) is attached."
    ]
    assert chunks[0].start == 2 and chunks[0].end == len(text) - 1  # its span still covers the page
    sentences = [p.text for p in claim.pieces if p.chunk_type == "sentence"]
    assert "The diagram below shows the flow." in sentences and "After the figure, more text follows." in sentences
    assert not [s for s in sentences if "base64," in s or "%2C" in s]


SECTIONS = ("\n\n# Pilotage\n\nThe harbour pilot boards at the fairway buoy.\n\n"
            "## The bar\n\nDeep-draught ships cross the bar at high water only.\n")


@pytest.mark.parametrize("nested", [
    "\n".join("  " * i + f"- level {i} item" for i in range(10)),  # a list 10 deep
    "\n".join("> " * (i + 1) + f"quote {i}" for i in range(20)),  # a blockquote 20 deep
    "\n".join("  " * i + f"- level {i} item" for i in range(30)),  # far past the limit
], ids=["list-10", "quote-20", "list-30"])
def test_text_past_the_markdown_parsers_nesting_limit_reaches_chunks_as_plain_text(nested: str) -> None:
    from indx_assets.pipeline.document import Document
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import to_document

    text = nested + SECTIONS
    encoded = encode_bytes(text.encode(), source_id="deep.md", chain=load_chain(ChainConfig(order=("markdown",))))
    document: Document = to_document(encoded)
    assert {c.chunker for c in document.chunks} == {"markdown"}
    assert any("cross the bar at high water only" in c.content for c in document.chunks)
    result = measure("deep.md", encoded.read.pages, document.chunks)
    assert result.totals()["lost"] == 0 and result.totals()["foreign"] == 0 and result.passes
    # the page's record says why part of it is plain text
    (page,) = document.metadata["pages"]
    assert "nested deeper than the Markdown parser's limit of 20 levels" in page["unstructured"]


def test_markdown_nested_within_the_limit_keeps_its_structure_and_no_reason() -> None:
    from indx_assets.pipeline.read_and_chunk import to_document

    text = "\n".join("  " * i + f"- level {i} item" for i in range(9)) + SECTIONS
    document = to_document(encode_bytes(text.encode(), source_id="nine.md", chain=load_chain(ChainConfig(order=("markdown",)))))
    assert "unstructured" not in document.metadata["pages"][0]
    assert {"ListItem", "Title"} <= {t for c in document.chunks for t in c.metadata["element_types"]}


def test_every_word_of_markdown_source_reaches_its_chunks() -> None:
    from indx_assets.pipeline.document import DocumentChunk
    from indx_assets.pipeline.fidelity import measure_page

    payload = base64.b64encode(random.Random(1).randbytes(300)).decode()
    rows = "\n".join(f"| [Site {i}](https://example.org/{i}) | the site number {i} |" for i in range(40))
    text = (
        '<h3 align="center">\n  <img src="https://example.org/logo.png" height="200">\n</h3>\n\n'
        f'<p>Open-Source Tools</p> <img src="https://img.example/badge.svg?logo=data:image/svg+xml;base64,{payload}" />\n\n'
        "## Steps\n\n"
        + "".join(f"{i}. Step number {i} says what to do before the next step, at some length.\n" for i in range(1, 30))
        + "\n```html\n<!DOCTYPE html>\n```\n\n"
        f"| Section | Description |\n|-|-|\n{rows}\n\n"
        "See [the guide][guide].\n\n[guide]: https://example.org/guide\n"
    )
    settings = ChunkerSettings.from_options(max_tokens=60, new_after_n_tokens=40)
    (claim,) = MarkdownChunker(settings).chunk(text.encode(), "text/markdown", (PageOutput(1, text),))
    chunks = [DocumentChunk("page.md", f"page:1/chunk:{i}", p.text or "", p.chunk_type or "content", 1,
                            metadata=p.metadata) for i, p in enumerate(claim.pieces)]
    assert sum(c.chunk_type == "table" for c in chunks) > 2  # the table was split by rows, its header repeated
    result = measure_page(1, text, chunks)
    assert (result.foreign, result.lost, result.duplicated) == (0, 0, 0), result.examples


def test_the_overlap_the_chain_asks_for_is_named_and_not_counted_as_duplication() -> None:
    from indx_assets.pipeline.document import DocumentChunk
    from indx_assets.pipeline.fidelity import measure_page

    text = " ".join(f"word{i}" for i in range(200)) + "\n"
    settings = ChunkerSettings.from_options(max_characters=200, overlap=40)
    (claim,) = TextChunker(settings).chunk(text.encode(), "text/plain", (PageOutput(1, text),))
    assert len(claim.pieces) > 5 and all(p.metadata.get("overlap") for p in claim.pieces[1:])
    chunks = [DocumentChunk("w.txt", f"page:1/chunk:{i}", p.text or "", page=1, metadata=p.metadata)
              for i, p in enumerate(claim.pieces)]
    result = measure_page(1, text, chunks)
    assert (result.foreign, result.lost, result.duplicated) == (0, 0, 0)
    # the same repetition, not asked for, is duplication
    unasked = [DocumentChunk("w.txt", c.locator, c.content, page=1) for c in chunks]
    assert measure_page(1, text, unasked).duplicated > 30


@pytest.mark.parametrize("options", [{"max_characters": 400, "overlap": 390}, {"max_characters": 300, "overlap": 270},
                                     {"max_tokens": 80, "overlap": 70}, {"max_tokens": 100, "overlap": 95}])
def test_an_overlap_close_to_the_limit_stores_whole_words_and_the_words_it_says_it_repeats(
        corpus: Path, options: dict[str, int]) -> None:
    """A real page (a football biography with an infobox of short lines) cut with an overlap
    close to the limit. Cuts fell inside words ("nee ded"), and a chunk whose overlap was longer
    than what the chunk before it added was stored without it, while its metadata still said
    it began with one: the measure found foreign, lost and duplicated words. Now the measure
    finds none, and every overlap is the last words of the chunk before."""
    from indx_assets.pipeline.fidelity import OVERLAP_KEY, measure
    from indx_assets.pipeline.read_and_chunk import to_document

    path = corpus / "example-docs" / "norwich-city.txt"
    chain = load_chain(ChainConfig(options={"text": options}))
    encoded = encode_bytes(path.read_bytes(), source_id=path.name, name=path.name, chain=chain)
    chunks = [c for c in to_document(encoded).chunks if c.chunk_type == "content"]
    (page,) = measure(path.name, encoded.read.pages, chunks).pages
    assert (page.foreign, page.lost, page.duplicated) == (0, 0, 0), page.examples
    overlapping = [(before, chunk) for before, chunk in zip(chunks, chunks[1:]) if chunk.metadata.get(OVERLAP_KEY)]
    assert len(overlapping) > 50  # the long paragraphs are split with overlaps
    for before, chunk in overlapping:
        repeated = chunk.content[: chunk.metadata[OVERLAP_KEY]].split()
        assert repeated and before.content.split()[-len(repeated):] == repeated, chunk.locator


@pytest.mark.parametrize("name", ["eng_spa_mult.txt", "eng_spa_mult.md", "eng_spa_mult.html"])
def test_an_overlap_of_every_chunk_says_how_much_of_the_stored_text_it_is(corpus: Path, name: str) -> None:
    """A page that says one sentence over and over, every chunk starting with the end of the
    one before (`overlap_all`). A chunk stored as the page's own slice spaced its overlap as
    the page does, one space, while its `overlap` counted the chunker's blank line: the length
    ran two characters into the new text. And the measure took the most words that repeat
    the chunk before, more than the overlap on such a page: 240 words were reported lost."""
    from indx_assets.pipeline.fidelity import OVERLAP_KEY, measure
    from indx_assets.pipeline.read_and_chunk import to_document

    path = corpus / "example-docs" / "language-docs" / name
    options = {"max_characters": 300, "overlap": 100, "overlap_all": True}
    chain = load_chain(ChainConfig(options={kind: options for kind in ("text", "markdown", "html")}))
    encoded = encode_bytes(path.read_bytes(), source_id=name, name=name, chain=chain)
    chunks = [c for c in to_document(encoded).chunks if c.chunk_type != "sentence"]
    (page,) = measure(name, encoded.read.pages, chunks).pages
    assert (page.foreign, page.lost, page.duplicated) == (0, 0, 0), page.examples
    overlapping = [(before, chunk) for before, chunk in zip(chunks, chunks[1:]) if chunk.metadata.get(OVERLAP_KEY)]
    assert len(overlapping) > 5
    for before, chunk in overlapping:
        prefix = chunk.content[: chunk.metadata[OVERLAP_KEY]]
        assert prefix.strip() and before.content.endswith(prefix.strip()), (prefix, chunk.locator)
        assert prefix[-1].isspace() and not chunk.content[len(prefix)].isspace()


def _overlaps_repeat_the_chunk_before(chunks: list) -> int:
    """How many chunks name an overlap; each one's words are the last words of the chunk before."""
    from indx_assets.pipeline.fidelity import OVERLAP_KEY, tokens

    named = 0
    for before, chunk in zip(chunks, chunks[1:]):
        length = chunk.metadata.get(OVERLAP_KEY)
        if not length:
            continue
        named += 1
        repeated = [t[0] for t in tokens(chunk.content[:length])]
        assert repeated == [t[0] for t in tokens(before.content)][-len(repeated):], (chunk.content[:length], chunk.locator)
        assert chunk.content[length - 1].isspace() or not chunk.content[length:length + 1].isspace()
    return named


@pytest.mark.parametrize(("kind", "text"), [
    # the page's slice holds list and heading marks the chunker's text has not ("- ", "## ")
    ("markdown", "## 0.27.0\n\n" + "".join(f"- Fix item {i}: pass the metadata of tables on to the chunk.\n"
                                             for i in range(30)) + "\n## 0.26.0\n\n- Earlier.\n"),
    # a generated page of scripts, controls and runs: a line tabulation or a file separator ends a
    # line for the chunker and stands inside a word on the page
    ("text", ('U.S.\x1cifaihfjaiciahdedhbfbaibchagaaifdchehciejjjbajedefbdgegbhachcbaceaiecgadjahaiiffh'
              'hdjfijiddggjfdicjffcjda İstanbul supercalifragilistic   中文没有空格的句子。这是第二句。 ź\x0bx\x0b한국어 '
              'the\u2028a\ttab\tsep Prof. Dr.\n日日テ文日キ本語字本。本キ中ト字ト本文ス語中キ本本語日日中字字。トキ字語ス日ス。字日日キキ日語本本ト。ト中漢ステ'
              '日トトキ語テ文。中中文本ト漢中日字テキ文ト語ス中テ文キ本日キ字テ語文文文。。中日。 gdbjajjbecegihfhjajhgecffibfgjdbjafjjaijeebdjh'
              'egabgfabijafgdcbbicgbcijcccghiigc \x0c ß why? §1.\u2028')),
    # runs with no space, cut at a sentence end
    ("text", "Alpha beta gamma delta epsilon zeta eta theta.\n\n(Jinan)\n"
             "是人都生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以弟兄关系的精神相对待。\n\n"
             "(Klau)\nChix zox key zifyour an hu tsunxyanr thungs.\n"),
])
def test_an_overlap_names_the_words_its_stored_text_repeats(kind: str, text: str) -> None:
    """Every chunk starts with the end of the one before (`overlap_all`); one stored as the
    page's own slice names its overlap as the slice holds it. Counted in words, the length
    ran short past a list mark, came to 0 where a character split a word for the chunker
    alone (the measure then found the repeat duplicated), or took in new text after a run cut
    inside (a chunk whose every word was called repeated)."""
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import to_document

    options = {"max_characters": 80 if "Jinan" in text else 300, "new_after_n_chars": 80 if "Jinan" in text else 250,
               "overlap": 60 if "Jinan" in text else 200, "overlap_all": True}
    name = "page.md" if kind == "markdown" else "page.txt"
    encoded = encode_bytes(text.encode(), source_id=name, name=name,
                           chain=load_chain(ChainConfig(options={kind: options})))
    chunks = [c for c in to_document(encoded).chunks if c.chunk_type != "sentence"]
    assert _overlaps_repeat_the_chunk_before(chunks) >= 2
    for page in measure(name, encoded.read.pages, chunks).pages:
        assert (page.lost, page.duplicated) == (0, 0), page.examples


def test_a_page_laid_out_in_a_table_is_split_into_its_words_once() -> None:
    """Old sites lay a page out in a table: the text in one cell, its paragraphs set apart by
    `<br>`, a table nested in the cell. Split by rows, the chunks read the cell's text off the
    HTML by another rule than the reader's: words on both sides of a `<br>` ran together
    ("slept.Paragraph", 59 of them), and the nested table's rows came again after the cell
    that holds them. Now the rows are the table's own, with the reader's text of each cell."""
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import to_document

    essay = "<br><br>".join(f"Paragraph {i} says the tide rose {i} feet, and the wall held. The town slept."
                            for i in range(80))
    nested = "<table><tr><td>Harbour dues</td><td>12.50</td></tr><tr><td>Pilotage</td><td>7.25</td></tr></table>"
    page = (f"<html><body><table><tr><td><img src=logo.gif></td><td><font size=2>{essay}<p>{nested}"
            "</font></td></tr></table></body></html>")
    encoded = encode_bytes(page.encode(), source_id="essay.html", name="essay.html", chain=load_chain())
    chunks = to_document(encoded).chunks
    assert len(chunks) > 3 and all(c.chunk_type == "table" for c in chunks)
    (measured,) = measure("essay.html", encoded.read.pages, chunks).pages
    assert (measured.foreign, measured.lost, measured.duplicated) == (0, 0, 0), measured.examples
    assert sum(c.content.count("Harbour dues") for c in chunks) == 1


def test_a_corpus_page_laid_out_in_a_table_is_split_into_its_words_once(corpus: Path) -> None:
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import to_document

    path = corpus / "example-docs" / "ideas-page.html"
    chain = load_chain(ChainConfig(options={"html": {"max_characters": 500}}))
    encoded = encode_bytes(path.read_bytes(), source_id=path.name, name=path.name, chain=chain)
    chunks = to_document(encoded).chunks
    (measured,) = measure(path.name, encoded.read.pages, chunks).pages
    assert len(chunks) > 1  # it was 4: the page's two parts, then both again
    assert (measured.foreign, measured.lost, measured.duplicated) == (0, 0, 0), measured.examples


@pytest.mark.parametrize("name, heading", [
    ("prose.md", "{prose}\n---\n"),  # a setext underline under a paragraph of 100 KB
    ("page.html", "<h1>{prose}</h1>"),
])
def test_a_paragraph_read_as_a_heading_names_its_section_in_a_few_words(name: str, heading: str) -> None:
    """Every chunk carries its section's name and its parents' (`section_title`,
    `section_path`): a heading of 100 KB was copied into each, 0.3 GB of names for a 650 KB
    Markdown file, which took 3.6 GB to ingest. The name keeps the heading's first whole words
    up to `SECTION_NAME_MAX_CHARS`; the chunks still hold all its words."""
    from indx_assets.pipeline.chunkers.base import SECTION_NAME_MAX_CHARS
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import to_document

    prose = "\n".join(f"Line {i} of the harbour log, the tide held back by the wall" for i in range(1600))
    after = "\n\n".join(f"Paragraph {i} after the heading. It has two sentences." for i in range(40))
    body = heading.format(prose=prose)
    text = f"{body}\n\n{after}\n" if name.endswith(".md") else f"<html><body>{body}<p>{after}</p></body></html>"
    encoded = encode_bytes(text.encode(), source_id=name, name=name)
    chunks = to_document(encoded).chunks
    titles = {c.metadata.get("section_title") for c in chunks}
    (title,) = titles - {None}
    words = " ".join(prose.split())
    assert len(title) <= SECTION_NAME_MAX_CHARS + 1 and title.endswith("…")
    assert words.startswith(title[:-1]) and words[len(title) - 1] == " ", "whole words, no word cut"
    assert all(c.metadata.get("section_path") in ([], [title]) for c in chunks)
    (measured,) = measure(name, encoded.read.pages, chunks).pages
    assert (measured.foreign, measured.lost, measured.duplicated) == (0, 0, 0), measured.examples


def test_a_section_name_is_its_heading_s_words_or_as_many_as_fit() -> None:
    from indx_assets.pipeline.chunkers.base import SECTION_NAME_MAX_CHARS, section_name

    assert section_name("  Fleet \n and\tdepots ") == "Fleet and depots"
    assert section_name("a" * (SECTION_NAME_MAX_CHARS + 5)) == "a" * SECTION_NAME_MAX_CHARS + "…"
    assert section_name("word " * 40) == " ".join(["word"] * 40)  # 199 characters: all of it
    assert section_name("word " * 41) == " ".join(["word"] * 40) + "…"


def test_a_markdown_file_with_old_mac_line_ends_keeps_every_block_in_its_place() -> None:
    """markdown-it ends a line at a carriage return alone (as classic Mac files end lines), so
    the line offsets its source maps count do too: each block's span was the page's end, the
    code block empty and its words lost."""
    from indx_assets.pipeline.chunkers.markdown import markdown_elements
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import to_document

    text = "# Title\r\rFirst paragraph.\rStill the first.\r\r- item one\r- item two\r\r```\rcode line\r```\r"
    got = [(type(e).__name__, e.text, text[e.metadata.start : e.metadata.end]) for e in markdown_elements(text)]
    assert got == [
        ("Title", "Title", "# Title"),
        ("NarrativeText", "First paragraph.\nStill the first.", "First paragraph.\rStill the first."),
        ("ListItem", "item one", "- item one"),
        ("ListItem", "item two", "- item two"),
        ("CodeSnippet", "```\rcode line\r```", "```\rcode line\r```"),
    ]
    encoded = encode_bytes(text.encode(), source_id="mac.md", name="mac.md")
    (measured,) = measure("mac.md", encoded.read.pages, to_document(encoded).chunks).pages
    assert (measured.foreign, measured.lost, measured.duplicated) == (0, 0, 0), measured.examples


def test_a_long_run_is_held_collapsed_unless_that_leaves_it_short_enough_to_pass_for_a_heading() -> None:
    # a run of more than 64 KiB holds its text collapsed (as its chunks are cut from it) and not
    # a copy of the page's too; one mostly of whitespace keeps the page's text, which no rule
    # reads as a title or a lead-in line (found by a review: collapsed, it became a `Title`)
    from indx_assets.pipeline.chunkers.text import text_elements
    from indx_assets.pipeline.chunking.elements import Title

    words = "The harbour wall held\tthe tide.\n" * 4_000
    for text in ("Hello" + " " * 70_000 + "World", "Heading" + " " * 70_000 + "\nNext", "Chapter One\n" + "\f" * 70_000 + "\nTwo"):
        elements = list(text_elements(text))
        assert [type(e) for e in elements] == [NarrativeText] and elements[0].text == text, repr(text[:20])
    long_run, title = list(text_elements(words + "Next\n\n" + "A Heading\n"))
    assert type(long_run) is NarrativeText and long_run.text == " ".join((words + "Next").split())
    assert (long_run.metadata.start, long_run.metadata.end) == (0, len(words) + len("Next"))
    assert type(title) is Title
    # and the chunks are cut from what they were cut from before: the page's own text
    document = encode_bytes((words + "\n\nTail paragraph.\n").encode(), source_id="long.txt", media_type="text/plain")
    assert " ".join(m.piece.text for m in document.chunk_map.chunks).split() == (words + "\n\nTail paragraph.").split()


def _log_lines(count: int) -> str:
    rnd = random.Random(11)
    return "".join(f"12:{rnd.randrange(60):02d} GET /items/{rnd.randrange(10**6)} {rnd.choice((200, 404))}\n"
                   for _ in range(count))


#: Runs longer than a segment, each with where its segments must end: after a sentence's full
#: stop, at a line end, at a space, or with a word longer than half a segment (held whole).
LONG_RUNS = {
    "sentences": ("The harbour wall held the tide back and the\ntown slept behind it. " * 40_000, "."),
    "log lines": (_log_lines(80_000), "\n"),
    "one line of words": ("harbour wall tide town " * 150_000, " "),
    "a long word": ("harbour " * 100_000 + "x" * (3 << 20) + " tide" * 200_000, "x"),
}


@pytest.mark.parametrize("name", list(LONG_RUNS))
def test_a_run_longer_than_a_segment_is_cut_at_a_sentence_end_else_a_line_end_else_a_space(name: str) -> None:
    """A run of more than a MiB is held as elements of at most a MiB (`run_segments`), each
    ending at the last sentence end in its second half, else line end, else space, or with a
    word longer than half of one, whole; together they hold the run's words, whole and in
    order, and nothing else."""
    from indx_assets.pipeline.chunkers.text import text_elements
    from indx_assets.pipeline.chunking.paragraphs import SEGMENT, run_segments

    text, ends_with = LONG_RUNS[name]
    run = text.strip()
    spans = list(run_segments(run, 0, len(run)))
    assert len(spans) > 1 and spans[0][0] == 0 and spans[-1][1] == len(run)
    for (_, end), (after, _) in zip(spans, spans[1:]):
        assert run[end:after].isspace() and not run[end - 1].isspace()
        if ends_with in ".\n ":
            assert run[end - 1] == "." if ends_with == "." else run[end] == ends_with
    if ends_with == "x":
        assert "x" * (3 << 20) in (run[start:end] for start, end in spans)
    for start, end in spans:
        assert end - start <= SEGMENT * 3 // 2 or " " not in run[start:end]
        assert end - start > SEGMENT // 2
    elements = list(text_elements(text))
    assert [(e.metadata.start, e.metadata.end) for e in elements] == spans
    assert [word for e in elements for word in e.text.split(" ")] == run.split()


def test_a_long_run_measured_only_until_it_passes_the_limit_is_cut_as_when_measured_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Packing asks of a long text only whether it fits, so its size is counted only until it
    passes the hard maximum (`TokenMeasure.sizes`' `bound`): the chunks are those a size counted
    whole gives."""
    from indx_assets.pipeline.chunking.measure import TokenMeasure

    text = "Lead-in line\n" + _log_lines(30_000) + "\nThe harbour wall held the tide.\n\n" + _log_lines(2_000)
    bounded = [m.piece.text for m in encode_bytes(text.encode(), source_id="log.txt", media_type="text/plain").chunk_map.chunks]
    measured = []
    whole = TokenMeasure._long_size

    def _long_size(self: TokenMeasure, text: str, bound: int | None = None) -> int:
        size = whole(self, text)
        measured.append(size)
        return size

    monkeypatch.setattr(TokenMeasure, "_long_size", _long_size)
    counted = [m.piece.text for m in encode_bytes(text.encode(), source_id="log.txt", media_type="text/plain").chunk_map.chunks]
    assert max(measured) > 50 * DEFAULT_MAX_TOKENS  # the run was counted whole the second time
    assert bounded == counted and len(bounded) > 100


def test_a_markdown_paragraph_longer_than_a_segment_is_held_a_segment_at_a_time() -> None:
    """A Markdown paragraph read from the page a line at a time (`LongParagraph`) is held as
    the text chunker's runs are: segments of at most a MiB, ending at sentence ends, their words
    the parser's (emphasis marks and code spans as the page has them), whole and in order."""
    from indx_assets.pipeline.chunkers.markdown import markdown_elements
    from indx_assets.pipeline.chunking.paragraphs import SEGMENT
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import to_document

    line = "The harbour *wall* held the `tide`\nback, and the town slept behind it.\n"
    text = "# Harbour\n\n" + line * 50_000 + "\nAfter.\n"
    elements = list(markdown_elements(text))
    long = [e for e in elements if len(e.text) > 1000]
    assert len(long) == 3 and all(SEGMENT // 2 < e.metadata.end - e.metadata.start <= SEGMENT for e in long[:-1])
    assert all(e.text.endswith("it.") for e in long)
    assert [w for e in long for w in e.text.split(" ")] == (line * 50_000).split()
    document = encode_bytes(text.encode(), source_id="long.md", media_type="text/markdown")
    (measured,) = measure("long.md", document.read.pages, to_document(document).chunks).pages
    assert (measured.foreign, measured.lost, measured.duplicated) == (0, 0, 0), measured.examples


@pytest.mark.parametrize("break_at_half", ["\n", "\r", " "])
def test_a_break_right_at_half_a_segment_leaves_the_later_breaks_to_cut_at(
        monkeypatch: pytest.MonkeyPatch, break_at_half: str) -> None:
    """A line end or a space right at half a segment is no cut (it would leave a segment of
    half of one), and the breaks after it still are: the segment does not run on with a long
    word across its limit (found by a review: 4 MB where a MiB was due)."""
    from indx_assets.pipeline.chunking import paragraphs

    monkeypatch.setattr(paragraphs, "SEGMENT", 20)
    text = "aaaa aaaaa" + break_at_half + "bb cc dd " + "e" * 60 + " ff gg hh ii jj kk"
    assert list(paragraphs.run_segments(text, 0, len(text))) == [(0, 19), (20, 80), (81, 98)]


@pytest.mark.parametrize("code", [
    "x" + " " * 70,  # code that ends in a long run of spaces (an HTML `pre`'s last line)
    " " * 45 + "x" + " " * 30 + "y",  # ... or starts with one, two words after it
    "a\n" + " " * 60 + "\nb c d e f g h i j k l m n o p q r s t u v w x y z",  # a stretch of only whitespace
    "    def f(x):\n        return x\n" * 6,  # indented lines
])
def test_code_with_long_runs_of_whitespace_is_segmented_within_its_span(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    """Code's segments (`paragraphs.code_segments`) lie within the block, in order, none empty
    and none only whitespace, and hold its words whole and in order, wherever its whitespace
    falls: the block's span is not trimmed (an HTML `pre` may begin and end with spaces). A cut
    walked back over whitespace into the block before it, or found no word after it, and raised
    (found by reading the code)."""
    from indx_assets.pipeline.chunking import paragraphs

    monkeypatch.setattr(paragraphs, "SEGMENT", 20)
    text = "before it\n\n" + code + "\n\nafter it"
    start, end = 11, 11 + len(code)
    segments = list(paragraphs.code_segments(text, start, end))
    assert segments and all(start <= line <= a < b <= end for line, a, b in segments)
    assert all(b <= after for (_, _, b), (_, after, _) in zip(segments, segments[1:]))
    assert all(text[a:b].strip() for _, a, b in segments)
    assert [w for line, _, b in segments for w in text[line:b].split()] == code.split()
    assert all(text[line - 1] == "\n" or line == a for line, a, _ in segments[1:])
