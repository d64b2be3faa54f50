"""One sentence rule (`chunking/sentences.py`) for packing, sentence pieces, line runs and
`split_document`: its cases, and every caller cutting the same text at the same ends."""

import random
from collections.abc import Iterator

import pytest

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.chunkers.base import sentence_units
from indx_assets.pipeline.chunkers.markdown import MarkdownProvider
from indx_assets.pipeline.chunking.elements import ElementMetadata, NarrativeText
from indx_assets.pipeline.chunking.measure import CharMeasure, TokenMeasure
from indx_assets.pipeline.chunking.options import ChunkingOptions, build_options
from indx_assets.pipeline.chunking.paragraphs import line_runs
from indx_assets.pipeline.chunking.sentences import sentence_ends, sentence_spans
from indx_assets.pipeline.chunking.split import split_document
from indx_assets.pipeline.chunking.text_splitter import TextSplitter

#: (text, its sentences). Each case names what the rule keeps whole or cuts.
CASES = [
    pytest.param("Mr. Smith met Dr. Who. They talked.", ["Mr. Smith met Dr. Who.", "They talked."], id="titles"),
    pytest.param("Use e.g. this, i.e. that. The U.S. Army won. Next one.",
                 ["Use e.g. this, i.e. that.", "The U.S. Army won.", "Next one."], id="initialisms"),
    pytest.param("John F. Kennedy spoke. See Fig. 3 and No. 5 first. The answer was no. Then",
                 ["John F. Kennedy spoke.", "See Fig. 3 and No. 5 first.", "The answer was no.", "Then"], id="initials-and-numbered"),
    pytest.param("Smith et al. Found it. Wait... What? OK! it was. lower-cased text ends too.",
                 ["Smith et al. Found it.", "Wait...", "What?", "OK!", "it was.", "lower-cased text ends too."], id="et-al-and-case"),
    pytest.param("Pi is 3.14 and v1.2.3 is out. See example.com now.",
                 ["Pi is 3.14 and v1.2.3 is out.", "See example.com now."], id="numbers"),
    pytest.param('He said "stop." Then (he left.) Built in 1862.[7] Sold.',
                 ['He said "stop."', "Then (he left.)", "Built in 1862.[7]", "Sold."], id="closers-and-markers"),
    pytest.param("这是第一句。这是第二句！第三句？「好的。」走吧", ["这是第一句。", "这是第二句！", "第三句？", "「好的。」", "走吧"], id="cjk"),
    pytest.param("Ｅ＝３．１４です。次！Really?真的", ["Ｅ＝３．１４です。", "次！", "Really?", "真的"], id="fullwidth"),
]


def split_sentences(text: str) -> list[str]:
    result = split_document(text, compute_type="character", max_chunk_size=10_000, need_sentence=True)
    return [s["content"] for s in result["sentences"]]


def sentence_pieces(text: str) -> list[str]:
    (chunker,) = MarkdownProvider().with_options(sentences=True).chunkers()
    (claim,) = chunker.chunk(text.encode(), "text/markdown", (PageOutput(page=1, text=text, status="ok"),))
    return [p.text for p in claim.pieces if p.chunk_type == "sentence"]


def packing_units(text: str) -> list[str]:
    """The sentences packing fills chunks with (a paragraph bigger than the soft maximum)."""
    opts = build_options(max_characters=10_000, new_after_n_chars=5, overlap=0, overlap_all=False,
                         include_orig_elements=False, max_tokens=None, new_after_n_tokens=None,
                         tokenizer=None, isolate_table=True, repeat_table_headers=True)
    return [unit.element.text for unit in sentence_units([NarrativeText(text, metadata=ElementMetadata())], opts)]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_the_rule(text: str, expected: list[str]) -> None:
    assert [text[s:e] for s, e in sentence_spans(text)] == expected


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_split_document_packing_and_sentence_pieces_cut_the_same_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected
    assert packing_units(text) == expected
    assert sentence_pieces(text) == expected


