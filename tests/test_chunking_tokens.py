"""Token limits: counted with the caller's tokenizer, never exceeded, fast paths exact."""

import math
import random
from collections import Counter

import pytest
from metered import MeteredCounter, cost

from indx_assets.pipeline.chunking import CodeSnippet, NarrativeText, Table, Text, Title, chunk_by_title, chunk_elements
from indx_assets.pipeline.chunking.measure import WORD_CACHE_LIMIT, TokenMeasure, whitespace_additive
from indx_assets.pipeline.tokenizer import ENCODED_WORDS, minilm_tokenizer

PROSE = (
    "Well, Prince, so Genoa and Lucca are now just family estates of the Buonapartes. "
    "But I warn you, if you don't tell me that this means war, I will not believe it! "
    "It was in July, 1805, and the speaker was the well-known Anna Pavlovna Scherer. "
)


class PairCounter:
    """A tokenizer whose counts do not add up over words: one token per two characters."""

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 2)


@pytest.fixture(scope="module")
def minilm():
    return minilm_tokenizer()


def elements() -> list:
    els: list = []
    for i in range(12):
        els += [Title(f"Chapter {i}"), NarrativeText(PROSE * (i % 5 + 1)), Text("Short note."), CodeSnippet("x = 1\ny = 2\n" * i)]
    return els


def test_the_embedders_tokenizer_is_recognised_as_whitespace_additive(minilm) -> None:
    assert whitespace_additive(minilm)
    assert not whitespace_additive(PairCounter())
    measure = TokenMeasure(minilm)
    texts = [PROSE, "naïve café, déjà-vu!", "a\x0bb c", "  "]
    assert measure.sizes(texts) == [minilm.count(t) for t in texts]
    assert [measure.size(t) for t in texts] == [minilm.count(t) for t in texts]


@pytest.mark.parametrize("strategy", [chunk_elements, chunk_by_title])
@pytest.mark.parametrize("max_tokens,soft,overlap", [(64, None, 0), (40, 20, 8), (128, 90, 16)])
def test_no_chunk_exceeds_max_tokens_of_the_embedders_tokenizer(minilm, strategy, max_tokens, soft, overlap) -> None:
    chunks = strategy(elements(), max_tokens=max_tokens, new_after_n_tokens=soft, overlap=overlap,
                      overlap_all=bool(overlap), tokenizer=minilm)
    assert chunks and all(c.text.strip() for c in chunks)
    counts = [minilm.count(c.text) for c in chunks]
    assert max(counts) <= max_tokens
    assert max(counts) >= max_tokens * 0.75  # the window is used, not left mostly empty


@pytest.mark.parametrize("strategy", [chunk_elements, chunk_by_title])
def test_a_tokenizer_that_does_not_add_up_is_still_never_exceeded(strategy) -> None:
    tok = PairCounter()
    chunks = strategy(elements(), max_tokens=50, overlap=5, tokenizer=tok)
    assert chunks and max(tok.count(c.text) for c in chunks) <= 50
    assert max(tok.count(c.text) for c in chunks) >= 40


def test_token_split_prefers_sentence_ends(minilm) -> None:
    chunks = chunk_elements([NarrativeText(PROSE * 3)], max_tokens=60, tokenizer=minilm)
    assert len(chunks) > 2
    assert all(c.text.endswith((".", "!")) for c in chunks)


def test_token_overlap_starts_on_a_word_and_fits(minilm) -> None:
    chunks = chunk_elements([NarrativeText(PROSE * 3)], max_tokens=40, overlap=10, tokenizer=minilm)
    for before, after in zip(chunks, chunks[1:]):
        prefix = after.text[: after.metadata.overlap_prefix_len].strip()
        assert prefix and before.text.endswith(prefix)
        assert before.text[-len(prefix) - 1] == " "  # the tail starts at a word
        assert minilm.count(prefix) <= 10


