"""Large text, Markdown and HTML files read in bounded memory give what a whole read gives:
a text file decoded from its file in steps (`decode_file`) is the text its bytes decode to,
whatever falls on a step's edge, the windowed whitespace collapse (the HTML reader's and the
chunkers') and the windowed measure of a long text give what the whole-string rules give, and
the HTML reader's parse of the file's own UTF-8 bytes gives the blocks of its parse of the text.
(Memory itself is measured by bench/bench_source_memory.py, not here.)"""

import codecs
import io
import re

import pytest

from indx_assets.pipeline.readers import ReaderConfig, read_document, read_document_file
from indx_assets.pipeline.readers import html as html_reader
from indx_assets.pipeline.readers.text import decode_file
from indx_assets.pipeline.whitespace import WINDOW, collapse_whitespace, iter_words

#: More than a few of the reader's 1 MiB steps, in characters of every UTF-8 width.
WORDS = ["harbour", "crème", "brûlée", "漢字", "🙂", "tide\r\n", "wall\t", "\u00a0", "Ωmega"]


def _text(chars: int) -> str:
    pieces, size, i = [], 0, 0
    while size < chars:
        word = WORDS[(i * 5 + i // 3) % len(WORDS)] + " "
        pieces.append(word)
        size += len(word)
        i += 1
    return "".join(pieces)


@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_a_utf8_file_decoded_in_steps_is_its_text_whatever_falls_on_a_steps_edge(shift: int) -> None:
    # `shift` ASCII bytes in front move every multi-byte character across the steps' edges
    text = "x" * shift + _text(3_300_000)
    decoded = decode_file(io.BytesIO(text.encode()))
    assert (decoded.encoding, decoded.text) == ("utf-8", text)


@pytest.mark.parametrize("encoding", ["cp1252", "utf-8-sig", "utf-16"])
def test_a_file_in_another_encoding_is_read_from_the_file_as_from_its_bytes(encoding: str) -> None:
    text = ("Grüße aus Zürich: café crème à la française, Ça coûte très cher. " * 40_000)
    content = text.encode(encoding)
    whole = read_document(content, "text/plain")
    from_file = read_document_file(io.BytesIO(content), "text/plain")
    assert from_file == whole and from_file.status == "ok"
    if encoding != "cp1252":  # a byte-order mark says what it is; cp1252 goes through detection
        assert from_file.content == text


@pytest.mark.parametrize("media_type", ["text/plain", "text/markdown"])
def test_a_large_text_file_read_from_its_file_has_the_pages_of_its_bytes(media_type: str) -> None:
    content = (_text(1_500_000) + "\f# Page two\n\nA short page.\n\f \n").encode()
    read = read_document_file(io.BytesIO(content), media_type)
    assert read == read_document(content, media_type)
    assert [p.status for p in read.pages] == ["ok", "ok", "empty"]
    assert "\f".join(p.text for p in read.pages) == content.decode()


def test_binary_bytes_in_a_text_file_are_refused_from_the_file_too() -> None:
    read = read_document_file(io.BytesIO(b"plain words " * 10 + b"\x00\x01" * 50_000), "text/plain")
    assert (read.status, read.reason) == ("failed", "contains NUL bytes: binary, not text")


def test_a_long_texts_whitespace_is_collapsed_as_the_whole_string_rule_collapses_it() -> None:
    # runs of every kind of whitespace, some many MiB apart, some straddling the windows' edges
    body = _text(2_500_000).replace("wall\t ", "wall\u2003\u3000 \n\n ")
    window = 16 * WINDOW
    straddling = "x" * (window - 3) + " \t\n\u3000 \n" + "y" * window + "\n" * window + "z"  # runs across the windows' edges
    for text in (body, "  \n" + body + "\t\n ", " " * window + body[:window] + " " * 3 + body[-5:], straddling,
                 _text(5 * WINDOW)):  # single spaces only: a stretch of it is its slice
        assert collapse_whitespace(text) == re.sub(r"\s+", " ", text).strip() == " ".join(text.split())
        assert list(iter_words(text)) == text.split()  # the word measure's words of a long line
        # a stretch of it, collapsed from the text itself (the text chunker's long paragraph)
        for start, end in ((0, len(text) - 1), (3, len(text)), (window - 5, 3 * window + 7), (17, 17 + WINDOW // 3), (9, 9)):
            assert collapse_whitespace(text, start, end) == " ".join(text[start:end].split()), (start, end)


def test_a_long_text_is_measured_in_tokens_as_its_words_add_up() -> None:
    # a 2.5 MiB paragraph of many words (a log's numbers among them), measured a window at a
    # time, against the same words counted from one list
    from indx_assets.pipeline.chunking.measure import TokenMeasure
    from indx_assets.pipeline.tokenizer import minilm_tokenizer

    minilm = minilm_tokenizer()
    text = " ".join(f"{word} 10.0.{n % 256}.{n // 256}" for n, word in enumerate(_text(1_200_000).split()))
    assert len(text) > 2 * WINDOW
    words = text.split()
    assert TokenMeasure(minilm).size(text) == sum(minilm.count_words(words)) > len(words)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252"])
def test_a_large_html_page_is_read_from_its_bytes_as_from_its_text(encoding: str) -> None:
    paragraphs = "".join(f"<p>Grüße {i}, café   crème\n  à la <b>française</b>.</p>\n" for i in range(20_000))
    html = f"<html><body><h1>Title</h1>\n{paragraphs}<div>{'  tide wall ' * 120_000}</div></body></html>"
    content = html.encode(encoding)
    if encoding == "utf-8-sig":
        assert content.startswith(codecs.BOM_UTF8)
    read = read_document(content, "text/html", ReaderConfig())
    expected = html_reader.BLOCK_SEPARATOR.join(b.text for b in html_reader.html_blocks(html))
    assert read.pages[0].text == expected
    assert read.metadata["encoding"] == encoding.replace("-sig", "")
