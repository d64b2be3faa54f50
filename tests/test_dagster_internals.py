"""One test per behaviour of Dagster's private modules that `wiring/dagster_internals` relies on,
on the installed Dagster and real instances (SQLite in a temp dir), so an upgrade that changes
one fails here, naming it. (The run worker's pid is also checked end to end, through a real
`dagster-daemon`, in `test_one_writer`.)"""

import inspect
from pathlib import Path

import dagster as dg
import pytest
import yaml

from indx_assets.wiring import dagster_internals as di

ROOT = Path(__file__).resolve().parents[1]
PARTS = dg.StaticPartitionsDefinition(["p1", "p2", "p3"])


@pytest.fixture
def instance(tmp_path: Path):
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        yield instance


def _latest_tags(instance: dg.DagsterInstance, key: dg.AssetKey) -> dict[str, str]:
    record = instance.fetch_materializations(key, limit=1).records[0]
    return dict(record.event_log_entry.tags or {})


def test_provenance_tags_are_the_ones_dagster_writes_for_code_data_and_input_versions(instance) -> None:
    @dg.asset(code_version="c1")
    def upstream() -> dg.Output[int]:
        return dg.Output(1, data_version=dg.DataVersion("d-up"))

    @dg.asset(code_version="c2")
    def downstream(upstream: int) -> int:
        return upstream

    assert dg.materialize([upstream, downstream], instance=instance).success
    up, down = _latest_tags(instance, upstream.key), _latest_tags(instance, downstream.key)
    assert up[di.CODE_VERSION_TAG] == "c1" and up[di.DATA_VERSION_TAG] == "d-up"
    assert up[di.DATA_VERSION_IS_USER_PROVIDED_TAG] == "true"
    assert down[di.get_input_data_version_tag(upstream.key)] == "d-up"
    pointer = down[di.get_input_event_pointer_tag(upstream.key)]
    assert int(pointer) == instance.fetch_materializations(upstream.key, limit=1).records[0].storage_id


def test_a_runless_batch_is_stored_as_observations_every_reader_finds(instance) -> None:
    key = dg.AssetKey("docs")
    di.report_runless_batch(instance, [dg.AssetObservation(asset_key=key, partition=p, metadata={"why": p})
                                       for p in ("p1", "p2", "p3")])
    records = instance.fetch_observations(key, limit=10).records
    assert sorted(r.partition_key for r in records) == ["p1", "p2", "p3"]
    assert {r.event_log_entry.run_id for r in records} == {di.RUNLESS_RUN_ID}
    latest = instance.event_log_storage.get_latest_storage_id_by_partition(
        key, dg.DagsterEventType.ASSET_OBSERVATION, {"p1", "p2", "p3"})
    assert set(latest) == {"p1", "p2", "p3"}


def test_a_materialization_batch_from_an_op_is_stored_per_partition_and_counts_in_the_run(instance) -> None:
    target = dg.AssetKey("target")

    @dg.asset
    def batcher(context: dg.AssetExecutionContext):
        events = [dg.AssetMaterialization(asset_key=target, partition=p, tags={di.DATA_VERSION_TAG: p})
                  for p in ("p1", "p2", "p3")]
        yield from di.materialization_batch(context, events)
        yield dg.Output(None)

    result = dg.materialize([batcher], instance=instance)
    assert result.success
    stored = instance.fetch_materializations(target, limit=10).records
    assert sorted(r.partition_key for r in stored) == ["p1", "p2", "p3"]
    assert {r.event_log_entry.tags[di.DATA_VERSION_TAG] for r in stored} == {"p1", "p2", "p3"}
    assert len([e for e in result.get_asset_materialization_events() if e.asset_key == target]) == 3


def test_the_partition_key_substrings_dagster_refuses_are_the_listed_ones() -> None:
    assert "..." in di.INVALID_PARTITION_SUBSTRINGS and "\n" in di.INVALID_PARTITION_SUBSTRINGS
    for bad in di.INVALID_PARTITION_SUBSTRINGS:
        with pytest.raises(dg.DagsterInvalidDefinitionError):
            dg.StaticPartitionsDefinition([f"a{bad}b"])
    dg.StaticPartitionsDefinition(["a.b", "a..b", "docs/x y.md"])  # what is not listed is a key


def test_automation_is_evaluated_with_the_cursor_type_and_partition_keys_named_here(instance) -> None:
    @dg.asset(partitions_def=PARTS, automation_condition=dg.AutomationCondition.missing())
    def parts() -> None:
        return None

    result = dg.evaluate_automation_conditions(defs=[parts], instance=instance)
    assert isinstance(result.cursor, di.AssetDaemonCursor)
    requested = result.get_requested_partitions(parts.key)
    assert requested == {"p1", "p2", "p3"}
    key = di.AssetKeyPartitionKey(parts.key, "p1")
    assert (key.asset_key, key.partition_key) == (parts.key, "p1") and key in {di.AssetKeyPartitionKey(parts.key, "p1")}


