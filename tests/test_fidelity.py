"""The word-fidelity measure (`indx_assets.pipeline.fidelity`): what counts as a word, and what a page's
chunks are charged with (foreign, notation, lost, duplicated)."""

import itertools
from collections.abc import Iterator
from typing import Any

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.document import DocumentChunk
from indx_assets.pipeline.fidelity import measure, measure_page, words
from metered import cost


def chunk(text: str, locator: str = "page:1/chunk:0", chunk_type: str = "content", page: int = 1,
          **metadata: Any) -> DocumentChunk:
    return DocumentChunk(source_id="doc", locator=locator, content=text, chunk_type=chunk_type, page=page,
                         metadata=metadata)


def test_a_word_is_a_token_without_its_punctuation_and_soft_hyphens():
    assert words("“Hello,” she said — (twice)…") == ["Hello", "she", "said", "twice"]
    assert words("im\ufffeportant and co\u00adoperate") == ["important", "and", "cooperate"]
    # hyphenated across a line end: one word; a hyphen within a line stays
    assert words("exer-\ncises well-known state-of-the-\r\nart") == ["exercises", "well-known", "state-of-the-art"]


def test_faithful_chunks_pass_whatever_their_order_and_whitespace():
    text = "Title line\r\nFirst paragraph, with words.\r\n\r\nSecond   one: the end."
    result = measure_page(1, text, [chunk("Second one: the end.", "page:1/chunk:0"),
                                    chunk("Title line First paragraph, with words.", "page:1/chunk:1")])
    assert (result.words, result.foreign, result.lost, result.duplicated) == (10, 0, 0, 0)
    assert result.passes and result.examples == ()


def test_words_run_together_and_fragments_are_foreign_with_their_chunk():
    text = "Repeat the exercises\nhas been said by Sanni in 2020."
    result = measure_page(1, text, [chunk("Repeat the exerciseshas been said by", "page:1:char:0-37"),
                                    chunk("Sa", "page:1/chunk:1"), chunk("ni in 2020.", "page:1/chunk:2")])
    assert result.foreign == 3 and not result.passes
    foreign = {e.word: e.locator for e in result.examples if e.kind == "foreign"}
    assert foreign == {"exerciseshas": "page:1:char:0-37", "Sa": "page:1/chunk:1", "ni": "page:1/chunk:2"}
    lost = {e.word: (e.locator, e.context) for e in result.examples if e.kind == "lost"}
    assert set(lost) == {"exercises", "has", "Sanni"}
    assert lost["Sanni"][0] == "page:1:char:38-43" and "said by Sanni in" in lost["Sanni"][1]


def test_a_number_that_lost_a_digit_is_foreign_not_notation():
    text = "Rate 0.0003 24.0910 2.8163"
    result = measure_page(1, text, [chunk("Rate 0.0003 2"), chunk("4.0910 .8163")])
    assert result.notation == 0
    assert {e.word for e in result.examples if e.kind == "foreign"} == {"2", "4.0910", "8163"}
    assert {e.word for e in result.examples if e.kind == "lost"} == {"24.0910", "2.8163"}


def test_a_footnote_mark_run_into_its_word_is_notation_not_foreign():
    # PDFium puts a raised mark on a line of its own
    text = "Zejiang Shen\r\n1\r\n, Ruochen Zhang\r\n2\r\n, Allen Institute"
    result = measure_page(1, text, [chunk("Zejiang Shen1, Ruochen Zhang2, Allen Institute")])
    assert (result.foreign, result.notation, result.lost) == (0, 2, 0) and result.passes
    assert [e.word for e in result.examples if e.kind == "notation"] == ["Shen1", "Zhang2"]
    # and a subscript cut off its formula
    assert measure_page(1, "H2SO4 and x2", [chunk("H2SO4 and x 2")]).notation == 2


