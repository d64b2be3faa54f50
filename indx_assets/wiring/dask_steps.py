"""Steps run on a Dask cluster: the `dask` executor (`INDX_EXECUTOR=dask`,
`pip install 'indx-assets[dask]'`).

A launched run's process orchestrates; each step is one Dask task (`execute_step`) that runs the
step in a Dask worker's process as `dagster api execute_step` would in a process of its own. The
worker keeps the embedding model loaded from one step to the next (`indx_assets.app.dask_worker`,
its preload).

Rules:
- Only a string crosses to Dask: the step's arguments as Dagster serializes them. (dagster-dask
  hands Dagster's records to Dask as a task's arguments, which Dask iterates as tuples, so none of
  its steps ran on Dask 2024.10 or 2026.8.)
- The run follows its steps through its event log (`StepDelegatingExecutor`): retries, the
  `embedder` pool and a run's termination behave as with Dagster's other step-delegating
  executors (dagster-k8s, dagster-docker).
- One task per launch of a step, under a key of its own. Dask moves a task whose worker died to
  another worker (up to `distributed.scheduler.allowed-failures` times), where the step runs
  again whole; a task that errs, or that Dask gave up on, fails the step's health check, and
  Dagster retries the step or fails it. A task that has finished is released at once: Dask
  computes a task again when the worker holding its result dies while a client still wants it,
  which would run a finished step a second time.
- A terminated run cancels its tasks. Dask does not stop a task that is running: the worker
  running one is restarted by its nanny (the step's process ends where it is, as a killed
  worker's does, and the new process warms itself), so a terminated run's step stops writing at
  once. A step that starts after its run was terminated does nothing.
"""

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from indx_assets.wiring.dagster_internals import (
    CheckStepHealthResult,
    EngineEventData,
    RetryMode,
    StepDelegatingExecutor,
    StepHandler,
    StepHandlerContext,
    execute_step,
)

#: Seconds between two looks of a run at its event log for its steps' events (Dagster's default
#: is 1 s): the `embedder` slot of a finished step is freed, and the next step launched, only at
#: a look. A look is one query of the run's new events.
POLL_S = 0.25

#: Seconds between two health checks of the steps in flight: how soon a task that erred, or one
#: Dask gave up on after its workers died, fails its step (Dagster's default is 20 s).
HEALTH_CHECK_S = 5

#: Seconds a terminated step's worker is given to restart (its new process loads the model).
RESTART_S = 120


class DaskStepHandler(StepHandler):
    """Launches each step as an `execute_step` task on the scheduler at `address`; the client is
    open while the run's executor runs (`connected`)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._client: "distributed.Client | None" = None  # type: ignore[name-defined]  # noqa: F821
        #: each launched step's task, None once it has finished (and been released)
        self._tasks: dict[str, "distributed.Future | None"] = {}  # type: ignore[name-defined]  # noqa: F821

    @property
    def name(self) -> str:
        return "DaskStepHandler"

    @contextmanager
    def connected(self) -> Iterator[None]:
        from distributed import Client

        self._client = Client(self.address, set_as_default=False)
        try:
            yield
        finally:
            self._tasks.clear()
            self._client.close()
            self._client = None

    @staticmethod
    def _step_key(context: StepHandlerContext) -> str:
        keys = context.execute_step_args.step_keys_to_execute or []
        if len(keys) != 1:  # the executor launches one step at a time
            raise ValueError(f"a Dask task runs one step; asked for {keys}")
        return keys[0]

    def launch_step(self, step_handler_context: StepHandlerContext) -> Iterator[dg.DagsterEvent]:
        if self._client is None:
            raise RuntimeError("DaskStepHandler.launch_step outside `connected()`")
        step_key = self._step_key(step_handler_context)
        task_key = f"{step_key}-{step_handler_context.execute_step_args.run_id[:8]}-{uuid.uuid4().hex[:8]}"
        task = self._client.submit(
            execute_step, dg.serialize_value(step_handler_context.execute_step_args), key=task_key, pure=False)
        self._tasks[step_key] = task
        task.add_done_callback(lambda done: self._release_finished(step_key, done))
        yield dg.DagsterEvent.engine_event(
            step_handler_context.get_step_context(step_key),
            f"Executing step {step_key} on Dask ({self.address}) as task {task_key}",
            EngineEventData(),
        )

    def _release_finished(self, step_key: str, task: "distributed.Future") -> None:  # type: ignore[name-defined]  # noqa: F821
        """Called by Dask (in a thread of the client's) when `task` is done: a finished one, still the
        step's latest launch, is released (its step's events are in the run's event log)."""
        if task.status == "finished" and self._tasks.get(step_key) is task:
            self._tasks[step_key] = None
            task.release()

    def check_step_health(self, step_handler_context: StepHandlerContext) -> CheckStepHealthResult:
        step_key = self._step_key(step_handler_context)
        if step_key not in self._tasks:
            # a resumed run's step, launched by a process before this one (Dagster's default run
            # launcher resumes none): launched again
            return CheckStepHealthResult.unhealthy("no Dask task of this run's process runs it")
        task = self._tasks[step_key]
        if task is None:
            return CheckStepHealthResult.healthy()  # finished: its events tell the rest
        if task.status in ("error", "cancelled", "lost"):
            return CheckStepHealthResult.unhealthy(f"its Dask task {task.key} is {task.status}: {task.exception()!r}"
                                                   if task.status == "error" else
                                                   f"its Dask task {task.key} is {task.status}")
        return CheckStepHealthResult.healthy()

    def terminate_step(self, step_handler_context: StepHandlerContext) -> Iterator[dg.DagsterEvent]:
        step_key = self._step_key(step_handler_context)
        task = self._tasks.pop(step_key, None)
        if task is None:
            return
        # asked before the cancel, after which the scheduler no longer knows where it runs
        running_on = [worker for worker, keys in self._client.processing().items() if task.key in keys]
        task.cancel()
        message = f"Cancelled the Dask task {task.key} of step {step_key}"
        if running_on:
            restarted = self._client.restart_workers(running_on, timeout=RESTART_S, raise_for_error=False)
            message += f"; restarted the worker running it ({', '.join(f'{w}: {s}' for w, s in restarted.items())})"
        yield dg.DagsterEvent.engine_event(step_handler_context.get_step_context(step_key), message, EngineEventData())


class DaskExecutor(StepDelegatingExecutor):
    """Dagster's step-delegating executor, connected to the Dask scheduler while it runs."""

    def __init__(self, handler: DaskStepHandler) -> None:
        super().__init__(handler, retries=RetryMode.ENABLED, sleep_seconds=POLL_S,
                         check_step_health_interval_seconds=HEALTH_CHECK_S)
        self.handler = handler

    def execute(self, plan_context, execution_plan):  # type: ignore[no-untyped-def]
        with self.handler.connected():
            yield from super().execute(plan_context, execution_plan)


@dg.executor(
    name="dask",
    config_schema={"address": dg.Field(dg.StringSource, description="The Dask scheduler's address (tcp://host:8786)")},
    requirements=dg.multiple_process_executor_requirements(),
)
def dask_executor(init_context: dg.InitExecutorContext) -> dg.Executor:
    """Each step of the run as a task on an existing Dask cluster."""
    return DaskExecutor(DaskStepHandler(init_context.executor_config["address"]))
