"""indx's PostgreSQL storages (`indx_assets.app.event_log_postgres`, `indx_assets.app.postgres_pool`),
on a real PostgreSQL.

A Celery worker's step writes five materializations per document and reads every partition's
latest records per stage: over dagster-postgres' stock storage each statement opened a
connection of its own (a PostgreSQL backend forked per statement) and each latest record was
read whole. The pooled storage must reuse its connections, keep working across a PostgreSQL
restart, index the provenance tags (`latest_records` reads them in one query), and show
readers exactly what the stock storage shows.

The run and schedule storages (the daemon's queue, sensor and monitoring loops poll them every
second or so) were dagster-postgres' stock ones, a connection per statement: on an idle local
cluster PostgreSQL started about 13 sessions a second. They must reuse their connections too,
and go on after a restart.

Needs Debian's `postgresql` and the `scale` extra (`.ci/run` installs both); started the way
the local cluster starts it (`deploy/local-cluster/cluster.py`).
"""

import importlib.util
import uuid
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa

pytest.importorskip("dagster_postgres")
from dagster_postgres import PostgresEventLogStorage  # noqa: E402

from indx_assets.wiring.dagster_internals import CODE_VERSION_TAG, indexed_event_tags  # noqa: E402
from test_event_log import KEYS, planned, run_batch, seen  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb")),
                                reason="needs Debian's postgresql (.ci/run installs it)")


