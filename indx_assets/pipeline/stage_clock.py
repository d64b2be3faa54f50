"""Where an ingest's time goes: seconds per stage, each second counted in one stage only.

The stages time themselves (`CLOCK.stage("read")` around reading, "ocr" around OCR, "write"
around every stored write...). Stages nest: time inside an inner stage is the inner one's
alone (OCR inside reading is OCR, a Parquet write inside chunking is writing), so the
seconds add up to at most the wall time, and what is left of the wall time is the
orchestration around them (Dagster runs and events, freshness checks, imports).

One clock per process: `indx ingest` runs its batches in-process, resets the clock before
and reads it after. A thread keeps its own nesting; the seconds are summed across threads.
Work a thread does `in_background` (the model loading while documents are read) overlaps the
stages rather than adding to the wall time: it is counted apart, as `<stage>_background`, and
only the time the ingest then waited for it counts in the stage itself.
"""

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: The stages, in pipeline order (`startup`: from the process's start to the command's, the
#: interpreter and its imports); `orchestration` is the rest of the wall time (`profile`).
STAGES = ("startup", "read", "ocr", "chunk", "model_load", "embed", "write")
ORCHESTRATION = "orchestration"


class StageClock:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.background: dict[str, float] = {}

    def reset(self, startup: float = 0.0) -> None:
        """Zero every stage; `startup` is the time already gone (`since_process_start`)."""
        with self._lock:
            self.seconds = dict.fromkeys(STAGES, 0.0)
            self.seconds["startup"] = startup
            self.background = {}

    def _add(self, stage: str, seconds: float) -> None:
        into = self.background if getattr(self._local, "background", False) else self.seconds
        with self._lock:
            into[stage] = into.get(stage, 0.0) + seconds

    @contextmanager
    def in_background(self) -> Iterator[None]:
        """This thread's stages inside overlap the others (see the module): counted apart."""
        self._local.background = True
        try:
            yield
        finally:
            self._local.background = False

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Count the time inside as `name`'s, less the time of stages nested inside it."""
        stack: list[list] = self._local.__dict__.setdefault("stack", [])
        now = time.perf_counter()
        if stack:  # the enclosing stage pauses
            outer = stack[-1]
            self._add(outer[0], now - outer[1])
        stack.append([name, now])
        try:
            yield
        finally:
            end = time.perf_counter()
            stage, started = stack.pop()
            self._add(stage, end - started)
            if stack:
                stack[-1][1] = end

    def profile(self, wall: float) -> dict[str, float]:
        """Seconds per stage and `orchestration`, the wall time none of them took, in whole
        milliseconds rounded down, so they add up to at most `wall` (given as `wall`)."""
        with self._lock:
            spent = {stage: int(seconds * 1000) for stage, seconds in self.seconds.items()}
            overlapped = {f"{stage}_background": int(seconds * 1000) / 1000 for stage, seconds in self.background.items()}
        wall_ms = int(wall * 1000)
        spent[ORCHESTRATION] = max(wall_ms - sum(spent.values()), 0)
        return {**{stage: ms / 1000 for stage, ms in spent.items()}, "wall": wall_ms / 1000, **overlapped}


def since_process_start() -> float:
    """Seconds since this process started (Linux's /proc; 0.0 where there is none)."""
    try:
        with open("/proc/self/stat") as f:
            started_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
    except (OSError, IndexError, ValueError):
        return 0.0
    return max(uptime - started_ticks / os.sysconf("SC_CLK_TCK"), 0.0)


#: The process's clock.
CLOCK = StageClock()
