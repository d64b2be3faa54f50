"""Every use of Dagster's private modules (`dagster._…`), in one place.

Dagster's public API (1.13) does not offer these yet; each is named here with what it relies
on, and `tests/test_dagster_internals.py` checks each behaviour on the installed Dagster, so an
upgrade that changes one fails there, with a test that says which. The one exception is the
event-log storage (`app/event_log.py`), which subclasses Dagster's SQLite storage.

- Provenance tags: the tag names under which Dagster keeps a materialization's code version,
  data version and its inputs' data versions (what its own staleness reads), so the batched
  op records per-partition provenance Dagster understands.
- Event batches: the batch marker Dagster's event log takes to write many events in one
  transaction, for runless observations (`report_runless_batch`) and for the op's
  materializations (`materialization_batch`, through the step context).
- Partition keys: the substrings Dagster refuses in a partition key.
- The automation cursor's type, and `AssetKeyPartitionKey` (what automation conditions and
  their evaluation results are made of).
- Sensor ticks: a tick's result with other run requests (`with_run_requests`), for the
  automation sensor that runs its requests as spans, or with none and the cursor as it was
  (`skipped_tick`: the sensor daemon stores whatever cursor a tick returns, `None` too).
- Provenance tags by event: the event log's tag index (`asset_event_tags`, one row per indexed
  tag of an asset event), read for many events in one query and filled in for events stored
  before a storage indexed a tag (`indexed_event_tags`, `index_event_tags`).
- Runs: the run worker's pid as the worker records it (`run_worker_pid`); whether runs are kept
  in SQLite files on this machine; whether the event log is Dagster's stock SQLite one.
- Run processes: the multiprocessing context Dagster's gRPC code server starts a launched run's
  process with (`fork_run_processes`; Dagster's is `spawn`, a fresh interpreter per run), and
  the `dagster` command's entry point (`dagster_cli`), to start that server in this process.
- Step delegation: the executor that hands each step of a run to a step handler and follows
  the steps through the run's event log, with Dagster's retries and concurrency pools
  (`StepDelegatingExecutor`, which dagster-k8s and dagster-docker build on); the arguments it
  hands over (`ExecuteStepArgs`, serializable), and what `dagster api execute_step` does with
  them in the process it runs in (`execute_step`), for a worker that keeps its model loaded.
"""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone

import dagster as dg
import sqlalchemy as sa
from dagster._core.definitions.asset_daemon_cursor import AssetDaemonCursor
from dagster._core.definitions.data_version import (
    CODE_VERSION_TAG,
    DATA_VERSION_IS_USER_PROVIDED_TAG,
    DATA_VERSION_TAG,
    INPUT_DATA_VERSION_TAG_PREFIX,
    get_input_data_version_tag,
    get_input_event_pointer_tag,
)
from dagster._core.definitions.events import AssetKeyPartitionKey
from dagster._core.definitions.partitions.utils.base import INVALID_PARTITION_SUBSTRINGS
from dagster._core.definitions.sensor_definition import SensorExecutionData
from dagster._core.events import (
    AssetObservationData,
    DagsterEventBatchMetadata,
    EngineEventData,
    StepMaterializationData,
    generate_event_batch_id,
)
from dagster._core.execution.retries import RetryMode
from dagster._core.executor.step_delegating import (
    CheckStepHealthResult,
    StepDelegatingExecutor,
    StepHandler,
    StepHandlerContext,
)
from dagster._core.instance.utils import RUNLESS_JOB_NAME, RUNLESS_RUN_ID
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.schema import AssetEventTagsTable
from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage
from dagster._core.storage.runs import SqliteRunStorage
from dagster._core.storage.tags import BACKFILL_ID_TAG
from dagster._grpc.types import ExecuteStepArgs

__all__ = [
    "BACKFILL_ID_TAG",
    "CODE_VERSION_TAG",
    "DATA_VERSION_IS_USER_PROVIDED_TAG",
    "DATA_VERSION_TAG",
    "INPUT_DATA_VERSION_TAG_PREFIX",
    "INVALID_PARTITION_SUBSTRINGS",
    "AssetDaemonCursor",
    "AssetKeyPartitionKey",
    "CheckStepHealthResult",
    "EngineEventData",
    "ExecuteStepArgs",
    "RetryMode",
    "StepDelegatingExecutor",
    "StepHandler",
    "StepHandlerContext",
    "execute_step",
    "get_input_data_version_tag",
    "get_input_event_pointer_tag",
    "index_event_tags",
    "indexed_event_tags",
    "is_local_sqlite",
    "dagster_cli",
    "fork_run_processes",
    "materialization_batch",
    "report_runless_batch",
    "run_worker_pid",
    "uses_stock_sqlite_event_log",
    "with_run_requests",
]

