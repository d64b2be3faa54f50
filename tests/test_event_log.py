"""The instance's event log (`indx_assets.app.event_log`): Dagster's SQLite files, pooled and batched.

Events are built the way Dagster builds a step's materialization events and written through
both the pooled storage and Dagster's stock `SqliteEventLogStorage`; everything a reader of
the event log sees (Dagster's own queries, the UI's) must be the same.
"""

import logging
import multiprocessing
import os
import time
import uuid
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.events import (
    AssetMaterializationPlannedData,
    DagsterEvent,
    DagsterEventType,
    StepMaterializationData,
)
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    SqliteEventLogStorage,
)

from indx_assets.app.event_log import OPEN_RUN_SHARDS, PooledSqliteEventLogStorage
from indx_assets.app.runner import DEFAULT_DAGSTER_YAML, EVENT_LOG_BLOCK, open_instance
from indx_assets.wiring.settings import Settings

KEYS = (dg.AssetKey("page_outputs"), dg.AssetKey("chunk_map"))


def materialization(run_id: str, key: dg.AssetKey, partition: str, version: str) -> EventLogEntry:
    mat = dg.AssetMaterialization(
        asset_key=key, partition=partition, metadata={"chunks": 3},
        tags={"dagster/data_version": version, "dagster/code_version": "v1"},
    )
    event = DagsterEvent(
        event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value, job_name="ingest", step_key="ingest_documents",
        event_specific_data=StepMaterializationData(mat),
    )
    return EventLogEntry(error_info=None, level=20, user_message="", run_id=run_id, timestamp=time.time(),
                         dagster_event=event, job_name="ingest", step_key="ingest_documents")


def planned(run_id: str, key: dg.AssetKey, partition: str) -> EventLogEntry:
    event = DagsterEvent(
        event_type_value=DagsterEventType.ASSET_MATERIALIZATION_PLANNED.value, job_name="ingest",
        event_specific_data=AssetMaterializationPlannedData(key, partition=partition),
    )
    return EventLogEntry(error_info=None, level=20, user_message="", run_id=run_id, timestamp=time.time(),
                         dagster_event=event, job_name="ingest")


def run_batch(run_id: str, n: int = 6, version: str = "a") -> list[EventLogEntry]:
    return [materialization(run_id, key, f"doc-{i}", f"{version}{i}") for key in KEYS for i in range(n)]


def seen(storage: SqliteEventLogStorage, run_ids: list[str]) -> dict:
    """What readers of the event log see: per asset, each partition's latest data version, the
    asset's last materialized partition, and each run's materialization count."""
    view: dict = {}
    for key in KEYS:
        records = storage.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=1000).records
        latest = storage.get_latest_storage_id_by_partition(key, DagsterEventType.ASSET_MATERIALIZATION)
        by_id = {r.storage_id: r for r in records}
        view[key] = {
            "versions": {p: by_id[i].event_log_entry.tags["dagster/data_version"] for p, i in latest.items()},
            "last": storage.get_asset_records([key])[0].asset_entry.last_materialization.dagster_event.partition,  # type: ignore[union-attr]
            "partitions": storage.get_materialized_partitions(key),
            "last_run": storage.get_asset_records([key])[0].asset_entry.last_run_id,
        }
    view["runs"] = {r: len(storage.get_records_for_run(r, of_type=DagsterEventType.ASSET_MATERIALIZATION).records)
                    for r in run_ids}
    return view


def test_a_batch_reads_back_as_dagster_stores_it_event_by_event(tmp_path: Path) -> None:
    pooled, stock = PooledSqliteEventLogStorage(str(tmp_path / "pooled")), SqliteEventLogStorage(str(tmp_path / "stock"))
    runs = [str(uuid.uuid4()), str(uuid.uuid4())]
    # Run 2 announces two documents (as a run does before it starts), then redoes four.
    announced = [planned(runs[1], key, f"doc-{i}") for key in KEYS for i in range(2)]
    batches = [run_batch(runs[0], version="a"), announced + run_batch(runs[1], n=4, version="b")]
    for batch in batches:
        pooled.store_event_batch(batch)
        for event in batch:
            stock.store_event(event)
    expected = seen(stock, runs)
    assert expected[KEYS[1]]["versions"] == {**{f"doc-{i}": f"a{i}" for i in range(6)},
                                             **{f"doc-{i}": f"b{i}" for i in range(4)}}
    assert expected[KEYS[1]]["last"] == "doc-3" and expected[KEYS[1]]["last_run"] == runs[1]
    assert seen(pooled, runs) == expected
    # The files are Dagster's: the stock class reads what the pooled one wrote.
    pooled.dispose()
    assert seen(SqliteEventLogStorage(str(tmp_path / "pooled")), runs) == expected