def test_an_oversized_run_is_cut_after_a_sentence_not_after_a_title() -> None:
    text = "Intro words here. Then Mr. Smith met Dr. Who and the rest of it"
    piece, rest, _ = TextSplitter(CharMeasure(), maxlen=44).split(text)
    assert piece == "Intro words here. Then Mr. Smith met Dr. Who"  # the right-most space, not "Dr."
    assert rest.startswith("and the rest")


def test_cjk_text_is_cut_at_its_sentence_ends_without_a_space() -> None:
    text = "这是第一句。这是第二句。这是第三句。"
    piece, rest, _ = TextSplitter(CharMeasure(), maxlen=14).split(text)
    assert (piece, rest) == ("这是第一句。这是第二句。", "这是第三句。")


def test_a_long_line_ending_in_an_abbreviation_runs_on_into_the_next() -> None:
    lines = ["The measurements in the second campaign were repeated with the same instruments and reviewed by Smith et al.",
             "found that the drift stayed under a tenth of a degree, e.g.",
             "during the whole of the winter season, which matches the earlier campaign and its own reported drift figures."]
    assert line_runs(lines) == [(0, 3)]


def test_sentence_ends_do_not_look_before_the_text_they_are_told_starts() -> None:
    text = "as Smith et al. Then the tide"
    at = text.index("al.")
    assert list(sentence_ends(text, at)) == []  # "et al." stands before: no end
    assert list(sentence_ends(text, at, floor=at)) == [at + 3]  # the text starts at "al.": it ends a sentence


def _split_one_at_a_time(splitter: TextSplitter, text: str) -> list[tuple[str, int]]:
    pieces, rest, prefix = [], text, 0
    while rest:
        piece, rest, next_prefix = splitter.split(rest, prefix)
        pieces.append((piece, prefix))
        prefix = next_prefix
    return pieces


def test_a_cut_reads_no_text_before_what_it_cuts() -> None:
    """A word over the limit is cut between characters, here just before "Prof.": the rest
    starts there, and the letters before it in the text are not read as part of its word, so
    "Prof." is a title (no sentence end after it), as it is for `split` given the rest alone."""
    splitter = TextSplitter(CharMeasure(), maxlen=7)
    expected = [("aaaaaaa", 0), ("Prof. b", 0), ("c d", 0)]
    assert _split_one_at_a_time(splitter, "aaaaaaaProf. b c d") == expected
    assert splitter.split_all("aaaaaaaProf. b c d") == expected


def test_an_overlap_tail_is_stripped_as_split_strips_the_rest() -> None:
    """A tokenizer counts a form feed into its word, so an overlap tail may start with one;
    `split` strips the text it is given, and so does the walk of `split_all`. The overlap
    prefix counts what the next piece repeats: "b " (it counted the form feed stripped off).
    The next piece is the text's own stretch, its line break kept."""
    splitter = TextSplitter(TokenMeasure(_WordCounts()), maxlen=2, overlap=1)
    for text, second in (("a \x0cb c", "b c"), ("a \x0cb\nc", "b\nc")):
        assert splitter.split_all(text) == _split_one_at_a_time(splitter, text) == [("a \x0cb", 0), (second, 2)]


