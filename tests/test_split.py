"""`split_document` and `indx split`: the OpenSearch document-split tree, rich texts, sentences, errors."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from metered import MeteredCounter
from typer.testing import CliRunner

from indx_assets.pipeline.chunking.split import SplitError, sentence_spans, split_document
from indx_assets.pipeline.tokenizer import minilm_tokenizer

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "001_5ec20ec03b38a566.txt"


@pytest.fixture(scope="module")
def service_example() -> str:
    """The product description the service's own curl example sends (JSON-escaped in the page)."""
    if not SEED.is_file():
        pytest.skip("../shared/seeds is not present")
    match = re.search(r'\\"content\\":\\"(.*?)\\",\s*\\"content_encoding', SEED.read_text(encoding="utf-8"), re.S)
    assert match, "the curl example's content was not found in the seed"
    return match.group(1).replace("\\\\n", "\n")


def assert_consistent_tree(result: dict[str, Any], text: str) -> None:
    """Ids unique, every parent exists, leaves = chunks in order, and they cover `text` in order."""
    nodes = result["nodes"]
    ids = [n["id"] for n in nodes]
    assert len(ids) == len(set(ids))
    by_id = {n["id"]: n for n in nodes}
    roots = [n for n in nodes if n["type"] == "root"]
    assert len(roots) == 1 and roots[0]["parent_id"] == roots[0]["id"]
    for n in nodes:
        assert n["parent_id"] in by_id
        assert n["type"] in {"root", "paragraph", "newline", "sentence", "subsentence"}
    parents = {n["parent_id"] for n in nodes if n["type"] != "root"}
    leaves = [n["id"] for n in nodes if n["id"] not in parents]
    assert leaves == [c["meta"]["id"] for c in result["chunks"]]
    for c in result["chunks"]:
        assert by_id[c["meta"]["id"]]["parent_id"] == c["meta"]["parent_id"]
    # Leaves cover the text in order: each is the exact slice at its offsets, nothing but
    # whitespace lies between two neighbours, and nothing is left out at either end.
    pos = 0
    for c in result["chunks"]:
        start, end = c["meta"]["start"], c["meta"]["end"]
        assert c["content"] and text[start:end] == c["content"]
        assert text[pos:start].strip() == ""
        pos = end
    assert text[pos:].strip() == ""


