"""`indx verify [PATH ...] [--json]`: the word measure of freshly cut files and of what an ingest
stored, and its verdict in the exit code; `indx ingest` names the documents below it."""

import json
from pathlib import Path

import pytest
from chunker_dists import install
from typer.testing import CliRunner

import indx_assets.app.cli.ingest  # noqa: F401  (registers the commands on the app)
import indx_assets.app.cli.verify  # noqa: F401
from indx_assets.app.cli import app

NOTES = ("The harbour pilot boards every inbound ship at the fairway buoy before dawn.\n\n"
         "Deep-draught ships cross the bar at high water only, and never in a southerly gale.\n")
GUIDE = "# Pilotage\n\nThe pilot cutter waits in the lee of the breakwater.\n\n## Signals\n\n- flag H: pilot on board\n"


def invoke(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "pilot.txt").write_text(NOTES)
    (root / "guide.md").write_text(GUIDE)
    return root


def test_faithful_chunks_pass_with_the_json_the_issue_asks_for(corpus: Path) -> None:
    result = invoke("verify", str(corpus), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [d["source_id"] for d in report["documents"]] == ["corpus/guide.md", "corpus/notes/pilot.txt"]
    for document in report["documents"]:
        (page,) = document["pages"]
        assert {"page", "words", "foreign", "lost", "duplicated", "examples"} <= set(page)
        assert page["words"] > 10 and (page["foreign"], page["lost"], page["duplicated"]) == (0, 0, 0)
    assert report["totals"]["documents"] == 2 and report["totals"]["documents_below"] == 0
    assert report["totals"]["words"] == len(NOTES.split()) + sum(d["words"] for d in report["documents"][:1])


@pytest.mark.parametrize(("body", "kind", "word"), [("drops_a_word", "lost", "every"),
                                                    ("glues_two_words", "foreign", "harbourpilot")])
def test_a_broken_third_party_chunker_is_caught_and_named(corpus: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          body: str, kind: str, word: str) -> None:
    install(tmp_path / "site", monkeypatch, distribution="sloppy-chunkers", chunkers={"sloppy": body})
    result = invoke("verify", str(corpus), "--json")
    assert result.exit_code == 1, result.output
    documents = {d["source_id"]: d for d in json.loads(result.stdout)["documents"]}
    assert documents["corpus/guide.md"]["passes"]  # the markdown chunker cut that one
    (page,) = documents["corpus/notes/pilot.txt"]["pages"]
    assert page[kind] == 1 and not page["passes"]
    (example,) = [e for e in page["examples"] if e["kind"] == kind]
    assert example["word"] == word
    # a foreign word names the chunk that holds it; a lost one, where it stands on the page
    assert example["locator"] == ("page:1/chunk:0" if kind == "foreign" else "page:1:char:25-30")
    # the table a person reads says the same
    table = invoke("verify", str(corpus))
    assert table.exit_code == 1 and f"{kind} {word}" in " ".join(table.stdout.split())


@pytest.mark.slow
def test_ingest_names_a_document_below_the_thresholds_and_verify_checks_what_it_stored(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"INDX_HOME": str(tmp_path / "home")}
    ingest = invoke("ingest", str(corpus), env=env)
    assert ingest.exit_code == 0, ingest.output
    assert "below the word-fidelity thresholds" not in ingest.output
    stored = invoke("verify", "--json", env=env)
    assert stored.exit_code == 0, stored.output
    assert json.loads(stored.stdout)["totals"]["documents"] == 2

    # a chunker that drops a word is installed: the re-cut chunk map is below the thresholds
    install(tmp_path / "site", monkeypatch, distribution="sloppy-chunkers", chunkers={"sloppy": "drops_a_word"})
    ingest = invoke("ingest", "--json", env=env)
    assert ingest.exit_code == 0, ingest.output
    below = json.loads(ingest.stdout)["below_fidelity"]
    assert list(below) == ["corpus/notes/pilot.txt"] and below["corpus/notes/pilot.txt"]["lost"] == 1
    assert below["corpus/notes/pilot.txt"]["examples"][0]["word"] == "every"
    stored = invoke("verify", "--json", env=env)
    assert stored.exit_code == 1
    documents = {d["source_id"]: d for d in json.loads(stored.stdout)["documents"]}
    assert documents["corpus/notes/pilot.txt"]["lost"] == 1 and documents["corpus/guide.md"]["passes"]


def test_verify_of_what_is_stored_measures_a_long_page_in_stretches_as_ingest_did(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored pages' document record says where each page starts in its chunks' offsets
    (`read_and_chunk.page_origins`), so `indx verify` of what an ingest stored measures a long
    page whose chunks do not hold exactly its words a stretch at a time, as the chunk stage did,
    with the same verdict."""
    from stored_sources import NOTES_CHAIN, notes_with_an_image, stored_text

    from indx_assets.app.analytics import stored_fidelity
    from indx_assets.pipeline import fidelity
    from indx_assets.pipeline.chain import CHAIN_ENV, load_chain
    from indx_assets.wiring.assets import stages

    made: list[int] = []

    def counted(*args: object):  # type: ignore[no-untyped-def]
        made.append(0)
        for stretch in cut_into(*args):
            made[-1] += 1
            yield stretch

    cut_into = fidelity._stretches
    monkeypatch.setattr(fidelity, "_stretches", counted)
    monkeypatch.setattr(fidelity, "STRETCH_CHARS", 200)
    monkeypatch.setenv(CHAIN_ENV, NOTES_CHAIN)
    page = notes_with_an_image()
    source, storage = stored_text(tmp_path, "pilot.md", page)
    cut = stages.cut_chunks(source, storage, load_chain())
    at_ingest = cut.metadata["fidelity"]
    assert made and max(made) > 1, "the chunk stage measured the page in stretches"
    made.clear()
    [stored] = stored_fidelity(storage.root)
    assert made and max(made) > 1, "verify measured the stored page in stretches"
    assert stored.passes and at_ingest["passes"] and stored.totals()["words"] == at_ingest["words"] > 100
