"""One sentence rule (`chunking/sentences.py`) for packing, sentence pieces, line runs and
`split_document`: its cases, and every caller cutting the same text at the same ends."""

import pytest

from indx_assets.pipeline.chunker_port import PageOutput
from indx_assets.pipeline.chunkers.base import sentence_units
from indx_assets.pipeline.chunkers.markdown import MarkdownProvider
from indx_assets.pipeline.chunking.elements import ElementMetadata, NarrativeText
from indx_assets.pipeline.chunking.measure import CharMeasure
from indx_assets.pipeline.chunking.options import build_options
from indx_assets.pipeline.chunking.paragraphs import line_runs
from indx_assets.pipeline.chunking.sentences import sentence_spans
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
    units = sentence_units([NarrativeText(text, metadata=ElementMetadata())], opts)
    return [u.text for u in units.elements]


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
