"""`indx`'s own process leaves what it loaded out of the collector's walks (`gc.freeze`), so it
does not spend seconds at exit walking Dagster's and torch's objects; a program that invokes the
commands in its own process (here, Typer's `CliRunner`) keeps its collector as it was."""

import gc
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import indx_assets.app.cli.chunk  # noqa: F401  (registers `chunk`)
from indx_assets.app.cli import app

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "notes" / "tea-harvest.txt"


def test_an_invoking_program_keeps_its_collector() -> None:
    before = gc.get_freeze_count()
    result = CliRunner().invoke(app, ["chunk", str(SAMPLE), "--json"])
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before


def test_the_indx_process_freezes_what_it_loaded_before_it_exits() -> None:
    code = ("import atexit, gc, sys; atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr)); "
            f"sys.argv = ['indx', 'chunk', {str(SAMPLE)!r}, '--json']; from indx_assets.app.cli import main; main()")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "\"content\"" in run.stdout  # the command's output is whole
    frozen = int(run.stderr.rsplit("frozen", 1)[1].split()[0])
    assert frozen > 10_000  # the interpreter, typer, the readers and chunkers: all left to the OS