def test_the_run_worker_still_announces_its_pid_as_the_adapter_reads_it() -> None:
    # The worker's own code (what `dagster api execute_run` runs), read rather than started here:
    # starting one needs a code server, which the daemon test does.
    from dagster._cli import api

    source = inspect.getsource(api)
    assert f'f"{di.RUN_WORKER_STARTED} (pid: {{pid}}).",' in source
    assert "EngineEventData.in_process(pid)" in source


def test_storage_kinds_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stock").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "stock")) as stock:
        assert di.is_local_sqlite(stock) and di.uses_stock_sqlite_event_log(stock)
    pooled = tmp_path / "pooled"
    pooled.mkdir()
    (pooled / "dagster.yaml").write_text((ROOT / "deploy" / "dagster.yaml").read_text())
    monkeypatch.setenv("DAGSTER_HOME", str(pooled))
    with dg.DagsterInstance.from_config(str(pooled)) as instance:
        assert di.is_local_sqlite(instance) and not di.uses_stock_sqlite_event_log(instance)
    with dg.DagsterInstance.ephemeral() as memory:
        assert not di.is_local_sqlite(memory)


def test_the_shipped_instance_files_name_no_private_module() -> None:
    for config in ROOT.glob("deploy/**/dagster.yaml"):
        modules = [v["module"] for v in yaml.safe_load(config.read_text()).values()
                   if isinstance(v, dict) and "module" in v]
        assert not [m for m in modules if m.startswith("dagster._")], config


def test_only_the_adapter_and_the_event_log_storage_import_dagsters_private_modules() -> None:
    import ast

    allowed = {Path("indx_assets/wiring/dagster_internals.py"), Path("indx_assets/app/event_log.py")}
    found = []
    for path in sorted((ROOT / "indx_assets").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names
                      if n.startswith("dagster._") and path.relative_to(ROOT) not in allowed]
    assert found == [], "private Dagster imports outside indx_assets/wiring/dagster_internals.py:\n" + "\n".join(found)


def test_a_sensor_ticks_result_takes_other_run_requests_and_keeps_the_rest(instance) -> None:
    @dg.op
    def noop() -> None: ...

    @dg.job
    def job() -> None:
        noop()

    @dg.sensor(job=job)
    def asks(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        return dg.SensorResult(run_requests=[dg.RunRequest(run_key="a")], cursor="c-1")

    result = asks.evaluate_tick(dg.build_sensor_context(instance=instance))
    replaced = di.with_run_requests(result, [dg.RunRequest(run_key="b"), dg.RunRequest(run_key="c")])
    assert [r.run_key for r in replaced.run_requests] == ["b", "c"]
    assert replaced.cursor == "c-1" and replaced.skip_message is None
    none = di.with_run_requests(result, [])
    assert none.run_requests == [] and none.skip_message and none.cursor == "c-1"


class _ThreadStepHandler(di.StepHandler):
    """Runs each step with `di.execute_step`, in a thread of this process: what a Dask worker's
    task does with the same string (`wiring/dask_steps.py`), without Dask."""

    def __init__(self) -> None:
        self.threads: list = []

    @property
    def name(self) -> str:
        return "thread"

    def launch_step(self, step_handler_context: di.StepHandlerContext):
        import threading

        args = dg.serialize_value(step_handler_context.execute_step_args)
        thread = threading.Thread(target=di.execute_step, args=(args,))
        thread.start()
        self.threads.append(thread)
        return iter(())

    def check_step_health(self, step_handler_context: di.StepHandlerContext) -> di.CheckStepHealthResult:
        return di.CheckStepHealthResult.healthy()

    def terminate_step(self, step_handler_context: di.StepHandlerContext):
        return iter(())


@dg.executor(name="threads", requirements=dg.multiple_process_executor_requirements())
def _thread_executor(_init_context: dg.InitExecutorContext) -> dg.Executor:
    return di.StepDelegatingExecutor(_ThreadStepHandler(), retries=di.RetryMode.DISABLED, sleep_seconds=0.05)


@dg.op
def _words() -> list[str]:
    return ["harbour", "pilot"]


@dg.op
def _count(words: list[str]) -> int:
    return len(words)


@dg.op
def _refuse(words: list[str]) -> int:
    raise ValueError(f"refused {len(words)} words")


@dg.job(executor_def=_thread_executor)
def _delegated() -> None:
    _count(_words())


@dg.job(executor_def=_thread_executor)
def _delegated_failing() -> None:
    _refuse(_words())


def test_a_step_delegating_executor_follows_steps_run_from_their_serialized_arguments(instance) -> None:
    with dg.execute_job(dg.reconstructable(_delegated), instance) as result:
        assert result.success and result.output_for_node("_count") == 2
    workers = instance.get_records_for_run(result.run_id, of_type=dg.DagsterEventType.STEP_WORKER_STARTED).records
    assert sorted(r.event_log_entry.step_key for r in workers) == ["_count", "_words"]
    # a step's own failure reaches the run through the event log, with the step's error
    failed = dg.execute_job(dg.reconstructable(_delegated_failing), instance, raise_on_error=False)
    assert not failed.success
    (failure,) = [e for e in failed.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    assert failure.step_key == "_refuse" and "refused 2 words" in failure.step_failure_data.error.to_string()
