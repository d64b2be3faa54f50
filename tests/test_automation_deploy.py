"""The shipped instance configurations: they validate, and the embedded default loads and
carries the rules the pipeline relies on (one ingest op at a time, retries, no NUX)."""

import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.config import dagster_instance_config

from indx_assets.wiring.assets.ingest import INGEST_POOL
from indx_assets.wiring.definitions import build_definitions
from indx_assets.wiring.settings import ExecutorError, SensorIntervalError
from indx_assets.wiring.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "deploy").rglob("dagster.yaml"))


@pytest.mark.parametrize("folder", EXAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shipped_dagster_yaml_validates_against_dagsters_schema(folder: Path) -> None:
    config, _ = dagster_instance_config(str(folder))
    assert config["run_retries"]["enabled"] and config["concurrency"]["pools"]["granularity"] == "op"


def test_the_embedded_default_limits_the_ingest_op_to_one_slot_and_validates_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(ROOT / "deploy" / "dagster.yaml", tmp_path / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))  # where the file is meant to live
    instance = dg.DagsterInstance.from_config(str(tmp_path))
    assert instance.get_concurrency_config().pool_config.default_pool_limit == 1
    assert instance.run_retries_enabled and not instance.nux_enabled
    defs = build_definitions(Settings.from_env())
    pools = {n.name: n.pool for n in defs.resolve_implicit_global_asset_job_def().graph.node_defs}
    assert pools == {"ingest_documents": INGEST_POOL, "chunks_table_maintenance": "lancedb_maintenance"}
    exe = str(Path(sys.executable).parent / "dagster")
    env = {"DAGSTER_HOME": str(tmp_path), "INDX_HOME": str(tmp_path / "indx"), "PATH": str(Path(sys.executable).parent)}
    done = subprocess.run([exe, "definitions", "validate", "-w", "workspace.yaml"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_definitions_carry_the_sensors_schedule_and_maintenance_asset() -> None:
    defs = build_definitions(Settings.from_env())
    assert {s.name for s in defs.sensors} == {"corpus_sensor", "ingest_automation"}
    assert [s.cron_schedule for s in defs.schedules] == ["0 3 * * *"]
    graph = defs.resolve_asset_graph()
    assert graph.get(dg.AssetKey("chunks_table_maintenance")).partitions_def is None
    assert all(graph.get(dg.AssetKey(a)).automation_condition is not None
               for a in ("source_documents", "page_outputs", "chunk_map", "chunk_embeddings", "chunks_table"))


#: What each distributed executor imports, and the extra that installs it.
DISTRIBUTED = {"celery": ("dagster_celery", "scale"), "dask": ("distributed", "dask")}


@pytest.mark.parametrize("name", ["celery", "dask"])
def test_indx_executor_makes_launched_runs_use_the_distributed_executor(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module, extra = DISTRIBUTED[name]
    pytest.importorskip(module, reason=f"the optional executor needs pip install 'indx-assets[{extra}]'")
    monkeypatch.setenv("INDX_EXECUTOR", name)
    job = build_definitions(Settings.from_env()).resolve_implicit_global_asset_job_def()
    assert job.executor_def.name == name
    if name == "celery":  # a run's loop sees its step's end, and frees the slot, within a quarter second
        from dagster_celery import core_execution_loop

        from indx_assets.wiring.executors import CELERY_POLL_S

        assert core_execution_loop.TICK_SECONDS == CELERY_POLL_S <= 0.25


def test_an_unknown_indx_executor_is_refused_with_the_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDX_EXECUTOR", "spark")
    with pytest.raises(ExecutorError, match="INDX_EXECUTOR='spark' is not an executor; use one of: default, in_process, celery, dask"):
        Settings.from_env()


def _indx_status_refused(tmp_path: Path, variable: str, value: str) -> str:
    """`indx status` run with `variable` set to `value`: it must exit 2 without a traceback;
    its last line of stderr."""
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path), variable: value}
    done = subprocess.run([str(Path(sys.executable).parent / "indx"), "status"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    return done.stderr.strip()


def test_indx_names_an_unknown_executor_in_one_line(tmp_path: Path) -> None:
    assert _indx_status_refused(tmp_path, "INDX_EXECUTOR", "spark").endswith("INDX_EXECUTOR='spark' is not an executor; use one of: default, in_process, celery, dask")


def test_indx_sensor_interval_s_sets_how_often_the_sensor_and_automation_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {s.minimum_interval_seconds for s in build_definitions(Settings.from_env()).sensors} == {30}
    monkeypatch.setenv("INDX_SENSOR_INTERVAL_S", "5")
    intervals = {s.name: s.minimum_interval_seconds for s in build_definitions(Settings.from_env()).sensors}
    assert intervals == {"corpus_sensor": 5, "ingest_automation": 5}


@pytest.mark.parametrize("value", ["0", "2.5", "soon"])
def test_a_sensor_interval_that_is_no_whole_second_is_refused_by_name(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDX_SENSOR_INTERVAL_S", value)
    with pytest.raises(SensorIntervalError, match=f"INDX_SENSOR_INTERVAL_S must be a whole number of seconds, at least 1; got '{value}'"):
        Settings.from_env()


def test_indx_names_a_bad_sensor_interval_in_one_line(tmp_path: Path) -> None:
    assert _indx_status_refused(tmp_path, "INDX_SENSOR_INTERVAL_S", "-1").endswith("INDX_SENSOR_INTERVAL_S must be a whole number of seconds, at least 1; got '-1'")
