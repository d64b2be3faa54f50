"""Status from the event log's tag index against status from every stored event read whole, and
the no-change ingest that builds no run, on real instances and data directories."""

from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa
from chunker_dists import install

from indx_assets.app.ingest import ingest
from indx_assets.app.runner import materialize_partitions, sync_partitions
from indx_assets.wiring.assets.freshness import SOURCE_CHANGED
from indx_assets.wiring.assets.status import CODE_VERSION, UPSTREAM_DATA, code_versions, corpus_status
from indx_assets.wiring.assets.ingest import ASSET_KEYS
from indx_assets.wiring.dagster_internals import CODE_VERSION_TAG, DATA_VERSION_TAG
from indx_assets.wiring.definitions import build_definitions, build_resources
from indx_assets.wiring.resources.storage import sha256_file
from indx_assets.wiring.settings import Settings

TEA = "corpus/notes/tea-harvest.txt"


def tag_rows(instance: dg.DagsterInstance) -> set[tuple]:
    with instance.event_log_storage.index_connection() as conn:  # type: ignore[attr-defined]
        return set(conn.execute(sa.text("SELECT event_id, key, value FROM asset_event_tags")))


def test_status_from_the_tag_index_agrees_with_every_event_read_whole_and_an_older_data_dir_is_indexed_once(
    instance, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = Path(settings.corpus_roots[0])
    sync = sync_partitions(instance, settings)
    assert all(r.success for r in materialize_partitions(instance, settings, sync.current))
    restored, edited = [pk for pk in sync.current if pk != TEA][:2]
    located = build_resources(settings)["corpus"]
    # a file edit re-stored (its pages now stale), another edited on disk only (its source changed),
    # a chain change with one document re-cut, and a new file never ingested
    for pk in (restored, edited):
        path = located.locate(pk)  # type: ignore[attr-defined]
        path.write_bytes(path.read_bytes() + b"\n")
    materialize_partitions(instance, settings, [restored], selection=["source_documents"])
    install(tmp_path / "site", monkeypatch, distribution="plain-chunkers", chunkers={"plain": "plain_text_only"})
    materialize_partitions(instance, settings, [TEA], selection=["chunk_map"])
    (corpus / "new.txt").write_text("A file added after the ingest.\n")
    current = sync_partitions(instance, settings).current
    hashes = {pk: sha256_file(located.locate(pk)) for pk in current}  # type: ignore[attr-defined]
    versions = code_versions(build_definitions(settings))

    indexed = tag_rows(instance)
    assert {key for _, key, _ in indexed} > {DATA_VERSION_TAG, CODE_VERSION_TAG}
    fast = corpus_status(instance, versions, hashes=hashes)
    # A data directory written before the code version was indexed: only Dagster's own tag rows
    with instance.event_log_storage.index_transaction() as conn:  # type: ignore[attr-defined]
        conn.execute(sa.text("DELETE FROM asset_event_tags WHERE key != :kept"), {"kept": DATA_VERSION_TAG})
    slow = corpus_status(instance, versions, hashes=hashes)
    # the latest record of every partition read whole once and indexed then (earlier ones are not read)
    latest = {sid for key in ASSET_KEYS for sid in instance.event_log_storage.get_latest_storage_id_by_partition(
        key, dg.DagsterEventType.ASSET_MATERIALIZATION, set(current)).values()}
    after = tag_rows(instance)
    assert after <= indexed and {event for event, key, _ in after if key == CODE_VERSION_TAG} == latest
    again = corpus_status(instance, versions, hashes=hashes)

    new = "corpus/new.txt"
    for status in (fast, slow, again):
        assert status.to_json() == fast.to_json() and status.order == fast.order
        for key, counts in status.assets.items():
            assert counts.missing == [new], key
            assert counts == fast.assets[key], key
        assets = {k.to_user_string(): s for k, s in status.assets.items()}
        assert assets["source_documents"].stale == {SOURCE_CHANGED: [edited]}
        assert assets["page_outputs"].stale == {UPSTREAM_DATA: [restored]}
        assert assets["chunk_map"].stale == {CODE_VERSION: [pk for pk in current if pk not in (TEA, new)]}
        assert assets["chunk_embeddings"].stale == {UPSTREAM_DATA: [TEA]}
        assert assets["chunks_table"].fresh == len(current) - 1


def test_an_ingest_with_nothing_changed_builds_no_run_and_an_edit_redoes_only_its_file(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(settings.dagster_home))  # `open_instance` sets it; restored after
    first = ingest(settings, [settings.corpus_roots[0]])
    assert first.complete and first.runs == 1
    again = ingest(settings)
    assert (again.runs, again.materializations) == (0, 0)
    assert (again.documents, again.chunks, again.vectors) == (first.documents, first.chunks, first.vectors)

    tea = Path(settings.corpus_roots[0]) / "notes" / "tea-harvest.txt"
    tea.write_text(tea.read_text() + "\nThe last pickers leave the terraces at dusk.\n")
    edited = ingest(settings)
    assert edited.runs == 1 and edited.materializations == 5  # the one source, through all five assets
    rows = build_resources(settings)["lancedb"].table().to_arrow().to_pylist()  # type: ignore[attr-defined]
    assert any("terraces at dusk" in r["text"] for r in rows if r["source_id"] == TEA)