def test_a_big_table_splits_by_rows_in_tokens(minilm) -> None:
    rows = "".join(f"<tr><td>city {i}</td><td>{i * 17} trams on weekdays</td></tr>" for i in range(40))
    html = f"<table><thead><tr><th>City</th><th>Service</th></tr></thead>{rows}</table>"
    text = "City | Service\n" + "\n".join(f"city {i} | {i * 17} trams on weekdays" for i in range(40))
    chunks = chunk_elements([Table(text, text_as_html=html)], max_tokens=50, tokenizer=minilm)
    assert len(chunks) > 3
    assert all(minilm.count(c.text) <= 50 for c in chunks)
    assert all(c.text.startswith("City Service city") for c in chunks)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_long_run_without_spaces_is_cut_measuring_text_in_proportion_to_its_length(minilm, seed: int) -> None:
    # symbols, each a token, and no word boundary to cut at: each chunk is cut between
    # characters, and each cut must measure text in proportion to the limit, not the whole
    # rest of the run (which made a 100 kB run of symbols take 15 s to chunk)
    text = "".join(random.Random(seed).choices("<>*#[](){}!?", k=50_000))
    metered = MeteredCounter()
    chunks = chunk_elements([NarrativeText(text)], max_tokens=254, tokenizer=metered)
    assert "".join(c.text for c in chunks) == text
    assert all(minilm.count(c.text) <= 254 for c in chunks) and len(chunks) > 50
    assert metered.chars < 40 * len(text), metered.chars / len(text)  # before: 115 times


def test_words_the_vocabulary_cannot_spell_count_by_their_length(minilm) -> None:
    # to MiniLM a word it cannot spell is one [UNK] token however long: Thai written without
    # spaces, a DNA sequence. Counted so, 34 kB of Thai made two chunks of 22 and 12 kB
    phrase = "ประเทศไทยมีประวัติศาสตร์ยาวนานและวัฒนธรรมที่หลากหลาย"
    assert minilm.tokenizer.encode(phrase, add_special_tokens=False).tokens == ["[UNK]"]
    assert minilm.count(phrase) == math.ceil(len(phrase) / 4)
    assert minilm.count(f"{phrase} {phrase} plain words") == 2 * minilm.count(phrase) + minilm.count("plain words")
    assert whitespace_additive(minilm)
    for text, joint in ((f"{phrase} " * 300, " "), ("ACGT" * 5000, "")):  # cut between words; between characters
        chunks = chunk_elements([NarrativeText(text)], max_tokens=254, tokenizer=minilm)
        assert joint.join(c.text for c in chunks) == text.strip()
        assert len(chunks) > 10 and max(len(c.text) for c in chunks) <= 254 * 4


def test_words_counted_at_once_count_as_each_word_alone(minilm, corpus) -> None:
    # the chunker counts a long document's new words in one encoding of them joined by spaces;
    # each word must get the count it has alone: unknown words by their length, controls the
    # normaliser deletes, CJK characters, accents, punctuation split off, a word of nothing
    import pypdfium2 as pdfium

    words: set[str] = set()
    for path in sorted((corpus / "example-docs" / "pdf").glob("*.pdf"))[:12]:
        try:
            document = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError:
            continue
        for page in document:
            words.update(TokenMeasure._split(page.get_textpage().get_text_range()))
        document.close()
    phrase = "ประเทศไทยมีประวัติศาสตร์ยาวนานและวัฒนธรรมที่หลากหลาย"
    odd = [phrase, f"({phrase}),", "ACGT" * 50, "a\x0bb", "\x0c", "中文字符", "naïve", "déjà-vu!", "24.0910", "—", "\ufffe", "x\x00y"]
    # the words counted from the vocabulary without the tokenizer (`WholeWords`), and their
    # edges: case, digits, marks around a word or alone, the length limit, added tokens
    # ("[SEP]" is one token), a word WordPiece cuts, a mark inside a word
    vocabulary = ["The", "(Chapter", "1984).", "...", "--", "``", "e.g.", "don't", "x" * 100, "a" * 101, "[SEP]",
                  "a[SEP]b", "[unused1]", "[CLS]-", "##ing", "Tokenizer", "word-level", "~/path", "#1"]
    words = sorted(words) + odd + vocabulary
    assert len(words) > 5000
    assert minilm.count_words(words) == [minilm.count(w) for w in words]
    assert minilm.count_words(vocabulary) == [minilm.count(w) for w in vocabulary]
    # more new words than one encoding takes (a server log's numbers): counted in steps, the same
    numbers = [f"10.0.{n % 256}.{n // 256}:{n * 7919 % 65536}" for n in range(ENCODED_WORDS + 1000)]
    assert minilm.count_words(numbers) == [minilm.count(w) for w in numbers]
    # and more characters (blobs among them, one longer than an encoding takes): the same
    blobs = [word for n in range(300) for word in (f"payload={n:04x}" + "9f3a,b7" * (n * 13 % 700), f"id{n}")]
    blobs.append("c0ffee" * 5_000)
    assert minilm.count_words(blobs) == [minilm.count(w) for w in blobs]