#: How Dagster's run worker (`dagster api execute_run`) announces itself in a run's event log:
#: an engine event whose metadata `pid` is its process id.
RUN_WORKER_STARTED = "Started process for run"


def with_run_requests(result: SensorExecutionData, run_requests: Sequence[dg.RunRequest]) -> SensorExecutionData:
    """A sensor tick's result (`SensorDefinition.evaluate_tick`) asking for `run_requests`
    instead, with its cursor, evaluations and everything else as they were."""
    return SensorExecutionData(
        run_requests=list(run_requests),
        skip_message=None if run_requests else result.skip_message or "nothing requested",
        cursor=result.cursor,
        dagster_run_reactions=result.dagster_run_reactions,
        log_key=result.log_key,
        dynamic_partitions_requests=result.dynamic_partitions_requests,
        asset_events=result.asset_events,
        automation_condition_evaluations=result.automation_condition_evaluations,
    )


def skipped_tick(cursor: str | None, message: str) -> SensorExecutionData:
    """A sensor tick's result that requests nothing and leaves the sensor's cursor as it was."""
    return SensorExecutionData(run_requests=[], skip_message=message, cursor=cursor)


def report_runless_batch(instance: dg.DagsterInstance,
                         observations: Sequence[dg.AssetObservation | dg.AssetMaterialization]) -> None:
    """Write observations (or materializations) as runless events (what
    `report_runless_asset_event` writes, one at a time) handed to the event log as one batch."""
    def event(o: dg.AssetObservation | dg.AssetMaterialization) -> dg.DagsterEvent:
        if isinstance(o, dg.AssetMaterialization):
            return dg.DagsterEvent(event_type_value=dg.DagsterEventType.ASSET_MATERIALIZATION.value,
                                   job_name=RUNLESS_JOB_NAME, event_specific_data=StepMaterializationData(o))
        return dg.DagsterEvent(event_type_value=dg.DagsterEventType.ASSET_OBSERVATION.value, job_name=RUNLESS_JOB_NAME,
                               event_specific_data=AssetObservationData(o))

    events = [event(o) for o in observations]
    batch_id, last = generate_event_batch_id(), len(events) - 1
    for i, dagster_event in enumerate(events):
        instance.report_dagster_event(dagster_event, run_id=RUNLESS_RUN_ID,
                                      batch_metadata=DagsterEventBatchMetadata(batch_id, i == last))


def materialization_batch(context: dg.AssetExecutionContext,
                          events: Sequence[dg.AssetMaterialization]) -> list[dg.DagsterEvent]:
    """`OpExecutionContext.log_event` for many materializations with Dagster's batch marker,
    which the public method does not take (the one use of the op's step context); the events,
    for the op to yield so they count in the run's result."""
    step_context = context.op_execution_context._step_execution_context  # noqa: SLF001
    batch_id, last = generate_event_batch_id(), len(events) - 1
    return [dg.DagsterEvent.asset_materialization(step_context, event, DagsterEventBatchMetadata(batch_id, i == last))
            for i, event in enumerate(events)]


def run_worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The pid of the last run worker Dagster started for `run_id` (a resumed run has a new
    one), from the engine event the worker writes as it starts; None before it started (or
    for a run executed in-process, which has no worker of its own)."""
    pid = None
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = entry.dagster_event
        if event is None or not entry.message.startswith(RUN_WORKER_STARTED):
            continue
        value = event.engine_event_data.metadata.get("pid")
        text = str(getattr(value, "value", value))
        if text.isdigit():
            pid = int(text)
    return pid


def is_local_sqlite(instance: dg.DagsterInstance) -> bool:
    """Whether the instance keeps its runs in SQLite files, so every process that runs one
    writes this machine's disk and runs on this host."""
    return isinstance(instance.run_storage, SqliteRunStorage)


def uses_stock_sqlite_event_log(instance: dg.DagsterInstance) -> bool:
    """Whether the event log is Dagster's own SQLite storage (not indx's pooled subclass)."""
    return type(instance.event_log_storage) is SqliteEventLogStorage


#: Event ids per query of the tag index (SQLite caps bound variables at 32,766; Postgres more).
_IDS_PER_QUERY = 5000