def test_an_overlap_close_to_the_limit_ends_and_cuts_no_word_apart_in_its_pieces() -> None:
    """With an overlap close to the limit, the walk went on forever where a tail was all of
    its piece, and a tail joined to the rest of a word cut apart with a space ("wal l"). And
    most cuts fell inside a word: a piece had to be longer than the whole overlap, and a tail
    could leave no room for the next word. Now a piece holds whole words of the text, but for
    a word over the limit."""
    import signal

    def too_long(*_: object) -> None:
        raise TimeoutError("split_all did not end")

    rng = random.Random(11)
    previous = signal.signal(signal.SIGALRM, too_long)
    try:
        for _ in range(300):
            text = " ".join(rng.choice(["harbour", "a", "tide", "wall", "x" * rng.randint(1, 40), "end.\n"])
                            for _ in range(rng.randint(1, 200)))
            maxlen = rng.randint(5, 120)
            measure = rng.choice([CharMeasure(), TokenMeasure(_WordCounts())])
            splitter = TextSplitter(measure, maxlen=maxlen, overlap=rng.randint(maxlen // 2, maxlen - 1))
            signal.alarm(20)
            pieces = splitter.split_all(text)
            signal.alarm(0)
            assert pieces == _split_one_at_a_time(splitter, text)
            whole = " ".join(text.split())
            assert all(" ".join(piece.split()) in whole for piece, _ in pieces)
            words = set(text.split())
            over = [w for w in words if measure.size(w) > maxlen]
            assert all(w in words or any(w in o for o in over) for piece, _ in pieces for w in piece.split())
            # what each piece adds to the one before is the text, in order
            added = "".join("".join(piece[prefix:].split()) for piece, prefix in pieces)
            assert added == "".join(text.split())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class _WordCounts:
    """A whitespace-additive tokenizer: a token per word and one more per 4 letters."""

    def count(self, text: str) -> int:
        return sum(1 + len(word) // 4 for word in text.split())


@pytest.mark.parametrize("measure", [CharMeasure(), TokenMeasure(_WordCounts())])
def test_an_overlap_walks_a_long_text_of_lines_in_place(measure: CharMeasure | TokenMeasure) -> None:
    """A text of lines cut with an overlap: each piece is the text's own stretch, line breaks
    and all, so the walk reads the text in place. It wrote out the tail, a space and the whole
    rest of the text at every cut: time in the square of the text's length, and pieces that
    held a space where the text had a line break."""
    rng = random.Random(3)
    text = "".join(f"10.0.{rng.randrange(256)}.{rng.randrange(256)} GET /harbour?tide={rng.randrange(10**4)}\n"
                   for _ in range(3000))
    pieces = TextSplitter(measure, 40 if measure.unit == "tokens" else 300, 20).split_all(text)
    at = 0  # where the text no piece has held yet starts
    for piece, prefix in pieces:
        start = len(text) - len(text[at:].lstrip()) - prefix
        assert text[start : start + len(piece)] == piece
        at = start + len(piece)
    assert at == len(text.rstrip()) and sum(prefix > 0 for _, prefix in pieces) > 100


def test_a_piece_holds_a_counted_token() -> None:
    """A word a tokenizer counts as no token (a zero-width space, a form feed) is no piece of
    its own: a cut falls after a counted token, as it did before a cut fell past the overlap."""
    from indx_assets.pipeline.tokenizer import minilm_tokenizer

    splitter = TextSplitter(TokenMeasure(minilm_tokenizer()), maxlen=3, overlap=0)
    assert splitter.split_all("\x0c\u200b supercalifragilistic") == [("\u200b supercalif", 0), ("ragilistic", 0)]


_WORDS = ["harbour", "tide", "the", "et", "al.", "Smith", "No.", "5", "Mr.", "U.S.", "end.", "end?", "“so.”", "[7]",
          "3.14", "wall" * 12, "潮。", "cf."]
_GAPS = [" ", " ", " ", "\n", "  ", "\n\n", "\t"]


@pytest.mark.parametrize("seed", range(6))
def test_a_long_text_is_cut_into_the_pieces_split_gives_one_after_another(seed: int) -> None:
    """`split_all` walks the text by offsets (no copy of the rest at each cut): its pieces are
    those of `split` on what each cut leaves, overlap tails and all, even where a cut leaves
    "al." at the start of the rest with "et" before it in the text."""
    rng = random.Random(seed)
    text = "".join(rng.choice(_WORDS) + rng.choice(_GAPS) for _ in range(600))
    for measure, limits in ((CharMeasure(), (6, 40, 300)), (TokenMeasure(_WordCounts()), (3, 20, 120))):
        for maxlen in limits:
            for overlap in (0, 1, maxlen // 3):
                splitter = TextSplitter(measure, maxlen, overlap)
                pieces = splitter.split_all(text)
                assert pieces == _split_one_at_a_time(splitter, text), (maxlen, overlap)
                assert all(measure.size(piece) <= maxlen for piece, _ in pieces)
                if not overlap:
                    # every character but whitespace, once, in order (a word over the limit is cut inside)
                    assert "".join("".join(p.split()) for p, _ in pieces) == "".join(text.split())


def _lead_in_options() -> ChunkingOptions:
    return build_options(max_characters=200, new_after_n_chars=150, overlap=0, overlap_all=False,
                         include_orig_elements=False, max_tokens=None, new_after_n_tokens=None,
                         tokenizer=None, isolate_table=True, repeat_table_headers=True)


def test_a_page_of_lead_in_lines_goes_on_as_it_is_read() -> None:
    # a word list: every line a lead-in line; what follows the run can only start a chunk with
    # the lines that fit one, so the rest go on (they used to wait for the whole page)
    read = 0

    def elements() -> Iterator[NarrativeText]:
        nonlocal read
        for i in range(20_000):
            read += 1
            yield NarrativeText(f"harbour{i}", metadata=ElementMetadata())

    units = sentence_units(elements(), _lead_in_options(), starts_from=0.5)
    next(units)
    assert read <= 1024, f"the first unit came after {read:,} of 20,000 lead-in lines were read"
    assert 1 + sum(1 for _ in units) == 20_000


def test_a_long_paragraph_starts_its_chunk_with_the_lead_in_lines_that_fit_it() -> None:
    lines = [NarrativeText(f"Label number {i}", metadata=ElementMetadata()) for i in range(40)]
    paragraph = NarrativeText("The harbour wall held the tide back. " * 6, metadata=ElementMetadata())
    units = list(sentence_units([*lines, paragraph], _lead_in_options(), starts_from=0.5))
    starts = [unit.element.text for unit in units if unit.starts]
    # the run's last lines that fit the hard maximum (200 characters) together start the
    # paragraph's chunk, not the run's first line, which no chunk could hold with it
    fit = max(k for k in range(1, len(lines) + 1) if sum(len(line.text) for line in lines[-k:]) <= 200)
    assert fit < len(lines) and starts == [lines[-fit].text]
    assert [unit.element.text for unit in units[: len(lines)]] == [line.text for line in lines]


def test_a_run_of_long_lead_in_lines_starts_one_chunk_however_long_it_runs() -> None:
    # lines of 54 characters: each a lead-in line (short, no sentence end) and each long enough
    # to start a chunk (half the soft maximum of 100); the run starts one chunk, at its first
    # line, as it did before a run was let go of in parts (then every part started one)
    opts = build_options(max_characters=200, new_after_n_chars=100, overlap=0, overlap_all=False,
                         include_orig_elements=False, max_tokens=None, new_after_n_tokens=None,
                         tokenizer=None, isolate_table=True, repeat_table_headers=True)
    lines = [NarrativeText(f"Label line number {i:02d} of the list that runs on and on", metadata=ElementMetadata())
             for i in range(14)]
    assert [unit.starts for unit in sentence_units(lines, opts, starts_from=0.5)] == [True] + [False] * 13


def test_an_overlap_prefix_repeats_a_short_chunk_whole() -> None:
    from indx_assets.pipeline.chunkers.base import ChunkerSettings

    settings = ChunkerSettings.from_options(max_characters=200, overlap=50, overlap_all=True, join_under=None)
    note = NarrativeText("See note 9.", metadata=ElementMetadata())
    leases = NarrativeText("We have operating leases for our office and for certain equipment. " * 2, metadata=ElementMetadata())
    first, second = [chunk.text for chunk in settings.chunk([note, leases])][:2]
    assert first == "See note 9." and second.startswith("See note 9.\n\nWe have")
