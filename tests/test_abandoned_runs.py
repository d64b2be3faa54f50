"""Whether a run's process is gone (`abandoned_runs._alive`), with real processes."""

import subprocess
import sys
import time

from indx_assets.app.abandoned_runs import _alive


def test_a_killed_process_its_parent_has_not_reaped_is_gone() -> None:
    # a zombie still answers a signal; a run it held would stay unfinished, keeping its slot
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert _alive(child.pid)
        child.kill()
        deadline = time.monotonic() + 30
        while _alive(child.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child.pid), "a killed process, not yet reaped, counted as running"
        assert child.poll() is not None  # reaped only now: it was a zombie while asked about
    finally:
        child.kill()
        child.wait()
    assert not _alive(child.pid)