def test_a_word_run_into_the_number_that_starts_the_next_line_is_foreign():
    text = "26 Board of Directors\r\n28 Value-creation Model"
    result = measure_page(1, text, [chunk("26 Board of Directors28 Value-creation Model")])
    assert result.foreign == 1 and result.notation == 0


def test_named_furniture_is_not_lost_and_a_page_keeps_99_percent():
    body = " ".join(f"w{i}" for i in range(300))
    text = f"Running Title\n{body}\n454"
    named = {"page_header": ["Running Title"], "page_footer": ["454"]}
    assert measure_page(1, text, [chunk(body, **named)]).lost == 0
    unnamed = measure_page(1, text, [chunk(body)])
    assert unnamed.lost == 3 and unnamed.kept == 300 / 303 and unnamed.passes  # 99.0 %
    dropped = measure_page(1, text, [chunk(body.replace("w7 ", ""))])
    assert dropped.lost == 4 and not dropped.passes
    assert [e.word for e in dropped.examples if e.kind == "lost"] == ["Running", "Title", "w7"]


def test_duplicated_text_counts_unless_the_chain_asked_for_overlap():
    text = "one two three four five six seven eight"
    first, second = chunk("one two three four five", "page:1:char:0-23"), "four five six seven eight"
    assert measure_page(1, text, [first, chunk(second, "page:1:char:14-40")]).duplicated == 2
    asked = measure_page(1, text, [first, chunk(second, "page:1:char:14-40", overlap=9)])
    assert asked.duplicated == 0 and asked.lost == 0 and asked.passes
    # sentence pieces repeat their chunk by design; image pieces have no words
    sentences = [first, chunk("one two three", "sentence:char:0-13", chunk_type="sentence"),
                 chunk("six seven eight", "page:1:char:24-40")]
    assert measure_page(1, text, sentences).duplicated == 0


def test_a_line_end_hyphenation_may_be_kept_or_joined_by_the_chunk():
    text = "the exer-\ncises were well-\nknown"
    for rendering in ("the exercises were well-known", "the exer- cises were well- known", "the exer-\ncises were well-\nknown"):
        result = measure_page(1, text, [chunk(rendering)])
        assert (result.foreign, result.lost) == (0, 0), rendering


def test_a_document_fails_when_a_page_does_and_names_it():
    pages = (PageOutput(1, "alpha beta"), PageOutput(2, "gamma delta"), PageOutput(3, status="unreadable"))
    result = measure("doc", pages, [chunk("alpha beta"), chunk("gamma", "page:2/chunk:0", page=2)])
    assert [p.page for p in result.pages] == [1, 2] and result.failing_pages == [2] and not result.passes
    assert result.totals() == {"words": 4, "foreign": 0, "notation": 0, "lost": 1, "duplicated": 0}
    # a page no chunker claimed lost every word
    assert measure("doc", pages, []).totals()["lost"] == 4


def test_a_dash_at_a_line_end_joins_nothing_and_one_word_spelled_two_ways_counts_once():
    assert words("very much exposed--\nand she") == ["very", "much", "exposed", "and", "she"]
    # the ISBN broken at a line end is the same word as the one written whole
    text = "ISBN 0-7472-7857-1 and again ISBN 0-\n7472-7857-1; the exer-\ncises and exercises"
    for rendering in (text, text.replace("-\n", "-"), text.replace("0-\n", "0-").replace("exer-\ncises", "exercises")):
        result = measure_page(1, text, [chunk(rendering)])
        assert (result.foreign, result.lost, result.duplicated) == (0, 0, 0), rendering


def test_a_word_hyphenated_across_a_printed_page_break_may_end_one_chunk_and_start_the_next():
    text = "table game content on touch-\n\n5\n\nscreen video devices"
    chunks = [chunk("table game content on touch-", page_footer=["5"]), chunk("screen video devices", "page:1/chunk:1")]
    result = measure_page(1, text, chunks)
    assert (result.foreign, result.lost, result.duplicated) == (0, 0, 0)
    # but a word cut where the page does not break it is two foreign fragments
    cut = measure_page(1, text, [chunk("table game content on touch-scr", page_footer=["5"]), chunk("een video devices")])
    assert cut.foreign == 2


