"""Markdown parsed a window at a time (`chunking/markdown_parse.parse_sections`): the elements
are the whole parse's wherever the windows fall, and a long block is not parsed whole."""

import random
from collections.abc import Iterator

import pytest

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.chunkers.markdown import MarkdownProvider
from indx_assets.pipeline.chunking import markdown_parse
from indx_assets.pipeline.read_and_chunk import encode_bytes


#: Markdown whose blocks span blank lines or depend on what follows them, for `parse_sections`.
SPANNING = [
    "```python\nprint(1)\n\nprint(2)\n```",  # a fence across a blank line
    "~~~\nopen fence\n\nnever closed",
    "<!--\na comment\n\nacross a blank line\n-->",
    "<script>\nlet a = 1;\n\nlet b = 2;\n</script>",
    "<div>\n```\n\nText after an HTML block that ended at the blank line",
    "    indented code\n\n    across a blank line",
    "- an item\n\n  its second paragraph\n\n- the next item",
    "1.\n\nAfter an empty ordered item",
    "[ref]: /url\n'a title\nacross two lines'",
    "-\n\n[ref]:\n/url",  # a definition whose destination a window's end leaves out is a paragraph
    "x \n\n[ref]:\n/url",
    "Setext heading\n===",
    "| a | b |\n| --- | --- |\n| 1 | 2 |",
    "> [ref]: /quoted\n> quoted text",
    "\n".join("  " * i + f"- level {i}" for i in range(25)),  # past the parser's nesting limit
]


def _markdown_elements(text: str) -> list[tuple[object, ...]]:
    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    return [(type(e).__name__, e.text, e.metadata.start, e.metadata.end, e.metadata.unstructured)
            for e in markdown_elements(text)]


def _cut_alike(monkeypatch: pytest.MonkeyPatch, text: str, windows: tuple[int, ...]) -> list[object]:
    """Asserts that `text` parsed a window at a time, at each of `windows` characters, gives
    the elements of the whole parse; the sections of each (`parse_sections`), one after another."""
    monkeypatch.setattr(markdown_parse, "WINDOW_CHARS", 1 << 30)
    whole = _markdown_elements(text)
    sections: list[object] = []
    for window in windows:
        monkeypatch.setattr(markdown_parse, "WINDOW_CHARS", window)
        assert _markdown_elements(text) == whole, (window, text[:300])
        sections += markdown_parse.parse_sections(text, markdown_parse.LineOffsets(text))
    return sections


def _assert_chunks_hold_its_words(text: str) -> None:
    """Asserts that the chunks cut from the Markdown page `text` hold its words, whole, and
    nothing else (a NUL taken out: a file with a NUL byte is not read as text)."""
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import to_document

    encoded = encode_bytes(text.replace("\0", "").encode(), source_id="harbour.md", name="harbour.md")
    (measured,) = measure("harbour.md", encoded.read.pages, to_document(encoded).chunks).pages
    assert (measured.foreign, measured.lost, measured.duplicated) == (0, 0, 0), measured.examples


