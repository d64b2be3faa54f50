"""The Python API (`indx_assets.ingest`, `search`, `chunk`), used as a notebook uses it: a real
ingest into a real data directory, then searches and chunks of what was ingested."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixtures.small_corpus import FACTS, write_small_corpus

import indx_assets
from indx_assets.app.api import Hit, IngestSummary, NoDataDirectory
from indx_assets.pipeline.roots import RootError

INDX = str(Path(sys.executable).parent / "indx")
#: What `import indx_assets` must not load: the model's runtime and the orchestrator (seconds, and GBs).
HEAVY = ("torch", "sentence_transformers", "dagster", "lancedb")


def _env(**extra: str) -> dict[str, str]:
    """A user's environment: no INDX_* setting of the test run leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INDX_", "DAGSTER_"))}
    return {**env, **extra}


def test_import_loads_neither_torch_nor_dagster() -> None:
    script = textwrap.dedent(f"""
        import sys
        import indx_assets
        heavy = {HEAVY!r}
        loaded = lambda: sorted({{m.split('.')[0] for m in sys.modules}} & set(heavy))
        print(loaded())
        names = [indx_assets.ingest, indx_assets.search, indx_assets.chunk, indx_assets.Hit, indx_assets.IngestSummary]
        print(all(map(callable, names)), loaded())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "True []"]


def test_a_notebook_and_the_cli_share_one_data_directory(tmp_path: Path) -> None:
    """A notebook in a folder ingests, searches and chunks with no settings; `indx` run in the
    same folder finds what it ingested, and cuts a file into the same chunks."""
    corpus = write_small_corpus(tmp_path)
    notebook = tmp_path / "notebook"
    notebook.mkdir()
    fact = FACTS["bar"]
    script = textwrap.dedent(f"""
        import json, indx_assets
        summary = indx_assets.ingest({str(corpus)!r})
        hits = indx_assets.search({fact.query!r}, k=3)
        document = indx_assets.chunk({str(corpus / fact.path)!r}, source_id={"corpus/" + fact.path!r})
        print(json.dumps({{"summary": summary.to_json(), "hits": [[h.id, h.source_id, h.content] for h in hits],
                           "chunks": [c.id for c in document.chunks]}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=notebook, capture_output=True, text=True, timeout=600,
                          env=_env())
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert seen["summary"]["documents_by_status"] == {"ok": 4} and seen["summary"]["home"] == str(notebook / ".indx")
    top_id, top_source, top_content = seen["hits"][0]
    assert top_source == "corpus/" + fact.path and fact.sentence in top_content
    assert top_id in seen["chunks"]

    cli = subprocess.run([INDX, "search", fact.query, "-k", "3", "--json"], cwd=notebook, capture_output=True,
                         text=True, timeout=600, env=_env())
    assert cli.returncode == 0, cli.stderr[-3000:]
    assert [h["id"] for h in json.loads(cli.stdout)] == [h[0] for h in seen["hits"]]
    cut = subprocess.run([INDX, "chunk", str(corpus / fact.path), "--source-id", "corpus/" + fact.path, "--json"],
                         cwd=notebook, capture_output=True, text=True, timeout=600, env=_env())
    assert [c["id"] for c in json.loads(cut.stdout)["chunks"]] == seen["chunks"]


@pytest.mark.parametrize("name", sorted(FACTS))
def test_search_finds_each_fact_in_its_chunk(small_corpus_home: tuple[Path, Path], name: str) -> None:
    _, home = small_corpus_home
    fact = FACTS[name]
    hits = indx_assets.search(fact.query, k=3, home=home)
    assert all(isinstance(h, Hit) for h in hits)
    top = hits[0]
    assert (top.source_id, top.page) == ("corpus/" + fact.path, fact.page)
    assert fact.sentence in " ".join(top.content.split())
    assert top.score > 0 and top.parent_ref and top.locator and top.chunk_type == "content"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_hit_is_the_chunk_that_was_ingested(small_corpus_home: tuple[Path, Path]) -> None:
    """Its id, locator, page, box and text are those `chunk()` gives the same file."""
    corpus, home = small_corpus_home
    fact = FACTS["fog"]
    top = indx_assets.search(fact.query, k=1, home=home)[0]
    document = indx_assets.chunk(corpus / fact.path, source_id="corpus/" + fact.path)
    assert isinstance(document, indx_assets.Document)
    same = next(c for c in document.chunks if c.id == top.id)
    assert (same.locator, same.page, same.content, same.chunker) == (top.locator, top.page, top.content, top.chunker)
    assert top.bbox is not None and top.bbox == pytest.approx(same.bbox)
    # page 2's chunk runs from its heading (baseline 780 pt above the foot of an 842 pt page)
    # down to the sentence (baseline 500 pt), both drawn from x = 56 pt of 595
    x0, y0, x1, y1 = top.bbox
    assert x0 == pytest.approx(56 / 595, abs=0.005) and x0 < x1 <= 1
    assert 0 < y0 < (842 - 780) / 842 and (842 - 500) / 842 < y1 < (842 - 480) / 842


def test_search_filters(small_corpus_home: tuple[Path, Path]) -> None:
    _, home = small_corpus_home
    recipes = indx_assets.search("harbour rules for ships", k=5, source_prefix="corpus/recipes/", home=home)
    assert [h.source_id for h in recipes] == ["corpus/recipes/chowder.md"]
    on_page_2 = indx_assets.search("notice to mariners", k=5, page=2, home=home)
    assert on_page_2 and {(h.source_id, h.page) for h in on_page_2} == {("corpus/notices.pdf", 2)}
    assert indx_assets.search("notice to mariners", k=5, chunk_type="table", home=home) == []
    words = indx_assets.search("paraffin", mode="fts", k=5, home=home)
    assert [h.source_id for h in words] == ["corpus/lighthouse.txt"]


def test_search_mistakes_say_what_is_wrong(small_corpus_home: tuple[Path, Path], tmp_path: Path) -> None:
    _, home = small_corpus_home
    with pytest.raises(ValueError, match="query is empty"):
        indx_assets.search("  ", home=home)
    with pytest.raises(ValueError, match="mode must be one of hybrid, vector, fts"):
        indx_assets.search("fog", mode="semantic", home=home)  # type: ignore[arg-type]
    nowhere = tmp_path / "nothing-here"
    with pytest.raises(NoDataDirectory, match="nothing has been ingested there"):
        indx_assets.search("fog", home=nowhere)
    assert not nowhere.exists()  # a search never creates a data directory


def test_ingest_of_a_missing_path_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "indx"
    with pytest.raises(RootError, match="no such file or folder"):
        indx_assets.ingest(tmp_path / "no-such-folder", home=home)
    assert not (home / "corpus.json").exists() and not (home / "lancedb").exists()


def test_ingest_again_redoes_nothing_and_reports_a_file_it_cannot_read(tmp_path: Path) -> None:
    corpus = write_small_corpus(tmp_path)
    home = tmp_path / "indx"
    first = indx_assets.ingest(corpus, home=home)
    assert isinstance(first, IngestSummary) and first.added == 4 and first.complete
    (corpus / "locked.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 40)
    again = indx_assets.ingest(home=home)  # the recorded root, as `indx ingest` with no paths
    assert again.added == 1 and again.documents == 5
    assert again.documents_by_status == {"ok": 4, "failed": 1} and "corpus/locked.pdf" in again.problems
    assert again.to_json()["documents_by_status"] == again.documents_by_status


def test_chunk_mistakes(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        indx_assets.chunk(tmp_path / "missing.md")
    with pytest.raises(FileNotFoundError, match="it is a folder"):
        indx_assets.chunk(tmp_path)