def indexed_event_tags(instance: dg.DagsterInstance, event_ids: Iterable[int]) -> dict[int, dict[str, str]] | None:
    """The tags the event log indexed for each of `event_ids` (what it keeps in
    `asset_event_tags`: the data version always, more where the storage indexes more), a
    query per 5,000 events and no event deserialized; None when the event log is not
    Dagster's SQL storage (it has no such table to read)."""
    storage = instance.event_log_storage
    if not isinstance(storage, SqlEventLogStorage):
        return None
    ids = list(event_ids)
    tags: dict[int, dict[str, str]] = {}
    table = AssetEventTagsTable
    with storage.index_connection() as conn:
        for start in range(0, len(ids), _IDS_PER_QUERY):
            query = sa.select(table.c.event_id, table.c.key, table.c.value).where(
                table.c.event_id.in_(ids[start:start + _IDS_PER_QUERY]))
            for event_id, key, value in conn.execute(query):
                tags.setdefault(event_id, {})[key] = value
    return tags


def index_event_tags(instance: dg.DagsterInstance, asset_key: dg.AssetKey,
                     tags_by_event: Mapping[int, Mapping[str, str]], timestamps: Mapping[int, float]) -> None:
    """Add to the event log's tag index the tags of events stored before it indexed them (those
    `get_asset_tags_to_index` now takes that the index lacks), so the next read finds them
    there; nothing when the storage indexes no more than it did."""
    storage = instance.event_log_storage
    if not isinstance(storage, SqlEventLogStorage) or not tags_by_event:
        return
    wanted = {event_id: {k: v for k, v in tags.items() if k in storage.get_asset_tags_to_index({k})}
              for event_id, tags in tags_by_event.items()}
    if not any(wanted.values()):
        return
    have = indexed_event_tags(instance, wanted) or {}
    rows = [
        {"event_id": event_id, "asset_key": asset_key.to_string(), "key": key, "value": value,
         "event_timestamp": datetime.fromtimestamp(timestamps[event_id], timezone.utc).replace(tzinfo=None)}
        for event_id, tags in wanted.items()
        for key, value in tags.items()
        if key not in have.get(event_id, {})
    ]
    if rows:
        with storage.index_transaction() as conn:
            conn.execute(AssetEventTagsTable.insert(), rows)


def fork_run_processes(preload: Sequence[str]) -> None:
    """Have every Dagster gRPC code server made in this process start its runs' processes from a
    fork server that imported `preload` once (Python's `forkserver` context), instead of a new
    interpreter per run (`spawn`, which imports Dagster and the definitions again: about 4.5
    CPU-seconds a run). The fork server is a single-threaded process of its own, so a forked run
    process inherits no gRPC threads or connections; it imports nothing but what `preload` did
    not. Relies on `DagsterApiServer` keeping its context in `_mp_ctx` (set in `__init__`).

    The fork server starts here, not at the first run: its imports (4–5 s) then go on beside the
    code server's own loading of the definitions, and the first run after a (re)start of the code
    server, a chain change's, does not wait for them."""
    import multiprocessing
    from multiprocessing import forkserver

    # imported here: only the code server needs the gRPC server, every other process does not
    from dagster._grpc.server import DagsterApiServer

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    forkserver.ensure_running()
    init = DagsterApiServer.__init__

    def __init__(self: DagsterApiServer, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        self._mp_ctx = context  # type: ignore[assignment]

    DagsterApiServer.__init__ = __init__  # type: ignore[method-assign]


def dagster_cli(args: Sequence[str]) -> None:
    """Run the `dagster` command with `args` in this process (what the `dagster` script does)."""
    import sys

    from dagster._cli import main

    sys.argv = ["dagster", *args]
    main()


def execute_step(serialized_args: str) -> None:
    """Run the steps `serialized_args` (an `ExecuteStepArgs`) names in this process, as
    `dagster api execute_step` runs them in its own: the events go to the run's event log, where
    the run's `StepDelegatingExecutor` reads them. Raises what the step's framework raised (a
    step's own failure is an event, not an exception)."""
    # imported here: only a worker runs steps, and the command module imports the whole CLI
    from dagster._cli.api import _execute_step_command_body

    args = dg.deserialize_value(serialized_args, ExecuteStepArgs)
    with dg.DagsterInstance.from_ref(args.instance_ref) as instance:
        run = instance.get_run_by_id(args.run_id)
        if run is None:
            raise ValueError(f"run {args.run_id} is not in the instance's run storage")
        for _event in _execute_step_command_body(args, instance, run):
            pass  # each event is already stored; the body yields them for the command's output