def test_markdown_parsed_a_window_at_a_time_has_the_elements_of_the_whole_page(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    for _ in range(60):
        blocks = [rng.choice(SPANNING) + rng.choice(["", "\n\nA paragraph between."]) for _ in range(12)]
        text = "\n\n".join(blocks) + "\n"
        sections = _cut_alike(monkeypatch, text, (24, 4))
        if "level 24" not in text and "never closed" not in text:  # else the rest is parsed whole
            assert len(sections) > 6


#: Lines inside a long paragraph: ones it runs on through, ones that end it (a table whose
#: delimiter row follows, a heading, a fence, a list that may interrupt it) and ones that make
#: it a heading (a setext underline) or leave its ends to the parser's trim.
INSIDE_A_PARAGRAPH = [
    "| a | b |\n| --- | --- |", "a | b", "--- | ---", "===", "---", "# A heading", "```", "> quoted", "- item", "- ",
    "2. two", "1. one", "<div>", "<span>inline</span>", "[ref]: /url", "    lazy continuation", "\u3000", "\xa0trailing\xa0",
    "nul\0byte", "see data:image/png;base64," + "QUJD" * 20, "x" * 120, "",
]


def test_a_long_markdown_paragraph_is_followed_a_window_at_a_time_to_where_the_whole_parse_ends_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A top-level paragraph that runs past a window is not parsed whole (`LongParagraph`):
    its end is found a window at a time and its lines are read from the page. Its elements are
    the whole parse's, wherever the windows fall: where a table, a heading, a list or a blank
    line ends it, and where an underline makes it a heading or the parser trims its ends."""
    rng = random.Random(11)
    followed = 0
    for _ in range(80):
        paragraphs = []
        for _ in range(rng.randint(1, 4)):
            lines = [f"Line {i} of the paragraph, wrapped" for i in range(rng.choice([5, 40, 200]))]
            for _ in range(rng.randint(0, 3)):
                lines.insert(rng.randrange(len(lines) + 1), rng.choice(INSIDE_A_PARAGRAPH))
            paragraphs.append(rng.choice(["", "", "# A heading\n", "---\n", "```\ncode\n```\n"]) + "\n".join(lines))
        text = rng.choice(["\n\n", "\n"]).join(paragraphs) + rng.choice(["", "\n"])
        text = text.replace("\n", rng.choice(["\n", "\n", "\n", "\r\n", "\r"]))  # an old Mac file ends lines in CR
        sections = _cut_alike(monkeypatch, text, (64, 400, 2000))
        followed += sum(isinstance(section, markdown_parse.LongParagraph) for section in sections)
    assert followed > 100


def test_a_long_markdown_paragraph_holds_a_long_run_collapsed_and_its_chunks_hold_its_words() -> None:
    """A run of a long paragraph's lines longer than `whitespace.WINDOW` holds its text with
    its whitespace collapsed, as the `text` chunker's runs do: the page's words, a NUL read as
    U+FFFD and an inline image's payload left out as in a parsed paragraph."""
    from indx_assets.pipeline.chunkers.markdown import markdown_elements
    from indx_assets.pipeline.whitespace import WINDOW

    line = "The harbour wall held the tide back,\tand the  boats rode at anchor."
    lines = [line] * (2 * WINDOW // len(line))
    lines[5] = "An image data:image/png;base64," + "QUJD" * 40 + " and a nul\0in the line."
    text = "# The harbour\n\n" + "\r\n".join(lines) + "\r\n\nAfter it.\n"
    heading, run, after = markdown_elements(text)
    assert run.text == " ".join(" ".join(lines).replace("\0", "\ufffd").split()).replace("QUJD" * 40, "…")
    assert (run.metadata.start, run.metadata.end) == (text.index("The harbour wall"), text.index("\r\n\nAfter"))
    assert (heading.text, after.text) == ("The harbour", "After it.")
    _assert_chunks_hold_its_words(text)


def test_past_a_deep_list_the_rest_of_a_markdown_page_is_read_as_text_without_parsing_it_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A list nested past markdown-it's limit makes it skip the rest of the text, which is then
    plain text: a window's parse skips to the window's end alike, so the rest is not parsed
    whole (13.8x a 1 MiB page traced) and its elements come as they are read."""
    from metered import cost

    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    deep = "\n".join("  " * i + f"- level {i}" for i in range(25))
    section = "## The harbour\n\nThe harbour wall held the *tide* back, and the boats rode at anchor.\n\n"
    text = deep + "\n\n" + section * ((1 << 20) // len(section))
    count, _, peak = cost(lambda: sum(1 for _ in markdown_elements(text)))
    assert count > 2 * (len(text) // len(section))
    assert peak < 1.5 * len(text), f"{peak / len(text):.2f}x the page"
    short = deep + "\n\n" + section * 300
    monkeypatch.setattr(markdown_parse, "WINDOW_CHARS", 1 << 30)
    whole = _markdown_elements(short)
    sentence = "The harbour wall held the *tide* back, and the boats rode at anchor."
    at = short.rindex(sentence)
    assert whole[-1][1:] == (sentence, at, at + len(sentence),
                             "nested deeper than the Markdown parser's limit of 20 levels; kept as plain text")
    monkeypatch.setattr(markdown_parse, "WINDOW_CHARS", 400)
    assert _markdown_elements(short) == whole


#: The bodies of list items: ones that hold a block, that end the list (a thematic break), that
#: the item's line alone does not tell (a table's delimiter row follows), and nested lists.
ITEM_BODIES = [
    "item text", "", "# heading in an item", "```\n  code\n  ```", "- - -", "* * *", "a | b\n  |---|---|",
    "para\n\n  second para", "para\nlazy continuation", "[ref]: /url", "> quoted", "<div>html</div>", "nul\0x",
    "Setext\n  ===", "1. nested ordered", "- nested bullet\n    - deeper",
]


def test_a_long_markdown_list_is_cut_between_its_items_as_the_whole_parse_has_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A top-level list that runs past a window is cut before an item (`_list_cut`), and the
    text from there is parsed as a list that goes on: its elements are the whole parse's,
    whatever its items hold and wherever the windows fall."""
    rng = random.Random(5)
    sections = 0
    for _ in range(40):
        lists = []
        for _ in range(rng.randint(1, 3)):
            kind = rng.choice(["-", "*", "1.", "1)"])
            items = []
            for k in range(rng.choice([5, 60, 200])):
                marker = kind if kind in "-*" else f"{k + 1}{kind[-1]}"
                body = rng.choice(ITEM_BODIES) if rng.random() < 0.3 else f"Item {k} of the list"
                items.append(f"{marker} {body}".rstrip())
            lists.append(rng.choice(["\n", "\n\n"]).join(items))
        text = rng.choice(["\n\n", "\n\nA paragraph between.\n\n"]).join(lists) + "\n"
        text = text.replace("\n", rng.choice(["\n", "\n", "\r\n", "\r"]))
        sections += len(_cut_alike(monkeypatch, text, (64, 400)))
    assert sections > 2000


@pytest.mark.parametrize("separator", ["\n", "\n\n"])
def test_a_long_markdown_list_is_cut_without_parsing_it_whole(separator: str) -> None:
    """A page that is one list of 1 MiB (a list of links, tight or loose) was parsed whole:
    37.7x the page traced, 62.6x loose."""
    from metered import cost

    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    item = "- [Harbour tide table](https://example.org/tides) - the tide held back." + separator
    text = "# Links\n\n" + item * ((1 << 20) // len(item))
    count, _, peak = cost(lambda: sum(1 for _ in markdown_elements(text)))
    assert count == 1 + (len(text) - 9) // len(item)
    assert peak < 2 * len(text), f"{peak / len(text):.2f}x the page"


def test_a_long_fenced_code_block_is_followed_to_where_the_whole_parse_closes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A top-level fenced code block that runs past a window is followed to its closing fence a
    window at a time (`_block_end`): lines that look like a close but are not (shorter, the
    other marker, indented four columns, text after the marker), one that is, and none."""
    texts = ["```\r" + "code\n\n" * 200 + "```\nAfter the code.\n"]  # windows that open with a blank line
    rng = random.Random(9)
    for _ in range(60):
        blocks = []
        for _ in range(rng.randint(1, 4)):
            marker = rng.choice("`~") * rng.choice([3, 4])
            body = [rng.choice([marker[:-1], marker + " x", "    " + marker, "\t" + marker, "", marker[0] * 2 + "~`"])
                    if rng.random() < 0.05 else f"code_line({i}) = value" for i in range(rng.choice([3, 40, 300]))]
            close = rng.choice([marker, marker + marker[0] + "  ", "   " + marker, None])
            blocks.append("\n".join([marker + rng.choice(["", "python"]), *body, *([close] if close else [])]))
            blocks.append(rng.choice(["After the code.", "# A heading", "- an item"]))
        text = rng.choice(["\n\n", "\n"]).join(blocks) + "\n"
        ending = rng.choice(["\n", "\r\n", "\r", "mixed"])
        if ending == "mixed":  # CR line ends, then LF ones: a block that opens in the first runs into the second
            texts.append(text.replace("\n", "\r", rng.randrange(text.count("\n"))))
        else:
            texts.append(text.replace("\n", ending))
    for text in texts:
        _cut_alike(monkeypatch, text, (64, 400))


def test_a_long_fenced_code_block_is_cut_without_parsing_it_whole() -> None:
    """A fenced code block of 1 MiB (a log pasted into a page) was parsed whole, doubling the
    window until it held the block: 6.3x the page traced (1.4x now, the block's text held once)."""
    from metered import cost

    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    line = "2026-12-05T12:00:00Z INFO harbour tide held back by the wall\n"
    text = "# A log\n\n```text\n" + line * ((1 << 20) // len(line)) + "```\n\nAfter the log.\n"
    (count, kinds), _, peak = cost(lambda: (lambda e: (len(e), [type(x).__name__ for x in e]))(list(markdown_elements(text))))
    assert kinds == ["Title", "CodeSnippet", "NarrativeText"]
    assert peak < 2 * len(text), f"{peak / len(text):.2f}x the page"


def test_a_long_markdown_page_is_cut_without_parsing_it_whole() -> None:
    from metered import cost

    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    section = "## The harbour\n\nThe harbour wall held the *tide* back, and the boats rode at anchor.\n\n"
    text = section * ((1 << 20) // len(section))
    count, _, peak = cost(lambda: sum(1 for _ in markdown_elements(text)))
    assert count == 2 * (len(text) // len(section))
    # markdown-it's tokens of the whole page cost some 35x the page
    assert peak < 2 * len(text), f"the elements of {len(text):,} characters of Markdown peaked at {peak:,} bytes"


def test_a_markdown_page_of_many_sections_is_chunked_without_holding_them_all() -> None:
    from metered import cost

    (chunker,) = MarkdownProvider().chunkers()
    section = "## The harbour\n\nThe harbour wall held the *tide* back, and the boats rode at anchor.\n\n"
    text = section * ((1 << 20) // len(section))
    content, page = text.encode(), PageOutput(page=1, text=text, status="ok")
    chunker.chunk(section.encode(), "text/markdown", (PageOutput(page=1, text=section, status="ok"),))  # imports, tokenizer
    (claim,), _, peak = cost(lambda: chunker.chunk(content, "text/markdown", (page,)))
    # every heading opens a section, numbered in order however many the chunker has let go of
    named = [(piece.metadata["section_id"], f"s{piece.start // len(section)}") for piece in claim.pieces]
    assert named and all(name == expected for name, expected in named)
    # the pieces themselves are about twice the page; every section held cost 8x, the whole parse 61x
    assert peak < 5 * len(text), f"chunking {len(text):,} characters of Markdown peaked at {peak:,} bytes"




#: The bodies of a blockquote's blocks: ones that hold a block of their own, that end it or
#: are lazy lines of its paragraph, nested quotes and lists, and quoted lines the parser reads
#: past their marker (a tab, indented code).
QUOTE_BODIES = [
    "a line of the mail", "a paragraph\nlazy continuation", "a paragraph\n> quoted on", "# A heading", "---",
    "```\n> code\n>\n> more code\n> ```", "    indented code", "\tafter a tab", "- an item\n> - another",
    "1. one\n>\n> 2. two", "> nested", "> nested\n> >\n> > more nested", "[ref]: /url", "a | b\n> --- | ---\n> 1 | 2",
    "<div>\n> html\n> </div>", "Setext\n> ===", "nul\0byte",
]


def test_a_long_blockquote_is_cut_between_its_blocks_as_the_whole_parse_has_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A top-level blockquote that runs past a window (a mail thread quoted whole) is cut before
    a block that starts after a blank line of it (`_quote_cut`), and the text from there is
    parsed as a blockquote that goes on: its elements are the whole parse's, whatever its
    blocks hold, however its blank lines are written and wherever the windows fall."""
    rng = random.Random(13)
    sections = 0
    for _ in range(40):
        quotes = []
        for _ in range(rng.randint(1, 3)):
            lines = []
            for k in range(rng.choice([5, 60, 200])):
                body = rng.choice(QUOTE_BODIES) if rng.random() < 0.3 else f"Quoted line {k} of the mail"
                lines.append(f"> {body}")
                if rng.random() < 0.7:  # a blank line of the quote, its marker alone
                    lines.append(rng.choice([">", ">", "> ", "   >", ">\t"]))
            quotes.append("\n".join(lines))
        text = rng.choice(["\n\n", "\n\nA paragraph between.\n\n", "\nLazy after the quote.\n\n"]).join(quotes) + "\n"
        text = text.replace("\n", rng.choice(["\n", "\n", "\r\n", "\r"]))
        sections += len(_cut_alike(monkeypatch, text, (64, 400)))
    assert sections > 1500


#: Lines inside a quoted paragraph: its lines however their markers are written (indented, a
#: tab after one, which the parser reads as content or not by the marker's column), lazy lines,
#: ones that end it or the quote (a blank line of it, a heading, a list, a nested quote, a table,
#: a lazy break) and ones that make it a heading (a setext underline) or leave its ends to the
#: parser's trim.
INSIDE_A_QUOTED_PARAGRAPH = [
    ">no space", "  > two spaces in", ">\tafter a tab", " >\ta tab at one", "  >\ta tab at two", "\t> an indent tab",
    "    > four in", ">     > code-like, so a lazy line", "lazy continuation", "    lazy and indented", "> [ref]: /url",
    "> [ref]: /url\n> 'a title\n> across lines'", "> [ref]:\n> /url\n> (a title\n> across lines)",
    "> | a | b |\n> | --- | --- |", "> a | b\n--- | ---", "> ===", "> ---", "---", "> # A heading", "# A heading", "> ```",
    "```", "> > nested", "> - item", "- item", "> 2. two", "> 1. one", "> <div>", "<div>", ">", "> ", "   >", "",
    "> \u3000", "> \xa0trailing\xa0", "> nul\0byte", "> see data:image/png;base64," + "QUJD" * 20, "> " + "x" * 120,
    "Setext\n===",
]


#: How a quote's marker is written after the first of a line's (`>>`, `> >`, a tab, four columns in).
LATER_MARKERS = ["> ", ">", "> ", ">\t", " >", "  >\t", "\t>", "    >", "> \t"]


def test_a_long_quoted_paragraph_is_followed_a_window_at_a_time_to_where_the_whole_parse_ends_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A paragraph of a top-level blockquote, or of a quote within it, that runs past a window
    (a mail quoted whole, no blank line in it) is not parsed whole (a quoted `LongParagraph`):
    its end is found a window at a time, its lines are read from the page less their markers,
    and the quotes go on after it where they do. Its elements are the whole parse's, wherever
    the windows fall, however its lines' markers are written (tabs the parser reads as content
    or not, lines marked in fewer quotes, lazy ones), whatever ends it, and wherever the quotes
    start (after a blank line, under a line of a paragraph they interrupt, under a heading or a
    list)."""
    rng = random.Random(19)
    followed: list[int] = []
    for _ in range(40):
        quotes = []
        for _ in range(rng.randint(1, 3)):
            depth = rng.choice([1, 1, 2, 3])

            def marked(count: int) -> str:
                return "".join(rng.choice(LATER_MARKERS) if k else rng.choice(["> ", "> ", ">", "  > ", ">\t"])
                               for k in range(count))

            lines = [marked(depth if rng.random() < 0.8 else rng.randint(0, depth)) + f"Line {i} of the quoted mail"
                     for i in range(rng.choice([5, 40, 200]))]
            lines[0] = "> " * depth + "Line 0 of the quoted mail"
            for _ in range(rng.randint(0, 3)):
                inside = rng.choice(INSIDE_A_QUOTED_PARAGRAPH)
                lines.insert(rng.randrange(1, len(lines) + 1), "> " * (depth - 1) + inside.replace("\n", "\n" + "> " * (depth - 1)))
            opening = rng.choice(["", "", "On Monday, someone wrote:\n", "# A heading\n", "```\ncode\n```\n", "- item\n",
                                  "> " * (depth - 1) + "On Monday, someone wrote:\n", "> " * (depth - 1) + "# A heading\n"])
            quotes.append(opening + "\n".join(lines))
        text = rng.choice(["\n\n", "\n", "\n\nA paragraph between.\n\n"]).join(quotes) + rng.choice(["", "\n"])
        text = text.replace("\n", rng.choice(["\n", "\n", "\n", "\r\n", "\r"]))
        sections = _cut_alike(monkeypatch, text, (64, 400))
        followed += [s.quotes for s in sections if isinstance(s, markdown_parse.LongParagraph) and s.quotes]
    assert followed.count(1) > 30 and followed.count(2) > 20 and followed.count(3) > 20


@pytest.mark.parametrize("depth", [1, 2])
def test_a_long_quoted_paragraph_holds_a_long_run_collapsed_less_its_markers(monkeypatch: pytest.MonkeyPatch,
                                                                             depth: int) -> None:
    """A run of a long quoted paragraph longer than `whitespace.WINDOW` holds the whole parse's
    text, its whitespace collapsed and its lines' markers gone (a `>` that is its content kept,
    a lazy line's, one of a quote around it, marked in fewer), whatever segment of the run
    starts at a line's markers; and its chunks hold the page's words."""
    from indx_assets.pipeline.chunkers.markdown import markdown_elements
    from indx_assets.pipeline.chunking.paragraphs import SEGMENT

    outer = "> " * (depth - 1)
    shapes = ["> The harbour wall held the tide back,", ">and the boats rode at anchor", "  >\tbehind the wall",
              "lazy: the town slept", ">     > a line whose marker is the parser's content", "> data:image/png;base64,"
              + "QUJD" * 30 + " an image", "> nul\0in the line", *([">\tthe outer quote's line, lazy in the inner"] if depth > 1 else [])]
    lines = [(outer if "lazy" not in shape else "") + shape + f" {i}" for i, shape in enumerate(shapes * (3 * SEGMENT // 40 // 8))]
    text = f"# The harbour\n\n{outer}On Monday, the harbour master wrote:\n" + "\r\n".join(lines) + "\r\n>\r\n> After it.\n"
    monkeypatch.setattr(markdown_parse, "WINDOW_CHARS", 1 << 30)
    whole = [" ".join(e.text.split()) for e in markdown_elements(text)]
    monkeypatch.undo()
    sections = markdown_parse.parse_sections(text, markdown_parse.LineOffsets(text))
    assert any(isinstance(s, markdown_parse.LongParagraph) and s.quotes == depth for s in sections)
    elements = list(markdown_elements(text))
    held = [e.text for e in elements]
    assert len(held) > len(whole)  # the run in segments
    assert " ".join(held[2:-1]) == whole[2] and "> a line whose marker" in whole[2] and held[-1] == whole[-1] == "After it."
    assert "QUJD" * 30 not in whole[2] and "\ufffd" in whole[2]
    _assert_chunks_hold_its_words(text)


def test_a_short_segment_of_a_long_quoted_paragraph_holds_no_marker() -> None:
    """A segment of a long quoted run no longer than `whitespace.WINDOW` (the cut before it
    backed off a long stretch of spaces to the last word) is its text less its markers too (a
    review found it held every line's `>`)."""
    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    lines = [f"> line {i} of the quoted mail" for i in range(2000)]
    lines[1000] = "> x" + " " * (3 << 19) + "y " + "word " * 200_000
    text = "# The harbour\n\n" + "\n".join(lines) + "\n"
    held = [e.text for e in markdown_elements(text)]
    words = " ".join(held[1].split())
    assert len(held) == 3 and words.startswith("line 0 of the quoted mail line 1") and words.endswith("line 999 of the quoted mail x")
    assert not any(">" in t for t in held)
    _assert_chunks_hold_its_words(text)


def test_a_long_quote_within_a_quote_is_cut_between_its_blocks_as_the_whole_parse_has_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A blockquote within a top-level one that runs past a window too (a reply quoting a reply)
    is cut before a block that starts after a blank line of it (`> >`), and the text from there is
    parsed as the quotes around it going on: its elements are the whole parse's, however deep
    the quotes, whatever their blocks hold, however their markers and blank lines are written,
    where a line of a shallower quote or a lazy line comes between, and wherever the windows
    fall."""
    depths: list[int] = []
    quote_cut = markdown_parse._quote_cut

    def recorded(*args: object) -> tuple[int, int, int] | None:
        cut = quote_cut(*args)  # type: ignore[arg-type]
        depths.extend([cut[2]] if cut else [])
        return cut

    monkeypatch.setattr(markdown_parse, "_quote_cut", recorded)
    rng = random.Random(23)
    for _ in range(30):
        quotes = []
        for _ in range(rng.randint(1, 3)):
            lines, depth = [], rng.choice([1, 2, 2, 3])
            for k in range(rng.choice([5, 60, 200])):
                depth = rng.choice([1, 2, 3]) if rng.random() < 0.05 else depth
                marker = rng.choice(["> " * depth, ">" * depth + " ", "> " * (depth - 1) + ">  ", " " + "> " * depth])
                body = rng.choice(QUOTE_BODIES) if rng.random() < 0.25 else f"Quoted line {k} of the mail"
                lines.append(marker + body.replace("\n> ", "\n" + "> " * depth) if rng.random() < 0.95 else f"lazy {k}")
                if rng.random() < 0.6:  # a blank line of the quote, or of one around it
                    lines.append(rng.choice([">" * depth, "> " * depth, "> " * (depth - 1) + ">\t", ">" * max(1, depth - 1)]))
            quotes.append("\n".join(lines))
        text = rng.choice(["\n\n", "\n\nA paragraph between.\n\n", "\nLazy after the quote.\n\n"]).join(quotes) + "\n"
        _cut_alike(monkeypatch, text.replace("\n", rng.choice(["\n", "\n", "\r\n", "\r"])), (64, 400))
    assert depths.count(2) > 400 and depths.count(3) > 300


#: Lines inside indented code: code, blank and whitespace lines (which it runs on through),
#: lines indented less (which end it), a tab's four columns, and a table's delimiter row.
CODE_LINES = ["    code", "\tcode after a tab", "        deeper", "", "   ", "\t", "  not code", "text", "    |---|---|"]
#: An HTML block's opening lines, each of the seven kinds (one with a pipe, a table's header
#: row if a delimiter row follows it), and lines inside one: ones that end a kind, and ones
#: that do not.
HTML_OPENINGS = ["<div>", "<table>", "<pre>", "<!--", "<?php", "<!DOCTYPE html", "<![CDATA[", "<custom-tag x=1>",
                 "<script>", "<div>a | b"]
HTML_LINES = ["<tr><td>a cell</td></tr>", "text", "", "</pre>", "-->", "?>", ">", "]]>", "</script>", "| --- | --- |",
              "--- | ---"]


def test_long_indented_code_and_html_blocks_are_followed_to_where_the_whole_parse_ends_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Indented code and an HTML block that run past a window are followed to their end a
    window at a time (`_code_end`, `_block_end`), as fences are: indented code across blank
    lines (more of them than a window holds), tabs and lines that end it; HTML blocks of every
    kind and their end conditions; a delimiter row where a window starts, which makes the
    opening line a table's header row if the window is parsed behind it."""
    # delimiter rows where windows start: the fence's end was the first, 4 characters short
    texts = ["```a|b\n" + ("code\n" * 2 + "| --- | --- |\n") * 40 + "```\nAfter the code.\n",
             "<div>a | b\n" + ("row\n" * 2 + "--- | ---\n") * 40 + "\nAfter the block.\n"]
    rng = random.Random(17)
    for _ in range(60):
        blocks = []
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.5:
                lines = ["    opening code"] + [rng.choice(CODE_LINES) if rng.random() < 0.15 else f"    code_line({k})"
                                                for k in range(rng.choice([5, 40, 300]))]
                if rng.random() < 0.3:
                    lines += [""] * rng.choice([60, 200]) + ["    code after the blank lines"]
            else:
                lines = [rng.choice(HTML_OPENINGS)] + [rng.choice(HTML_LINES) if rng.random() < 0.05 else f"<p>row {k}</p>"
                                                       for k in range(rng.choice([5, 40, 300]))]
            blocks.append("\n".join(lines))
        text = rng.choice(["\n\n", "\n", "\n\nA paragraph between.\n\n"]).join(blocks) + rng.choice(["", "\n"])
        texts.append(text.replace("\n", rng.choice(["\n", "\n", "\r\n", "\r"])))
    for text in texts:
        _cut_alike(monkeypatch, text, (64, 400))


def _as_lines(code: str) -> list[str]:
    """`code`'s lines, whatever breaks them, a blank line's whitespace gone."""
    return [line if line.strip(" \t") else "" for line in code.replace("\r\n", "\n").replace("\r", "\n").strip("\n").split("\n")]


def test_indented_code_is_its_lines_less_four_columns_of_indent_as_the_parser_has_them() -> None:
    """The chunker takes top-level indented code's text from the page (`markdown_parse.code_text`):
    each line less four columns of indent, be they spaces or spaces up to a tab, deeper indent
    kept, a NUL read as U+FFFD, whatever breaks the lines (one kind or mixed); the lines of the
    parser's own content, but for the whitespace of a blank line and the line breaks. Code in a
    blockquote or a list item is the parser's content (its page lines hold the markers)."""
    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    rng = random.Random(29)
    indents = ["    ", "\t", " \t", "   \t", "        ", "\t\t", "    \t", "      "]
    for _ in range(300):
        lines = [rng.choice(indents) + f"line({k}) = " + rng.choice(["a", "b\tc", "tab\t", "nul\0"]) if rng.random() < 0.8
                 else rng.choice(["", "   ", "\t", "      ", "    ", " \t "]) for k in range(rng.randint(2, 12))]
        body = "\n".join(["    opening line", *lines, "    closing line"])
        body = rng.choice(["{}", "> {}", "- {}", "- x\n\n{}"]).format(body.replace("\n", "\n" + rng.choice(["", "> ", "  "])))
        text = "Before it.\n\n" + body + "\n\nAfter it.\n"
        breaks = rng.choice([["\n"], ["\r\n"], ["\r"], ["\n", "\r\n", "\r"]])
        text = "".join(part + rng.choice(breaks) for part in text.split("\n")[:-1])
        parsed = [t.content for t in markdown_parse.parse_markdown(text)[0] if t.type == "code_block"]
        code = [e.text for e in markdown_elements(text) if type(e).__name__ == "CodeSnippet"]
        assert [_as_lines(c) for c in code] == [_as_lines(c) for c in parsed], repr(text)


FOUND_IN_CODE_BY_REVIEW = [
    ">     a\n>     b\n", "-     a\n      b\n", "- x\n\n      a\n      b\n",  # in a quote, a list item
    "    a\x00b\n",  # a NUL
    "    a\r    \n    b\n", "    a\r\t\n    b\n",  # a blank line between a carriage return alone and a line feed
    "    a \n", "    a\xa0", "    a\n    \xa0\n", "    \xa0\n", "    a\xa0\r\n",  # whitespace ending the last line
    "    \u3000\n    x\n", "    \x0c\n    x\n",  # a first line of whitespace Markdown does not count as blank
]


@pytest.mark.parametrize("text", FOUND_IN_CODE_BY_REVIEW)
def test_code_pages_a_review_found_are_the_parser_s_lines(text: str) -> None:
    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    parsed = [t.content for t in markdown_parse.parse_markdown(text)[0] if t.type == "code_block"]
    code = [e.text for e in markdown_elements(text) if type(e).__name__ == "CodeSnippet"]
    assert [_as_lines(c) for c in code] == [_as_lines(c) for c in parsed]


def test_indented_code_s_line_breaks_are_the_parser_s_where_a_tab_indents_it_and_its_inline_data_elided() -> None:
    """Where a tab indents a line of indented code, its line breaks are line feeds, as the
    parser's content has them (carriage returns and line feeds were kept, found by a review);
    an inline image's data in it keeps only its type, as in a fence (its payload was cut into
    chunks and counted as foreign words)."""
    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    text = "    x\r\n\ty\r\n"
    parsed = [t.content for t in markdown_parse.parse_markdown(text)[0] if t.type == "code_block"]
    assert [e.text for e in markdown_elements(text)] == parsed == ["x\ny\n"]
    payload = "QUJD" * 500
    for code in (f"    img ![a](data:image/png;base64,{payload}) end\n    more\n",
                 f"> quoted:\n>\n>     img ![a](data:image/png;base64,{payload}) end\n"):
        texts = [e.text for e in markdown_elements("# T\n\n" + code + "\nAfter.\n")]
        assert not any(payload[:40] in t for t in texts) and any("data:image/png" in t for t in texts)


#: Pages a review found windows to cut apart from the whole parse, and the windows that did.
FOUND_BY_REVIEW = [
    # a quote's line whose marker is indented four columns or a tab, after a blank line of it: in
    # the quote it is one more line of it, where a parse starts it is indented code
    (">\n    >b\n>\n", (5,)), (">\n\t>c\n>\n", (1, 2, 3)),
    ("> On Monday, someone wrote:\n" + "".join(f"    > paragraph {i} of the quoted reply\n>\n" for i in range(600)), (1 << 14,)),
    # a quote's line, then a lazy delimiter row: in the quote a paragraph, where a parse starts a table
    (">\n>a | b\n--- | ---\n   >\n", (3,)), ("> \n> <div|a>\n|-|-|\n>[r]:\n> \n", (7,)),
    # a fence's or an HTML block's opening line last in a window: the next line makes it a table
    ("<div a='|'>\n:-:|:-:\n", (1,)), ("```py|x\n|-|-|\n", (1,)),
    ("word " * 3275 + "\n\n<p>Name</p> | Value\n| --- | --- |\n| a | b |\n", (1 << 14,)),
    # a quoted link definition whose title runs past a window: cut short, it ends at its
    # destination, and a paragraph (followed as one quoted) starts on the title's first line
    ("> [a]: /u\n> 't\n> b\n> c'\n> d\n", (1, 2, 8, 16)), ("> [a]: /u\n> (t\n> b\n> c\n> d)\n", (1, 2, 5, 8, 16)),
    ("> [a]:\n> /u\n> \"t\n> b\n> c\n> d\"\n", (3, 5, 24)),
    # ... or runs through an `===` underline, which makes the title's first line a setext heading
    ("> [a]: /u\n> 'x\n> ===\n> p\n> p\n> p\n> '\n", (1, 2, 8, 16)), ("> intro\n>\n> [a]: /u\n> 'x\n> ===\n> p\n> p\n> p\n> '\n", (5,)),
    ("On Monday wrote:\n> [a]: /u\n> 'x\n> ===\n> p\n> p\n> p\n> '\n", (3, 24)),
    ("> [foo\n> ===\n> bar\n> baz\n> qux\n> quux]: /u\n", (3, 5, 24)),  # a label across lines
    ("> [a]: /u 'x\n> ===\n" + "> p\n" * 30 + "> '\n", (8, 64, 400)), ("> [a]:\n> /u\n> (x\n> ===\n" + "> p\n" * 30 + "> )\n", (8, 64, 400)),
    ('> > > > [r16]: /u\r> > > > "t\r>>>> ===\r> > > > text 16\r> > > > text\r> > > > "', (1, 2, 8, 16, 64)),
    # and at the top level (a paragraph under a heading is followed)
    ("[a]: /u\n'x\n===\np\np\np\n'\n", (5,)), ("[a]: /u\n'x\n===\np\np\np\np\np\n'\n", (3, 5, 24)),
    ("[foo\n===\nbar\nbaz\nqux\nquux]: /u\n", (1, 2, 5, 8, 16)),
]


@pytest.mark.parametrize("text, windows", FOUND_BY_REVIEW)
def test_pages_a_review_found_are_cut_as_the_whole_parse_has_them(
        monkeypatch: pytest.MonkeyPatch, text: str, windows: tuple[int, ...]) -> None:
    _cut_alike(monkeypatch, text, windows)


@pytest.mark.parametrize("shape, head, block, bound", [
    # a mail thread quoted whole was parsed whole, 24.5x the page traced (0.75x now)
    ("quote", "", "> The harbour wall held the *tide* back, and the town slept behind it.\n> It held again.\n>\n", 1.5),
    # one with no blank line in it, 6.7x (2.9x now: its text less the markers, and collapsed); and
    # under a paragraph it interrupts (a mail's "On Monday, ... wrote:"), 8.2x
    ("quote", "", "> The harbour wall held the *tide* back, and the town slept behind it.\n", 3.5),
    ("quote", "On Monday, the harbour master wrote:\n", "> The harbour wall held the *tide* back, and the town.\n", 3.5),
    # a reply quoting a thread whole was parsed whole, 28.4x (0.8x now); one quoting a mail with
    # no blank line in it, 8.4x (2.9x now)
    ("quote", "> On Monday, the harbour master wrote:\n", "> > The harbour wall held the *tide* back.\n> > It held.\n> >\n", 1.5),
    ("quote", "> On Monday, the harbour master wrote:\n", "> > The harbour wall held the *tide* back, and the town.\n", 3.5),
    # a log pasted as indented code, 8.2x (2.1x now: the page's lines less four columns of
    # indent, the block's source and its text)
    ("code", "", "    2026-12-05T12:00:00Z INFO harbour tide held back by the wall\n\n", 2.5),
    # an HTML table pasted in, no blank line in it, 6.0x (1.24x now)
    ("html", "<table>\n", "<tr><td>harbour wall</td><td>held the tide</td><td>1887</td></tr>\n", 1.5),
])
def test_a_long_blockquote_indented_code_or_html_block_is_cut_without_parsing_it_whole(
        shape: str, head: str, block: str, bound: float) -> None:
    from metered import cost

    from indx_assets.pipeline.chunkers.markdown import markdown_elements

    text = "# The harbour\n\n" + head + block * ((1 << 20) // len(block)) + "\nAfter it.\n"
    kinds, _, peak = cost(lambda: {type(e).__name__ for e in markdown_elements(text)})
    assert kinds == {"Title", "NarrativeText", *(["CodeSnippet"] if shape == "code" else [])}
    assert peak < bound * len(text), f"{peak / len(text):.2f}x the page"


@pytest.mark.parametrize("shape", ["indented code", "a fence", "an HTML block", "indented code, lines ending in CR"])
def test_a_long_block_of_code_or_markup_is_held_a_segment_at_a_time(shape: str) -> None:
    """6 MiB of Markdown that is one block of indented code, one fence or one HTML block: its
    elements are taken from the page a segment of about a MiB at a time, each ending at a line
    end (`paragraphs.run_segments`, no sentences), so making them holds one segment beside the
    page (0.63x the page for indented code, 0.41x for a fence, 0.40x for an HTML block; 2.08x,
    1.13x and 1.11x when the block was one element, its source sliced from the page and, for
    indented code, its indents taken from a copy of that). Each segment after the first starts
    at its first line's start, its indent the code's, and the segments hold the block's words,
    whole and in order."""
    from metered import cost

    from indx_assets.pipeline.chunkers.markdown import markdown_elements
    from indx_assets.pipeline.chunking.paragraphs import SEGMENT

    line = "    wall = harbour.hold(tide, town='slept')  # behind it\n"
    row = "<tr><td>harbour wall</td><td>held the tide</td><td>1887</td></tr>\n"
    size = 6 << 20
    head, block, tail = {
        "indented code": ("", line + "\n", ""), "a fence": ("```python\n", line, "```\n"),
        "an HTML block": ("<table>\n", row, ""), "indented code, lines ending in CR": ("", line.replace("\n", "\r"), ""),
    }[shape]
    text = "# The harbour\n\n" + head + block * (size // len(block)) + tail + "\nAfter it.\n"

    def made() -> Iterator[tuple[str, int, int, str]]:
        return ((type(e).__name__, e.metadata.start, e.metadata.end, e.text) for e in markdown_elements(text))  # type: ignore[misc]

    elements, _, peak = cost(lambda: [(kind, start, end, body[:60]) for kind, start, end, body in made()])
    assert peak < 0.7 * len(text), f"{peak / len(text):.2f}x the page"
    kinds = [kind for kind, *_ in elements]
    assert kinds[0] == "Title" and kinds[-1] == "NarrativeText" and len(kinds) == 2 + 6
    assert set(kinds[1:-1]) == {"NarrativeText" if "HTML" in shape else "CodeSnippet"}
    whole = list(made())
    assert [w for _, _, _, body in whole for w in body.split()] == text.split()[1:]  # all but the heading's "#"
    spans = [(start, end) for _, start, end, _ in whole[1:-1]]
    assert all(SEGMENT // 2 < end - start <= SEGMENT for start, end in spans[:-1])
    assert all(text[end] in "\r\n" for _, end in spans[:-1])
    if "code" in shape:  # a segment's text starts at its first line's start, less the code's four columns
        assert all(body.startswith("wall = harbour") for _, _, _, body in whole[1:-1])
    if shape == "a fence":  # its first line is the fence's
        assert whole[1][3].startswith("```python\n    wall = harbour") and whole[2][3].startswith("    wall = harbour")