def _cluster_module():
    spec = importlib.util.spec_from_file_location("local_cluster_pg", ROOT / "deploy" / "local-cluster" / "cluster.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


cluster = _cluster_module()


@pytest.fixture(scope="module")
def postgres() -> Iterator[dict]:
    state: dict = {}
    try:
        cluster.start_postgres(state)
        yield state
    finally:
        cluster.stop_postgres(state, "immediate")
        if state.get("postgres"):
            import shutil

            shutil.rmtree(state["postgres"]["base"], ignore_errors=True)


def _database(state: dict) -> str:
    """A fresh database of its own for one test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    port = state["postgres"]["port"]
    engine = sa.create_engine(f"postgresql+psycopg2://indx@127.0.0.1:{port}/dagster", isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))
    engine.dispose()
    return f"postgresql+psycopg2://indx@127.0.0.1:{port}/{name}"


def _pooled(url: str):
    from indx_assets.event_log import PooledPostgresEventLogStorage  # its stable address

    return PooledPostgresEventLogStorage(url)


def test_a_worker_writes_its_events_over_a_few_connections_not_one_each(postgres: dict) -> None:
    storage = _pooled(_database(postgres))
    opened = []
    sa.event.listen(storage._engine, "connect", lambda *_: opened.append(1))  # noqa: SLF001
    run_id = str(uuid.uuid4())
    for event in run_batch(run_id, n=20):  # 40 asset events, one at a time as Dagster stores them
        storage.store_event(event)
    assert len(storage.get_records_for_run(run_id).records) == 40
    assert len(opened) <= 2, f"{len(opened)} connections opened for 40 events"


def test_readers_see_what_the_stock_storage_shows_and_provenance_is_indexed(postgres: dict) -> None:
    pooled, stock = _pooled(_database(postgres)), PostgresEventLogStorage(_database(postgres))
    runs = [str(uuid.uuid4()), str(uuid.uuid4())]
    for storage in (pooled, stock):
        storage.store_event_batch(run_batch(runs[0]))
        for event in run_batch(runs[1], version="b"):
            storage.store_event(event)
    assert seen(pooled, runs) == seen(stock, runs)

    class Instance:  # what `indexed_event_tags` reads: the instance's event log
        def __init__(self, storage):
            self.event_log_storage = storage

    for storage, indexed in ((pooled, True), (stock, False)):
        ids = storage.get_latest_storage_id_by_partition(KEYS[0], dg.DagsterEventType.ASSET_MATERIALIZATION)
        tags = indexed_event_tags(Instance(storage), ids.values())  # type: ignore[arg-type]
        assert all((CODE_VERSION_TAG in tags.get(i, {})) is indexed for i in ids.values())


def _planned_view(storage: PostgresEventLogStorage, run_ids: list[str], partitions: list[str]) -> dict:
    """What automation and the UI read of planned materializations: each partition's latest
    planned run, each asset's last run, and each run's planned events."""
    view: dict = {key: {p: getattr(storage.get_latest_planned_materialization_info(key, p), "run_id", None)
                        for p in partitions} for key in KEYS}
    view["last_run"] = {key: record.asset_entry.last_run_id for key in KEYS for record in storage.get_asset_records([key])}
    view["runs"] = {r: sorted((e.event_log_entry.dagster_event.asset_key.to_string(),  # type: ignore[union-attr]
                               e.event_log_entry.dagster_event.partition)  # type: ignore[union-attr]
                              for e in storage.get_records_for_run(r, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED).records)
                    for r in run_ids}
    return view


def test_a_runs_planned_materializations_go_in_a_few_statements_and_read_as_stored_one_by_one(postgres: dict) -> None:
    """A run is created announcing every partition of every asset it plans (the daemon, for
    each run it launches); dagster-postgres stored them one at a time, four statements each."""
    pooled, stock = _pooled(_database(postgres)), PostgresEventLogStorage(_database(postgres))
    runs, partitions = [str(uuid.uuid4()), str(uuid.uuid4())], [f"doc-{i}" for i in range(60)]
    batches = [[planned(runs[0], key, p) for key in KEYS for p in partitions],
               [planned(runs[1], key, p) for key in KEYS for p in partitions[::3]]]  # a later run, a third of them
    statements: list[str] = []
    sa.event.listen(pooled._engine, "before_cursor_execute", lambda *a: statements.append(a[2]))  # noqa: SLF001
    for batch in batches:
        pooled.store_event_batch(batch)
        for event in batch:
            stock.store_event(event)
    stored = len(statements)
    expected = _planned_view(stock, runs, partitions)
    assert expected[KEYS[0]]["doc-3"] == runs[1] and expected[KEYS[0]]["doc-4"] == runs[0]
    assert expected["last_run"] == {key: runs[1] for key in KEYS}
    assert _planned_view(pooled, runs, partitions) == expected
    assert stored <= 8, f"{stored} statements for {sum(map(len, batches))} planned events"


def test_a_batch_of_planned_materializations_of_two_runs_is_stored_event_by_event(postgres: dict) -> None:
    storage = _pooled(_database(postgres))
    runs = [str(uuid.uuid4()), str(uuid.uuid4())]
    storage.store_event_batch([planned(r, KEYS[0], f"doc-{i}") for r in runs for i in range(3)])
    assert _planned_view(storage, runs, ["doc-0"])["runs"] == {r: [(KEYS[0].to_string(), f"doc-{i}") for i in range(3)]
                                                                for r in runs}


def test_the_storage_goes_on_after_postgresql_restarts(postgres: dict) -> None:
    storage = _pooled(_database(postgres))
    run_id = str(uuid.uuid4())
    events = run_batch(run_id)
    storage.store_event(events[0])
    cluster.restart_postgres(postgres)  # the pooled connections are now dead sockets
    for event in events[1:]:
        storage.store_event(event)
    assert len(storage.get_records_for_run(run_id).records) == len(events)


def test_a_step_waiting_for_the_embedder_slot_looks_again_within_a_second(postgres: dict) -> None:
    from indx_assets.app.event_log_postgres import SLOT_RECHECK_S

    storage = _pooled(_database(postgres))
    storage.set_concurrency_slots("embedder", 1)
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    assert storage.claim_concurrency_slot("embedder", first, "ingest_documents").is_claimed
    waiting = storage.claim_concurrency_slot("embedder", second, "ingest_documents")
    assert not waiting.is_claimed and waiting.sleep_interval == SLOT_RECHECK_S <= 1
    storage.free_concurrency_slot_for_step(first, "ingest_documents")
    assert storage.claim_concurrency_slot("embedder", second, "ingest_documents").is_claimed


def _runs_and_ticks(url: str):
    from indx_assets.app.postgres_pool import PooledPostgresRunStorage, PooledPostgresScheduleStorage

    return PooledPostgresRunStorage(url), PooledPostgresScheduleStorage(url)


def _poll(runs, ticks, run_id: str) -> None:
    """What the daemon's loops do every second: look at the queue and at a sensor's state."""
    assert [r.run_id for r in runs.get_runs(dg.RunsFilter(run_ids=[run_id]))] == [run_id]
    assert ticks.get_instigator_state("origin", "selector") is None


def test_the_daemons_run_and_schedule_storage_poll_over_a_few_connections(postgres: dict) -> None:
    runs, ticks = _runs_and_ticks(_database(postgres))
    opened = []
    for storage in (runs, ticks):
        sa.event.listen(storage._engine, "connect", lambda *_: opened.append(1))  # noqa: SLF001
    run_id = str(uuid.uuid4())
    runs.add_run(dg.DagsterRun(job_name="ingest", run_id=run_id))
    for _ in range(20):
        _poll(runs, ticks, run_id)
    assert len(opened) <= 2, f"{len(opened)} connections opened for 41 statements"


def test_the_run_and_schedule_storage_go_on_after_postgresql_restarts(postgres: dict) -> None:
    runs, ticks = _runs_and_ticks(_database(postgres))
    run_id = str(uuid.uuid4())
    runs.add_run(dg.DagsterRun(job_name="ingest", run_id=run_id))
    _poll(runs, ticks, run_id)
    cluster.restart_postgres(postgres)  # the pooled connections are now dead sockets
    _poll(runs, ticks, run_id)
