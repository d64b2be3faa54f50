"""Memory a stage freed goes back to the system (`pipeline.freed_memory`), in a process of its own:
glibc keeps what a thread freed in that thread's heap, counted in the process's memory, until asked."""

import subprocess
import sys

import pytest

_FREED = r"""
import re, threading
from pathlib import Path
from indx_assets.pipeline.freed_memory import return_freed_memory

def rss():
    return int(re.search(r"VmRSS:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) * 1024

def work():  # many small objects made and dropped in a thread of its own, as torch's and LanceDB's are
    held = [bytes(1000) + bytes([i % 256]) for i in range(200_000)]  # over pymalloc's 512 bytes: malloc's
    keep = held[::1000]  # a few survive, scattered through the heap, as a stage's results do
    del held
    kept.append(keep)

kept = []
thread = threading.Thread(target=work)
thread.start()
thread.join()
before = rss()
released = return_freed_memory()
print(int(released), before, rss())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim and /proc: Linux only")
def test_memory_a_stage_freed_goes_back_to_the_system() -> None:
    done = subprocess.run([sys.executable, "-c", _FREED], capture_output=True, text=True, check=True)
    released, before, after = map(int, done.stdout.split())
    assert released == 1
    assert before - after > 100 * 2**20, f"{before / 2**20:.0f} MiB before, {after / 2**20:.0f} MiB after"
