"""The commands that write the index hold `INDX_HOME` while they run (`home_lock.writer_lock`).

`@holds_home` under `@app.command()` gives a command a `--wait SECONDS` option and runs it with
the lock held; while another process holds it, the command prints who (pid, since when) and
exits 75, or waits up to `--wait` seconds for it first.
"""

import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from indx_assets.app.home_lock import EXIT_LOCKED, HomeLocked, writer_lock
from indx_assets.wiring.settings import Settings

WaitOption = Annotated[float, typer.Option(
    "--wait", min=0, metavar="SECONDS",
    help="While another indx process holds INDX_HOME, wait up to this long for it (default: exit 75 at once).")]


@contextmanager
def holding_home(home: Path, wait: float = 0.0) -> Iterator[None]:
    """Hold `home` for writing, or print who holds it and exit 75."""
    try:
        with writer_lock(home, wait):
            yield
    except HomeLocked as locked:
        typer.echo(f"{locked}; try again later, or pass --wait SECONDS to wait for it", err=True)
        raise typer.Exit(code=EXIT_LOCKED) from None


def holds_home(command: Callable[..., Any] | None = None, *, creates: bool = False) -> Any:
    """Decorate a Typer command that writes the index: it gains `--wait` and runs holding
    `INDX_HOME` (`holding_home`). Only a command that `creates` the data directory (`indx
    ingest`) runs where there is none; the others say where they looked (`NoDataDirectory`)."""
    if command is None:
        return functools.partial(holds_home, creates=creates)

    @functools.wraps(command)
    def run(*args: Any, wait: float = 0.0, **kwargs: Any) -> Any:
        settings = Settings.from_env()
        with holding_home((settings if creates else settings.require_home()).home, wait):
            return command(*args, **kwargs)

    # Typer reads the options from the signature and annotations: show it the added one.
    signature = inspect.signature(command)
    waiting = inspect.Parameter("wait", inspect.Parameter.KEYWORD_ONLY, default=0.0, annotation=WaitOption)
    run.__signature__ = signature.replace(parameters=[*signature.parameters.values(), waiting])  # type: ignore[attr-defined]
    run.__annotations__ = {**command.__annotations__, "wait": WaitOption}
    return run