def test_a_long_page_is_measured_without_holding_its_words():
    # the page's words are counted as they are read: 1 MiB of prose costs a small part of its
    # size beyond its chunks (holding them as tokens in order cost some 30x the page)
    sentence = "The harbour wall held the tide back, and the boats rode at anchor till morning.\n"
    text = sentence * ((1 << 20) // len(sentence))
    size = 16 * len(sentence)
    chunks = [chunk(text[i : i + size], f"page:1/chunk:{i}") for i in range(0, len(text), size)]
    result, _, peak = cost(lambda: measure_page(1, text, chunks))
    assert (result.words, result.foreign, result.lost, result.duplicated) == (len(text.split()), 0, 0, 0)
    assert peak < len(text) // 4, f"measuring a page of {len(text):,} characters peaked at {peak:,} bytes"


def test_a_page_of_distinct_words_is_measured_without_counting_them():
    """A log or a word list is a million distinct words: its chunks, when they hold exactly its
    words, are compared with it by sums of the words' hashes (`fidelity._same_words`), in memory
    that does not grow with it (counting them cost some 12x the page); a chunk one word short
    is measured word by word, and the word found lost."""
    import random

    rnd = random.Random(5)
    text = "".join("".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randrange(4, 12))) + "\n"
                   for _ in range(100_000))
    lines = text.splitlines(keepends=True)

    def chunks(short: int = 0) -> Iterator[DocumentChunk]:  # made as they are read, as spooled chunks are
        for i in range(0, len(lines), 200):
            yield chunk("".join(lines[i : i + 200 - (short if i == 0 else 0)]), f"page:1/chunk:{i}")

    result, _, peak = cost(lambda: measure_page(1, text, chunks))
    assert (result.words, result.foreign, result.lost, result.duplicated) == (100_000, 0, 0, 0)
    assert peak < len(text) // 4, f"measuring a page of {len(text):,} characters peaked at {peak:,} bytes"
    # words that end in a hyphen where their line goes on, and at the very end, as a log cut off
    # mid-line ends ("2026-12-"), are words as any other: still not counted
    lines[7], lines[-1] = "pre- fix\n", "2026-12-"
    text = "".join(lines)
    result, _, peak = cost(lambda: measure_page(1, text, chunks))
    assert (result.words, result.foreign, result.lost, result.duplicated) == (100_001, 0, 0, 0)
    assert peak < len(text) // 4, f"measuring a page of {len(text):,} characters peaked at {peak:,} bytes"
    lost = measure_page(1, text, lambda: chunks(short=1))
    assert (lost.words, lost.foreign, lost.lost, lost.duplicated) == (100_001, 0, 1, 0)
    assert [e.word for e in lost.examples] == [lines[199].strip()]
    # prose hyphenated at its line ends, some of its words across a chunk's end: each such word
    # is one on both sides, and still not counted (this took the word-by-word path: 12x the page)
    for i in range(99, len(lines) - 1, 100):
        lines[i] = lines[i].rstrip("\n") + "-\n"
    text = "".join(lines)
    result, _, peak = cost(lambda: measure_page(1, text, chunks))
    assert (result.words, result.foreign, result.lost, result.duplicated) == (100_001 - 999, 0, 0, 0)
    assert peak < len(text) // 4, f"measuring a page of {len(text):,} characters peaked at {peak:,} bytes"
    # and the chunks that join such a word whole still hold it (measured word by word)
    joined = [chunk(text.replace("-\n", ""))]
    assert (measure_page(1, text, joined).foreign, measure_page(1, text, joined).lost) == (0, 0)


