"""One writer of the LanceDB table at a time across processes (`LanceDBResource.writing`), with
real processes: a write waits while another process holds the table, goes on once that process
is killed, and a process nests the lock (maintenance builds indexes inside its own hold)."""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa

from indx_assets.pipeline.schema import CHUNK_ROWS
from indx_assets.wiring.resources.lancedb import WRITER_LOCK_FILE, LanceDBResource

HOLD = """
import sys, time
from indx_assets.wiring.resources.lancedb import LanceDBResource
with LanceDBResource(uri=sys.argv[1]).writing():
    print("held", flush=True)
    time.sleep(600)
"""


def _rows(source_id: str, count: int) -> pa.Table:
    return pa.Table.from_pylist(
        [dict.fromkeys(CHUNK_ROWS.names) | {"id": f"{source_id}-{i}", "source_id": source_id, "text": f"chunk {i}"}
         for i in range(count)], schema=CHUNK_ROWS)


def test_a_write_waits_for_the_process_holding_the_table_and_not_for_a_killed_one(tmp_path: Path) -> None:
    uri = str(tmp_path / "lancedb")
    lancedb = LanceDBResource(uri=uri)
    lancedb.upsert_sources({"a.md": _rows("a.md", 3)})
    holder = subprocess.Popen([sys.executable, "-c", HOLD, uri], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        write = threading.Thread(target=lambda: lancedb.upsert_sources({"b.md": _rows("b.md", 5)}), daemon=True)
        write.start()
        write.join(timeout=2.0)
        assert write.is_alive()  # waiting for the holder
        assert lancedb.table().count_rows("source_id = 'b.md'") == 0
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # however it ends, the kernel drops its lock
        holder.wait()
    write.join(timeout=60)
    assert not write.is_alive()
    rows = lancedb.table().to_arrow().column("id").to_pylist()
    assert sorted(rows) == sorted([f"a.md-{i}" for i in range(3)] + [f"b.md-{i}" for i in range(5)])
    assert lancedb.db.list_tables().tables == ["chunks"]  # the lock's file is no table
    assert (tmp_path / "lancedb" / WRITER_LOCK_FILE).exists()


def test_a_process_nests_its_hold_of_the_table(tmp_path: Path) -> None:
    lancedb = LanceDBResource(uri=str(tmp_path / "lancedb"))
    with lancedb.writing():
        lancedb.upsert_sources({"a.md": _rows("a.md", 2)})  # takes it again: no wait on itself
        lancedb.ensure_indexes()
    assert lancedb.table().count_rows() == 2


def test_another_thread_of_the_process_waits_for_the_holder(tmp_path: Path) -> None:
    # the hold was counted per process: a second thread found it held and wrote beside the first
    lancedb = LanceDBResource(uri=str(tmp_path / "lancedb"))
    entered = threading.Event()
    with lancedb.writing():
        other = threading.Thread(target=lambda: (lancedb.writing().__enter__(), entered.set()), daemon=True)
        other.start()
        assert not entered.wait(timeout=1.5)  # waiting for this thread's hold
    assert entered.wait(timeout=30)