def test_a_batch_that_is_not_one_runs_asset_events_is_stored_event_by_event(tmp_path: Path) -> None:
    storage = PooledSqliteEventLogStorage(str(tmp_path))
    runs = [str(uuid.uuid4()), str(uuid.uuid4())]
    storage.store_event_batch(run_batch(runs[0], n=2) + run_batch(runs[1], n=3))
    assert seen(storage, runs)["runs"] == {runs[0]: 4, runs[1]: 6}


def test_wiping_closes_connections_so_later_events_land_in_the_new_files(tmp_path: Path) -> None:
    storage = PooledSqliteEventLogStorage(str(tmp_path))
    run = str(uuid.uuid4())
    storage.store_event_batch(run_batch(run))
    storage.wipe()
    storage.store_event_batch(run_batch(run, n=2))
    # A connection kept across the wipe would have written to the unlinked file.
    assert len(SqliteEventLogStorage(str(tmp_path)).get_records_for_run(run).records) == 4


def _store_from_child(storage: PooledSqliteEventLogStorage, run_id: str) -> None:
    storage.store_event_batch(run_batch(run_id, n=3))


def test_a_forked_process_writes_through_connections_of_its_own(tmp_path: Path) -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    storage = PooledSqliteEventLogStorage(str(tmp_path))
    parent_run, child_run = str(uuid.uuid4()), str(uuid.uuid4())
    storage.store_event_batch(run_batch(parent_run))  # the parent's pools are open when it forks
    child = multiprocessing.get_context("fork").Process(target=_store_from_child, args=(storage, child_run))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    storage.store_event_batch(run_batch(parent_run, n=2, version="c"))
    assert seen(storage, [parent_run, child_run])["runs"] == {parent_run: 16, child_run: 6}


def _write_many(base_dir: str, worker: int) -> None:
    storage = PooledSqliteEventLogStorage(base_dir)
    for _ in range(5):
        storage.store_event_batch([materialization(str(uuid.uuid4()), KEYS[0], f"w{worker}-{i}", "x") for i in range(20)])


def test_two_processes_share_the_index_without_losing_events(tmp_path: Path) -> None:
    PooledSqliteEventLogStorage(str(tmp_path))  # create the index once, as the instance does
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_write_many, args=(str(tmp_path), w)) for w in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    stock = SqliteEventLogStorage(str(tmp_path))
    assert len(stock.get_materialized_partitions(KEYS[0])) == 2 * 20
    assert len(stock.fetch_materializations(KEYS[0], limit=1000).records) == 2 * 5 * 20


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files through /proc")
def test_a_long_lived_process_keeps_few_database_files_open(tmp_path: Path) -> None:
    storage = PooledSqliteEventLogStorage(str(tmp_path))
    for _ in range(3 * OPEN_RUN_SHARDS):
        storage.store_event_batch(run_batch(str(uuid.uuid4()), n=1))

    def open_databases() -> int:
        targets = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                targets.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:  # closed since the listing
                pass
        return len({t for t in targets if t.startswith(str(tmp_path)) and t.endswith(".db")})

    assert 0 < open_databases() <= OPEN_RUN_SHARDS + 1  # the run shards in use and the index
    storage.dispose()
    assert open_databases() == 0


def test_the_instance_indx_creates_uses_it(tmp_path: Path) -> None:
    home = tmp_path / "indx"
    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"), corpus_roots=())
    with open_instance(settings) as instance:
        assert isinstance(instance.event_log_storage, PooledSqliteEventLogStorage)
        assert Path(instance.event_log_storage._base_dir) == settings.dagster_home / "history" / "runs"  # noqa: SLF001


def test_an_instance_from_before_the_pooled_log_says_how_to_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))  # restored after the test; open_instance sets it
    home = tmp_path / "indx"
    settings = Settings(home=home, storage_uri=str(home / "assets"), lancedb_uri=str(home / "lancedb"), corpus_roots=())
    settings.dagster_home.mkdir(parents=True)
    (settings.dagster_home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # written by an older indx
    with caplog.at_level(logging.WARNING, logger="indx_assets.app.runner"), open_instance(settings) as instance:
        assert type(instance.event_log_storage).__name__ == "SqliteEventLogStorage"
    (record,) = caplog.records
    assert "stock SQLite event log" in record.getMessage() and EVENT_LOG_BLOCK in record.getMessage()
    (settings.dagster_home / "dagster.yaml").write_text(DEFAULT_DAGSTER_YAML)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="indx_assets.app.runner"), open_instance(settings) as instance:
        assert isinstance(instance.event_log_storage, PooledSqliteEventLogStorage)
    assert caplog.records == []


def test_without_a_base_dir_or_dagster_home_the_error_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    with pytest.raises(dg.DagsterInvariantViolationError, match="needs `base_dir` in its config or DAGSTER_HOME"):
        PooledSqliteEventLogStorage.from_config_value(None, {})