def test_a_long_page_whose_chunks_miss_words_is_measured_a_stretch_at_a_time(monkeypatch):
    """A page whose chunks do not hold exactly its words is measured word by word, which for a
    log or a word list costs many times the page. When its chunks say where they stand on it
    (their offsets), a long page is measured a stretch at a time, each as a page of its own, and
    the measure finds what it finds word by word: a word lost, where it stands on the page, and a
    word longer than a chunk, cut, as foreign pieces."""
    import random

    from indx_assets.pipeline import fidelity
    from indx_assets.pipeline.identity import char_locator

    monkeypatch.setattr(fidelity, "STRETCH_CHARS", 1 << 12)
    rnd = random.Random(6)
    lines = ["".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=rnd.randrange(4, 12))) + "\n" for _ in range(100_000)]
    lines[50_000] = "".join(rnd.choices("abcdefghijklmnopqrstuvwxyz", k=3_000)) + "\n"  # longer than a chunk
    text = "".join(lines)
    starts = [0, *itertools.accumulate(len(line) for line in lines)]
    cuts = sorted({*starts[::200], starts[50_000] + 1_500, len(text)})  # a chunk every 200 lines, one in the long word
    gone = lines[70_001].strip()

    def chunks() -> Iterator[DocumentChunk]:
        for start, end in itertools.pairwise(cuts):
            content = text[start:end]
            if start <= starts[70_001] < end:
                content = content.replace(f"\n{gone}\n", "\n", 1)
            yield DocumentChunk(source_id="doc", locator=f"char:{start}-{end}", content=content, page=1,
                                start_offset=start + 10, end_offset=end + 10)  # the page starts at 10

    result, _, peak = cost(lambda: measure_page(1, text, chunks, origin=10))
    assert (result.words, result.foreign, result.lost, result.duplicated) == (100_000, 2, 2, 0)
    lost = [e for e in result.examples if e.kind == "lost"]
    assert [(e.word, e.locator) for e in lost] == [(lines[50_000].strip(), char_locator(starts[50_000], starts[50_001] - 1, page=1)),
                                                   (gone, char_locator(starts[70_001], starts[70_002] - 1, page=1))]
    # a stretch's words at a time (word by word, the whole page at once took 34x the page)
    assert peak < len(text) // 2, f"measuring a page of {len(text):,} characters peaked at {peak:,} bytes"
    # word by word, the whole page at once: the same findings
    whole = measure_page(1, text, chunks)
    assert (whole.words, whole.foreign, whole.lost, whole.duplicated) == (100_000, 2, 2, 0)
    assert [e.locator for e in whole.examples] == [e.locator for e in result.examples]