def test_service_example_leaves_fit_and_tree_is_consistent(service_example: str) -> None:
    result = split_document(service_example, max_chunk_size=300)
    assert_consistent_tree(result, service_example)
    counter = minilm_tokenizer()
    sizes = [counter.count(c["content"]) for c in result["chunks"]]
    assert max(sizes) <= 300
    assert [c["meta"]["size"] for c in result["chunks"]] == sizes
    # Neighbouring paragraphs are merged while they fit: fewer chunks than paragraphs, and at most
    # twice the minimum the total size allows (two neighbours never fit together).
    assert len(result["chunks"]) < service_example.count("\n\n") + 1
    assert len(result["chunks"]) <= 2 * (sum(sizes) // 300 + 1)
    assert result["rich_texts"] == [] and result["sentences"] == []


def test_greedy_merge_leaves_no_two_sibling_leaves_that_would_fit_together(service_example: str) -> None:
    result = split_document(service_example, max_chunk_size=60, compute_type="character")
    assert_consistent_tree(result, service_example)
    chunks = result["chunks"]
    assert max(len(c["content"]) for c in chunks) <= 60
    for a, b in zip(chunks, chunks[1:], strict=False):
        if a["meta"]["parent_id"] == b["meta"]["parent_id"]:
            assert len(service_example[a["meta"]["start"] : b["meta"]["end"]]) > 60
    # At 60 characters the long Japanese sentences must be cut at 、 (sub-sentences).
    types = {n["type"] for n in result["nodes"]}
    assert {"paragraph", "newline", "sentence", "subsentence"} <= types
    assert any(c["content"].endswith("、") for c in chunks)


@pytest.mark.parametrize("text", ["\n".join(f"line {i}" for i in range(20_000)), " ".join(f"w{i}" for i in range(50_000))])
def test_merging_measures_each_group_a_few_times_not_once_per_unit_added(text: str) -> None:
    # 20,000 short lines or 50,000 words: groups of many small units. Measuring the merged
    # text once per unit added cost 42 to 50 times the text (a minute for 1 MB of words)
    metered = MeteredCounter()
    result = split_document(text, content_type="text", max_chunk_size=300, tokenizer=metered)
    assert " ".join(c["content"] for c in result["chunks"]).split() == text.split()
    assert metered.chars < 20 * len(text), metered.chars / len(text)


def test_chinese_punctuation_splits_sentences_then_subsentences() -> None:
    text = "今天天气很好。我们去公园散步吧！你觉得怎么样？好的，我们走吧；带上水。"
    result = split_document(text, max_chunk_size=10, compute_type="character")
    assert [c["content"] for c in result["chunks"]] == [
        "今天天气很好。",
        "我们去公园散步吧！",
        "你觉得怎么样？",
        "好的，我们走吧；",
        "带上水。",
    ]
    kinds = {n["id"]: n["type"] for n in result["nodes"]}
    assert [kinds[c["meta"]["id"]] for c in result["chunks"]] == ["sentence"] * 3 + ["subsentence"] * 2
    # The last sentence (12 characters) is the intermediate node holding the two sub-sentences.
    parent = result["chunks"][-1]["meta"]["parent_id"]
    assert kinds[parent] == "sentence" and result["chunks"][-2]["meta"]["parent_id"] == parent
    assert_consistent_tree(result, text)


def test_ascii_sentence_ends_need_whitespace_and_closing_quotes_stay() -> None:
    text = 'Pi is 3.14 here. See example.com now! He said "stop." Then left'
    result = split_document(text, max_chunk_size=20, compute_type="character")
    assert [c["content"] for c in result["chunks"]] == ["Pi is 3.14 here.", "See example.com now!", 'He said "stop."', "Then left"]


def test_ascii_bang_and_question_end_a_sentence_before_whitespace_or_cjk_text_only() -> None:
    # a Markdown image's "![alt](...)" is no sentence end; "!" in Chinese text without a space is
    text = "See ![flow](http://x/y.png) here. Really?! Yes. 好!我们走吧?你呢。"
    assert [text[s:e] for s, e in sentence_spans(text, (0, len(text)))] == [
        "See ![flow](http://x/y.png) here.", "Really?!", "Yes.", "好!", "我们走吧?", "你呢。"]


def test_a_reference_marker_stays_with_the_sentence_it_follows() -> None:
    text = 'Built in 1862.[7] Sold in 1863.[12, 13] She said "no."[a] Sunk later'
    result = split_document(text, max_chunk_size=22, compute_type="character")
    assert [c["content"] for c in result["chunks"]] == ["Built in 1862.[7]", "Sold in 1863.[12, 13]", 'She said "no."[a]', "Sunk later"]


def test_text_without_any_break_is_cut_by_words_then_characters() -> None:
    text = "word " * 30 + "x" * 95
    result = split_document(text, max_chunk_size=40, compute_type="character")
    assert_consistent_tree(result, text)
    contents = [c["content"] for c in result["chunks"]]
    assert all(len(c) <= 40 for c in contents)
    assert all(not c.startswith(("ord", "rd")) for c in contents)  # words stay whole
    assert "".join(contents).replace(" ", "") == text.replace(" ", "")


MARKDOWN = """# Install

Download the package ![diagram](https://example.org/arch.png "Architecture") first.

| name | size |
|------|------|
| alpha | 1 |
| beta | 2 |
| gamma | 3 |

```python
import indx
print(indx)
```

Done. It works.
"""


def test_markdown_images_tables_code_become_rich_texts_with_placeholders() -> None:
    result = split_document(MARKDOWN, content_type="markdown", max_chunk_size=200, compute_type="character")
    rich = {r["meta"]["id"]: r for r in result["rich_texts"]}
    assert list(rich) == ["image_0-0", "table_0-0", "code_0-0"]
    assert rich["image_0-0"]["content"] == "https://example.org/arch.png"
    assert rich["table_0-0"]["content"] == MARKDOWN[MARKDOWN.index("| name") : MARKDOWN.index("| gamma | 3 |") + 13]
    assert rich["code_0-0"]["content"] == "import indx\nprint(indx)"
    joined = "\n".join(c["content"] for c in result["chunks"])
    assert "[image_0]" in joined and "<table>table_0</table>" in joined and "<code>code_0</code>" in joined
    assert "alpha" not in joined and "import indx" not in joined and "arch.png" not in joined
    chunk_by_id = {c["meta"]["id"]: c for c in result["chunks"]}
    for r in result["rich_texts"]:
        placeholder = {"image": "[image_0]", "table": "<table>table_0</table>", "code": "<code>code_0</code>"}[r["meta"]["type"]]
        assert placeholder in chunk_by_id[r["meta"]["belonged_chunk_id"]]["content"]
    # Chunk offsets point into the Markdown source, spanning the lifted blocks.
    spans = [MARKDOWN[c["meta"]["start"] : c["meta"]["end"]] for c in result["chunks"]]
    assert "".join(spans).replace("\n", "").replace(" ", "") == MARKDOWN.replace("\n", "").replace(" ", "")


def test_markdown_table_over_the_limit_is_split_by_rows_with_the_header_repeated() -> None:
    result = split_document(MARKDOWN, content_type="markdown", max_chunk_size=45, compute_type="character")
    parts = [r for r in result["rich_texts"] if r["meta"]["type"] == "table"]
    header = "| name | size |\n|------|------|"  # 31 characters: one row more per part fits 45
    assert [(p["meta"]["id"], p["content"]) for p in parts] == [
        ("table_0-0", f"{header}\n| alpha | 1 |"),
        ("table_0-1", f"{header}\n| beta | 2 |"),
        ("table_0-2", f"{header}\n| gamma | 3 |"),
    ]
    assert all(p["meta"]["size"] <= 45 for p in parts)
    assert len({p["meta"]["belonged_chunk_id"] for p in parts}) == 1


def test_html_images_tables_and_code_are_lifted_from_visible_text() -> None:
    html = (
        "<html><head><title>t</title><script>var secret = 1;</script></head><body>"
        "<h1>Report</h1><p>Results below. <img src='chart.png' alt='chart'> Good.</p>"
        "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>"
        "<pre>x = 1\ny = 2</pre><p>End.</p></body></html>"
    )
    result = split_document(html, content_type="html", max_chunk_size=300, compute_type="character")
    assert [(r["meta"]["id"], r["content"]) for r in result["rich_texts"]] == [
        ("image_0-0", "chart.png"),
        ("table_0-0", "k | v\na | 1"),
        ("code_0-0", "x = 1\ny = 2"),
    ]
    text = result["chunks"][0]["content"]
    assert len(result["chunks"]) == 1
    assert text == "Report\n\nResults below. [image_0] Good.\n\n<table>table_0</table>\n\n<code>code_0</code>\n\nEnd."
    assert "secret" not in text


def test_need_sentence_links_every_sentence_to_the_chunk_that_holds_it(service_example: str) -> None:
    result = split_document(service_example, max_chunk_size=120, compute_type="character", need_sentence=True)
    chunks = {c["meta"]["id"]: c for c in result["chunks"]}
    sentences = result["sentences"]
    assert len(sentences) >= service_example.count("。")
    for s in sentences:
        assert s["meta"]["type"] == "sentence"
        chunk = chunks[s["meta"]["belonged_chunk_id"]]
        assert s["content"] in chunk["content"]
        assert service_example[s["meta"]["start"] : s["meta"]["end"]] == s["content"]
        assert "\n" not in s["content"]
    # In order, and together they are the chunks' text.
    starts = [s["meta"]["start"] for s in sentences]
    assert starts == sorted(starts)
    assert "".join(s["content"] for s in sentences) == "".join(c["content"] for c in result["chunks"]).replace("\n", "")
    assert len({s["meta"]["id"] for s in sentences}) == len(sentences)


def test_ids_are_deterministic_and_depend_on_the_input() -> None:
    a = split_document("One. Two.\n\nThree.", max_chunk_size=5, compute_type="character")
    b = split_document("One. Two.\n\nThree.", max_chunk_size=5, compute_type="character")
    c = split_document("One. Two.\n\nFour.", max_chunk_size=5, compute_type="character")
    assert a == b
    assert a["nodes"][0]["id"] != c["nodes"][0]["id"]


@pytest.mark.parametrize(
    ("content", "options", "names"),
    [
        ("", {}, "content is empty"),
        (" \n\t ", {}, "content is empty"),
        (b"\xff\xfeabc", {}, "not valid UTF-8"),
        ("text", {"max_chunk_size": 0}, "max_chunk_size"),
        ("text", {"max_chunk_size": -3}, "max_chunk_size"),
        ("text", {"content_type": "pdf"}, "content_type"),
        ("text", {"compute_type": "words"}, "compute_type"),
        ("<html><script>x()</script></html>", {"content_type": "html"}, "no visible text"),
        ("<div>" * 20_000 + "deep", {"content_type": "html"}, "nests block elements 20,000 deep"),
    ],
)
def test_bad_input_raises_a_split_error_naming_the_problem(content: str | bytes, options: dict[str, Any], names: str) -> None:
    with pytest.raises(SplitError) as info:
        split_document(content, **options)
    assert info.value.code == "InvalidParameter"
    assert names in info.value.message


def _cli(args: list[str], stdin: bytes | None = None) -> tuple[int, dict[str, Any]]:
    import indx_assets.app.cli.split  # noqa: F401 - registers the command on the app
    from indx_assets.app.cli import app

    run = CliRunner().invoke(app, ["split", *args], input=stdin)
    return run.exit_code, json.loads(run.stdout)


def test_cli_prints_the_tree_for_a_file_with_the_type_from_its_suffix(tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(MARKDOWN, encoding="utf-8")
    code, out = _cli([str(doc), "--compute-type", "character", "--max-chunk-size", "200", "--need-sentence"])
    assert code == 0
    assert out == split_document(MARKDOWN, content_type="markdown", max_chunk_size=200, compute_type="character", need_sentence=True)


@pytest.mark.parametrize(
    ("args", "stdin", "names"),
    [
        (["-"], b"", "empty"),
        (["-"], b"\xc3\x28 broken", "UTF-8"),
        (["-", "--max-chunk-size", "0"], b"hello", "max_chunk_size"),
        (["-", "--type", "docx"], b"hello", "content_type"),
        (["/nonexistent/file.txt"], None, "cannot read"),
    ],
)
def test_cli_reports_bad_input_as_a_json_error_and_fails(args: list[str], stdin: bytes | None, names: str) -> None:
    code, out = _cli(args, stdin)
    assert code != 0
    assert out["code"] == "InvalidParameter" and names in out["message"]
