"""Declarative automation on a real instance: the conditions' requests, and the runs they cause.

`evaluate_automation_conditions` is Dagster's own evaluator (what the daemon runs each tick);
the requested partitions are then executed in-process by `app.daemon_tick`.
"""

import json
import os
import uuid
from dataclasses import replace
from pathlib import Path

import dagster as dg
import pytest
from chunker_dists import install

from indx_assets.app.daemon_tick import AutomationState, evaluate, run_requested, tick
from indx_assets.wiring.assets.provenance import latest_records
from indx_assets.wiring.assets.status import code_versions, corpus_status
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
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


def latest_ids(instance: dg.DagsterInstance, asset: str, partitions: set[str]) -> dict[str, int]:
    """The event id of each partition's latest materialization of `asset`."""
    return {pk: r.storage_id for pk, r in latest_records(instance, dg.AssetKey(asset), partitions).items()}


def test_a_chain_change_rechunks_every_document_and_reembeds_only_changed_ones_in_the_same_run(
    instance, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One request carries a chain change to the table: every chunk map re-cut, and in the same
    run only the documents whose chunks came out different re-embedded and re-written (a run that
    only re-embeds, after the re-cut, cost a daemon a run per re-cut run)."""
    state = AutomationState()
    settle(instance, settings, state)
    sources = set(instance.get_dynamic_partitions("sources"))
    changed = "corpus/notes/tea-harvest.txt"
    before = {asset: latest_ids(instance, asset, sources) for asset in ("chunk_embeddings", "chunks_table")}
    rows_before = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    install(tmp_path / "site", monkeypatch, distribution="plain-chunkers", chunkers={"plain": "plain_text_only"})

    requested = evaluate(instance, settings, state)
    assert requested == {"source_documents": set(), "page_outputs": set(), "chunk_map": sources,
                         "chunk_embeddings": sources, "chunks_table": sources}
    runs = run_requested(instance, settings, requested)
    assert len(runs) == 1 and runs[0].success
    assert evaluate(instance, settings, state) == {asset: set() for asset in ASSETS}, "no run that only re-embeds"

    # only the plain-text source's chunks changed: only it has new embeddings and rows
    for asset, ids in before.items():
        after = latest_ids(instance, asset, sources)
        assert {pk for pk in sources if after[pk] != ids[pk]} == {changed}, asset
    status = corpus_status(instance, code_versions(build_definitions(settings)))
    assert all(s.fresh == len(sources) for s in status.assets.values()), status
    rows = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    assert {r["text"].startswith("plain: ") for r in rows if r["source_id"] == changed} == {True}
    assert [r for r in rows if r["source_id"] != changed] == [r for r in rows_before if r["source_id"] != changed]
    assert len({r["id"] for r in rows}) == len(rows)


def test_an_edited_file_is_reread_then_reembedded_and_nothing_else_is_touched(instance, settings) -> None:
    state = AutomationState()
    settle(instance, settings, state)
    edited = Path(settings.corpus_roots[0]) / "notes" / "tea-harvest.txt"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nOolong is bruised, then fired.\n", encoding="utf-8")
    one = {"corpus/notes/tea-harvest.txt"}

    first = tick(instance, settings, state)
    assert first.sensor.changed == ["corpus/notes/tea-harvest.txt"] and first.sensor.added == []
    assert first.requested == {asset: one for asset in ASSETS}, "re-read, re-cut and re-embedded in one run"
    assert len(first.runs) == 1
    assert evaluate(instance, settings, state) == {asset: set() for asset in ASSETS}
    rows = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    assert any("Oolong is bruised" in r["text"] for r in rows)


def loaded_then_chain_changed(instance: dg.DagsterInstance, corpus: Path, home: Path) -> tuple[Settings, dg.Definitions]:
    """`corpus` loaded by automation into `home`, then the settings and definitions of a chain
    change that re-cuts its Markdown documents."""
    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                        corpus_roots=(str(corpus),))
    settle(instance, settings, AutomationState())
    changed = replace(settings, chain_config=json.dumps({"options": {"markdown": {"max_characters": 300}}}))
    return changed, build_definitions(changed)


def test_the_daemons_sensor_runs_a_chain_changes_scattered_requests_as_one_span(instance, tmp_path: Path) -> None:
    """The sensor `dagster-daemon` evaluates (`ingest_automation`, through `evaluate_tick` as the
    code server calls it): after a chain change re-embeds every other document, Dagster's own
    backfill would make a run per document; the sensor asks for one run over the span, whose
    stages skip the fresh documents (the text documents' embeddings and rows stay), and the
    table ends right."""
    from indx_assets.app.runner import materialize_partitions
    from indx_assets.wiring.assets.partitions import RANGE_END, RANGE_START

    corpus = tmp_path / "scattered"
    corpus.mkdir()
    for i in range(12):  # Markdown and text in turn: the chain change below touches only the Markdown
        body = " ".join(f"Sentence {j} of document {i} says something about harbours and tides." for j in range(12))
        if i % 2:
            (corpus / f"doc-{i:02d}.md").write_text(f"# Document {i}\n\n## Part one\n\n{body}\n\n## Part two\n\n{body}\n")
        else:
            (corpus / f"doc-{i:02d}.txt").write_text(body + "\n")
    changed, defs = loaded_then_chain_changed(instance, corpus, tmp_path / "scattered-home")
    sensor = defs.get_sensor_def("ingest_automation")
    order = instance.get_dynamic_partitions("sources")
    markdown = {pk for pk in order if pk.endswith(".md")}
    embedded = latest_ids(instance, "chunk_embeddings", set(order))

    cursor, asked = None, []
    for _ in range(4):
        context = dg.build_sensor_context(instance=instance, repository_def=defs.get_repository_def(), cursor=cursor)
        result = sensor.evaluate_tick(context)
        cursor = result.cursor
        if not result.run_requests:
            break
        for request in result.run_requests:
            assert request.asset_graph_subset is None, "a backfill: its runs would split at every gap"
            selection = sorted(k.to_user_string() for k in request.asset_selection)
            span = order[order.index(request.tags[RANGE_START]):order.index(request.tags[RANGE_END]) + 1]
            asked.append((selection, span))
            assert all(r.success for r in materialize_partitions(instance, changed, span, selection=selection))
    else:
        raise AssertionError(f"the sensor did not settle: {asked}")

    # every chunk map re-cut and the six changed documents re-embedded in one run, not seven
    assert asked == [(["chunk_embeddings", "chunk_map", "chunks_table"], order)], asked
    after = latest_ids(instance, "chunk_embeddings", set(order))
    assert {pk for pk in order if after[pk] != embedded[pk]} == markdown
    status = corpus_status(instance, code_versions(defs))
    assert all(s.fresh == len(order) for s in status.assets.values()), status
    rows = build_resources(changed)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    assert len({r["id"] for r in rows}) == len(rows) and {r["source_id"] for r in rows} == set(order)


def test_the_daemons_sensor_waits_while_runs_it_asked_for_are_queued(instance, tmp_path: Path) -> None:
    """While a run the sensor asked for is still queued, a tick evaluates nothing and keeps its
    cursor; once the queue has emptied, the next tick asks for what changed meanwhile."""
    corpus = tmp_path / "queued"
    corpus.mkdir()
    for i in range(2):
        (corpus / f"doc-{i}.md").write_text(f"# Document {i}\n\n" + "Harbours and tides. " * 40 + "\n")
    _, defs = loaded_then_chain_changed(instance, corpus, tmp_path / "queued-home")
    sensor = defs.get_sensor_def("ingest_automation")
    # a queued run as the daemon's queue holds it: Dagster requires the code location it came from
    from dagster._core.remote_origin import GrpcServerCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin

    origin = RemoteJobOrigin(RemoteRepositoryOrigin(GrpcServerCodeLocationOrigin("localhost", 4266, "indx"),
                                                    "__repository__"), "__ASSET_JOB")
    queued = instance.add_run(dg.DagsterRun(job_name="__ASSET_JOB", run_id=str(uuid.uuid4()), remote_job_origin=origin,
                                            status=dg.DagsterRunStatus.QUEUED,
                                            tags=dg.DagsterRun.tags_for_sensor(sensor)))

    def evaluate(cursor: str | None):  # noqa: ANN202
        return sensor.evaluate_tick(dg.build_sensor_context(instance=instance, repository_def=defs.get_repository_def(),
                                                            cursor=cursor))

    first = evaluate(None)
    waiting = evaluate("the cursor as it was")
    assert not first.run_requests and "1 runs it asked for are still queued" in (first.skip_message or "")
    assert not waiting.run_requests and waiting.cursor == "the cursor as it was"

    instance.report_run_canceled(queued)
    asked = evaluate(None)
    assert [sorted(k.to_user_string() for k in r.asset_selection) for r in asked.run_requests] == [
        ["chunk_embeddings", "chunk_map", "chunks_table"]]


def _local_cluster_environment(tmp_path: Path) -> dict[str, str]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("local_cluster", ROOT / "deploy" / "local-cluster" / "cluster.py")
    cluster = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(cluster)  # type: ignore[union-attr]
    return cluster.process_environment(cluster.environment(tmp_path / "topology", {"redis": {"port": 6379},
                                                                                  "postgres": {"port": 5432}}))


def _ui_environment(tmp_path: Path) -> dict[str, str]:
    from indx_assets.app.cli.ui import dagster_dev_environment

    home = tmp_path / "ui-home"
    return dagster_dev_environment(Settings(home=home, storage_uri=str(home / "assets"),
                                            lancedb_uri=str(home / "lancedb"), corpus_roots=()), os.environ)


@pytest.mark.parametrize("daemon_env", [_local_cluster_environment, _ui_environment], ids=["local cluster", "indx ui"])
def test_a_run_in_flight_is_not_asked_for_again_when_its_chunk_maps_change(
        instance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, daemon_env) -> None:
    """A daemon evaluates the automation while the runs it launched are in flight. After a chain
    change, a run re-cuts and then re-embeds its documents; once its chunk maps are written, the
    Markdown documents' embeddings are stale until its next stage ends. They are that run's to
    re-embed: a tick in between must not ask for them again (on the local cluster such a run
    followed most re-cut runs, and found everything fresh: Dagster's `in_progress()` did not see
    the partitions of a run announced by range). The in-flight run is created as the daemon
    creates a launched run, in the daemon's environment, and left unstarted; the run that writes
    the chunk maps stands for its first stage."""
    from indx_assets.app.runner import PLANNED_EVENTS_AS_SUBSETS, materialize_partitions
    from indx_assets.wiring.assets.partitions import RANGE_END, RANGE_START

    corpus = tmp_path / "inflight"
    corpus.mkdir()
    for i in range(6):  # Markdown and text in turn: the chain change below touches only the Markdown
        body = " ".join(f"Sentence {j} of document {i} says something about harbours and tides." for j in range(12))
        if i % 2:
            (corpus / f"doc-{i:02d}.md").write_text(f"# Document {i}\n\n## Part one\n\n{body}\n\n## Part two\n\n{body}\n")
        else:
            (corpus / f"doc-{i:02d}.txt").write_text(body + "\n")
    home = tmp_path / "inflight-home"
    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"),
                        corpus_roots=(str(corpus),))
    state = AutomationState()
    settle(instance, settings, state)
    changed = replace(settings, chain_config=json.dumps({"options": {"markdown": {"max_characters": 300}}}))
    defs = build_definitions(changed)
    order = instance.get_dynamic_partitions("sources")

    requested = evaluate(instance, changed, state, defs)
    selection = {dg.AssetKey(a) for a, keys in requested.items() if keys}
    assert selection == {dg.AssetKey(a) for a in ("chunk_map", "chunk_embeddings", "chunks_table")}
    # the daemon's process starts from one that ran in-process runs (a bench's, a test's, a shell's)
    assert os.environ[PLANNED_EVENTS_AS_SUBSETS] == "true", "set by the in-process runs above"
    env = daemon_env(tmp_path)
    for name in set(os.environ) - set(env):
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    job = defs.resolve_implicit_global_asset_job_def().get_subset(asset_selection=selection)
    in_flight = instance.create_run_for_job(job, asset_selection=selection, status=dg.DagsterRunStatus.NOT_STARTED,
                                            tags={RANGE_START: order[0], RANGE_END: order[-1]})
    assert evaluate(instance, changed, state, defs) == {asset: set() for asset in ASSETS}

    assert all(r.success for r in materialize_partitions(instance, changed, order, selection=["chunk_map"]))
    assert evaluate(instance, changed, state, defs) == {asset: set() for asset in ASSETS}, \
        f"asked again for what run {in_flight.run_id[:8]} is about to re-embed"
