"""The `indx` command: one Typer app, one module per command."""

import importlib
import sys

import typer

app = typer.Typer(
    name="indx",
    help="Ingest documents into a LanceDB chunk index, and look at how they are chunked.",
    no_args_is_help=True,
    add_completion=False,
)

#: Modules that register commands on `app`; imported only when the command line runs.
COMMAND_MODULES = ("chunk", "split", "ingest", "forget", "search", "show", "status", "backfill", "restore", "stats",
                   "verify", "serve")


@app.callback()
def _root() -> None:
    """indx-assets: documents in, chunks out."""


def _modules_for(args: list[str]) -> tuple[str, ...]:
    """The command modules a command line needs: the one it names first (`indx chunk ...`:
    the others' imports are a tenth of a second of its start), every one otherwise (help,
    a mistyped name: both list the commands)."""
    return (args[0],) if args and args[0] in COMMAND_MODULES else COMMAND_MODULES


def main() -> None:
    from indx_assets.pipeline.bounds import BoundsError
    from indx_assets.pipeline.readers.passwords import PasswordsError
    from indx_assets.pipeline.roots import RootError

    for name in _modules_for(sys.argv[1:]):
        importlib.import_module(f"indx_assets.app.cli.{name}")
    try:
        app()
    except (BoundsError, PasswordsError, RootError) as exc:  # the user's settings or roots, not a defect: say which, no traceback
        typer.echo(f"indx: {exc}", err=True)
        raise SystemExit(2) from None