class WordAsker:
    """MiniLM, noting each word it is asked to count alone (or not: `note=False`)."""

    whitespace_additive = True

    def __init__(self, inner, note: bool = True) -> None:
        self.inner, self.asked = inner, Counter() if note else None

    def count(self, text: str) -> int:
        return self.inner.count(text)

    def count_words(self, words: list[str]) -> list[int]:
        if self.asked is not None:
            self.asked.update(words)
        return self.inner.count_words(words)


def test_words_met_once_do_not_stay_counted(minilm) -> None:
    # a list of links or a log: 400,000 distinct words, whose counts a single cache of 200,000
    # words kept for nothing (measuring them peaked at 27 MB); two generations of the words
    # learnt lately hold a bounded part of them (14.5 MB)
    rnd = random.Random(5)
    page = "\n".join(f"{rnd.getrandbits(28):07x}" for _ in range(400_000))
    measure = TokenMeasure(WordAsker(minilm, note=False))
    size, _, peak = cost(lambda: measure.size(page))
    assert size == minilm.count(page)
    assert peak < 20 << 20, f"measuring {len(page):,} characters of distinct words peaked at {peak:,} bytes"


def test_a_blob_cut_between_characters_leaves_no_heap_of_its_prefixes(minilm) -> None:
    # a log with a blob longer than a chunk in one line of 100: cutting it between characters
    # measures its prefixes, each a word to the cache; a cache bound by words alone kept
    # thousands of them (here 20.6 MB, against 6.9 MB bound by their characters too)
    from indx_assets.pipeline.chunking.text_splitter import TextSplitter

    rnd = random.Random(3)
    text = "\n".join(f"12:{rnd.randrange(60):02d} GET /items/{rnd.randrange(10**6)} {rnd.getrandbits(32):08x}"
                     + (" payload=" + rnd.randbytes(4_500).hex() if i % 100 == 0 else "") for i in range(12_000))
    measure = TokenMeasure(WordAsker(minilm, note=False))
    pieces, _, peak = cost(lambda: TextSplitter(measure, 256).split_all(text))
    assert "".join("".join(piece.split()) for piece, _ in pieces) == "".join(text.split())
    assert peak < 10 << 20, f"cutting {len(text):,} characters with 120 blobs peaked at {peak:,} bytes"


def test_a_documents_common_words_are_counted_once_among_words_met_once(minilm) -> None:
    # the words a document repeats come back into each new generation, and are not asked again
    rnd = random.Random(6)
    vocabulary = [f"{rnd.choice(PROSE.split())}{n}" for n in range(2_000)]
    tokenizer = WordAsker(minilm)
    for _ in range(4):
        page = " ".join(f"{rnd.choice(vocabulary)} {rnd.getrandbits(40):010x}" for _ in range(3 * WORD_CACHE_LIMIT))
        assert TokenMeasure(tokenizer).size(page) == minilm.count(page)
    assert max(tokenizer.asked[word] for word in vocabulary) == 1
    assert max(tokenizer.asked.values()) == 1
