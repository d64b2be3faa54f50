"""Declarative automation on a real instance: the conditions' requests, and the runs they cause.

`evaluate_automation_conditions` is Dagster's own evaluator (what the daemon runs each tick);
the requested partitions are then executed in-process by `app.daemon_tick`.
"""

from pathlib import Path

import dagster as dg
import pytest
from chunker_dists import install

from indx_assets.app.daemon_tick import AutomationState, evaluate, run_requested, tick
from indx_assets.wiring.assets.status import code_versions, corpus_status
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.settings import Settings

ASSETS = ("source_documents", "page_outputs", "chunk_map", "chunk_embeddings", "chunks_table")


def chunk_ids(settings: Settings) -> list[str]:
    table = build_resources(settings)["lancedb"].table()  # type: ignore[attr-defined]
    return table.to_arrow().column("id").to_pylist()


def settle(instance: dg.DagsterInstance, settings: Settings, state: AutomationState, ticks: int = 4) -> list[dict]:
    """Tick until automation asks for nothing; the requests of every tick."""
    history = []
    for _ in range(ticks):
        result = tick(instance, settings, state)
        assert all(r.success for r in result.runs), result.runs
        history.append(result.requested)
        if not any(result.requested.values()):
            return history
    raise AssertionError(f"automation did not settle: {history}")


def test_the_initial_load_runs_by_itself_and_then_automation_asks_for_nothing(instance, settings) -> None:
    state = AutomationState()
    first = tick(instance, settings, state)
    sources = set(instance.get_dynamic_partitions("sources"))
    corpus = Path(settings.corpus_roots[0])
    assert sources == {f"corpus/{p.relative_to(corpus).as_posix()}" for p in corpus.rglob("*") if p.is_file()}
    assert first.requested == {asset: sources for asset in ASSETS}, "the first tick must load every source"
    assert len(first.runs) == 1 and first.runs[0].success
    status = corpus_status(instance, code_versions(build_definitions(settings)))
    assert all(s.fresh == len(sources) for s in status.assets.values())
    assert evaluate(instance, settings, state) == {asset: set() for asset in ASSETS}
    ids = chunk_ids(settings)
    assert ids and len(ids) == len(set(ids))


def test_a_chain_change_rechunks_every_document_then_reembeds_only_changed_ones(
    instance, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = AutomationState()
    settle(instance, settings, state)
    sources = set(instance.get_dynamic_partitions("sources"))
    install(tmp_path / "site", monkeypatch, distribution="plain-chunkers", chunkers={"plain": "plain_text_only"})

    requested = evaluate(instance, settings, state)
    assert requested == {"source_documents": set(), "page_outputs": set(), "chunk_map": sources,
                         "chunk_embeddings": set(), "chunks_table": set()}
    assert all(r.success for r in run_requested(instance, settings, requested))

    # only the plain-text source's chunks changed: only it is re-embedded and re-written
    requested = evaluate(instance, settings, state)
    assert requested == {"source_documents": set(), "page_outputs": set(), "chunk_map": set(),
                         "chunk_embeddings": {"corpus/notes/tea-harvest.txt"}, "chunks_table": {"corpus/notes/tea-harvest.txt"}}
    assert all(r.success for r in run_requested(instance, settings, requested))
    assert evaluate(instance, settings, state) == {asset: set() for asset in ASSETS}
    rows = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    assert {r["text"].startswith("plain: ") for r in rows if r["source_id"] == "corpus/notes/tea-harvest.txt"} == {True}
    assert len({r["id"] for r in rows}) == len(rows)


def test_an_edited_file_is_reread_then_reembedded_and_nothing_else_is_touched(instance, settings) -> None:
    state = AutomationState()
    settle(instance, settings, state)
    edited = Path(settings.corpus_roots[0]) / "notes" / "tea-harvest.txt"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nOolong is bruised, then fired.\n", encoding="utf-8")
    one = {"corpus/notes/tea-harvest.txt"}

    first = tick(instance, settings, state)
    assert first.sensor.changed == ["corpus/notes/tea-harvest.txt"] and first.sensor.added == []
    assert first.requested == {"source_documents": one, "page_outputs": one, "chunk_map": one,
                               "chunk_embeddings": set(), "chunks_table": set()}
    second = tick(instance, settings, state)
    assert second.requested == {"source_documents": set(), "page_outputs": set(), "chunk_map": set(),
                                "chunk_embeddings": one, "chunks_table": one}
    assert evaluate(instance, settings, state) == {asset: set() for asset in ASSETS}
    rows = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    assert any("Oolong is bruised" in r["text"] for r in rows)