def test_a_markdown_page_with_an_inline_image_is_measured_in_stretches_as_it_is_whole(monkeypatch):
    """The Markdown chunker ends a chunk's span at its last word on the page, while its text
    holds an inline image's alt text after it; the text between two chunks goes with the
    stretch before, so the stretched measure finds what the whole one does, wherever the
    stretches end (it found the image's word foreign in one stretch and lost in the next)."""
    from stored_sources import NOTES_CHAIN, notes_with_an_image

    from indx_assets.pipeline import fidelity
    from indx_assets.pipeline.chain import ChainConfig, load_chain
    from indx_assets.pipeline.read_and_chunk import encode_bytes, page_origins, to_document

    page, chain = notes_with_an_image(), load_chain(ChainConfig.parse(NOTES_CHAIN))
    encoded = encode_bytes(page.encode(), source_id="notes.md", name="notes.md", chain=chain)
    text, chunks = encoded.read.pages[0].text, to_document(encoded).chunks
    whole = measure_page(1, text, chunks)
    assert whole.passes and whole.words > 100
    measured = 0
    for size in range(100, len(text) // 2, 20):
        monkeypatch.setattr(fidelity, "STRETCH_CHARS", size)
        stretched = measure_page(1, text, chunks, origin=page_origins(encoded.read)[1])
        assert [getattr(stretched, n) for n in fidelity.COUNTS] == [getattr(whole, n) for n in fidelity.COUNTS], size
        measured += 1
    assert measured >= 10


def test_a_chinese_or_japanese_character_is_a_word_of_its_own():
    # Chinese and Japanese set no space between words: a paragraph of Chinese was one word, and
    # every chunk that ended inside it (at a sentence end) held foreign parts of it
    assert words("第一章 这是测试。日本語のテキスト「中文」,ok") == [*"第一章这是测试日本語のテキスト中文", "ok"]
    # two characters side by side are no word and its mark, nor halves of a hyphenated word
    for text, content in (("Unicode-\n中文", "Unicode-中文"), ("中文\u00ad\n字母", "中文字母"), ("表1 中文", "表 1 中文")):
        result = measure_page(1, text, [chunk(content)])
        assert (result.foreign, result.notation, result.lost, result.duplicated) == (0, 0, 0, 0), text
    text = "第一章\n\n一二三四五。六七八九十。"
    result = measure_page(1, text, [chunk("第一章\n\n一二三四五。"), chunk("六七八九十。")])
    assert (result.words, result.foreign, result.lost, result.duplicated) == (13, 0, 0, 0) and result.passes
    # a character left out or repeated is still found
    result = measure_page(1, text, [chunk("第一章\n\n一二三四五。"), chunk("六七九九十。")])
    assert (result.lost, result.duplicated) == (1, 1)


def test_chinese_pages_keep_their_words_as_the_chain_cuts_them():
    # the default chain, end to end: paragraphs of Chinese and Japanese (sentences of 40
    # characters, and one of 1,200 with no mark at all, cut between characters), as text,
    # Markdown (one in a table's cell) and HTML
    import random

    import regex

    from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document

    rnd = random.Random(4)
    chars = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可也你日本語のテキストです"
    paragraphs = ["".join("".join(rnd.choices(chars, k=39)) + "。" for _ in range(rnd.randrange(3, 40))) for _ in range(6)]
    paragraphs.append("".join(rnd.choices(chars, k=1200)))
    files = {"zh.txt": "第一章\n\n" + "\n\n".join(paragraphs) + "\n",
             "zh.md": "# 第一章\n\n" + "\n\n".join(paragraphs) + f"\n\n| 列 | 值 |\n|---|---|\n| x | {paragraphs[0]} |\n",
             "zh.html": "<h1>第一章</h1>" + "".join(f"<p>{p}</p>" for p in paragraphs)}
    for name, text in files.items():
        encoded = encode_bytes(text.encode(), source_id=name, name=name)
        chunks = to_document(encoded).chunks
        assert len(chunks) > 10
        result = measure(name, encoded.read.pages, chunks)
        assert result.passes, (name, result.to_json())
        # a word a character, and the table's "x"
        assert result.totals()["words"] == len(regex.findall(r"[\p{Han}\p{Hiragana}\p{Katakana}]", text)) + (name == "zh.md")


def test_a_long_run_cut_into_foreign_pieces_is_measured_in_bounded_time():
    # a word longer than a chunk (a run of one letter, a Thai paragraph, a signed link) is cut
    # between characters, its pieces foreign; finding where each stands took time with the cube
    # of the run's length (4,000 characters: 18 s; this page's 8,000 some 140 s)
    run = "a" * 8000
    text = f"Before {run} after."
    pieces = [chunk("Before"), *(chunk(run[i : i + 1000], f"page:1/chunk:{i}") for i in range(0, len(run), 1000)),
              chunk("after.")]
    result, seconds, _ = cost(lambda: measure_page(1, text, pieces))
    assert (result.words, result.foreign, result.lost) == (3, 8, 1)
    assert seconds < 10, f"measured in {seconds:.1f} s"
    # and a Chinese character lost is shown where it stands
    result = measure_page(1, "一二三四五。", [chunk("一二四五。")])
    assert [(e.kind, e.word, e.context) for e in result.examples] == [("lost", "三", "一二三四五。")]
