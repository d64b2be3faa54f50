"""The `indx` command: one Typer app, one module per command.

A user's mistake never ends in a traceback: `IndxGroup` says it in one line and exits non-zero
(`errors`); `--debug` or `INDX_DEBUG=1` shows the traceback.
"""

import gc
import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from indx_assets.app.cli import errors


class IndxGroup(TyperGroup):
    """The command group: usage errors and the user's mistakes as one line each (`errors`)."""

    def invoke(self, ctx: Any) -> Any:  # Typer's own Context class is private
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.TyperException, typer.Abort):  # exits, usage errors: Typer's own
            raise
        except Exception as exc:
            found = errors.user_error(exc)
            if found is None or errors.debugging(ctx):
                raise
            message, code = found
            errors.say(" ".join(filter(None, ("indx", ctx.invoked_subcommand))), message)
            raise typer.Exit(code) from None

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.TyperException as exc:  # a usage error: one line, where Typer draws a box
            errors.exit_with_usage(exc)
        except typer.Abort:
            typer.echo("indx: aborted", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    name="indx",
    cls=IndxGroup,
    help="Ingest documents into a LanceDB chunk index, and look at how they are chunked.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)

#: Modules that register commands on `app`; imported only when the command line runs.
COMMAND_MODULES = ("chunk", "split", "ingest", "forget", "search", "show", "status", "backfill", "restore", "stats",
                   "verify", "serve", "ui")


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"indx {version('indx-assets')}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option(
        "--debug", help="Show the traceback of every error, the user's mistakes too (or set INDX_DEBUG=1).")] = False,
    show_version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                               help="Print the version and exit.")] = False,
) -> None:
    """indx-assets: documents in, chunks out."""
    del show_version  # handled by its callback
    ctx.meta[errors.DEBUG_ENV] = debug


def _modules_for(args: list[str]) -> tuple[str, ...]:
    """The command modules a command line needs: the one it names first (`indx chunk ...`:
    the others' imports are a tenth of a second of its start), every one otherwise (help,
    a mistyped name, a root option first: they list the commands)."""
    return (args[0],) if args and args[0] in COMMAND_MODULES else COMMAND_MODULES


#: Whether this process is the `indx` command itself (`main`), which ends when its command does,
#: rather than a program that invokes the commands (a test's `CliRunner`) and goes on.
_COMMAND_PROCESS = False


def freeze_heap() -> None:
    """In the `indx` process, leave every object alive now out of the garbage collector's walks
    (`gc.freeze`): what Dagster, torch and pydantic loaded lives until exit, and each full
    collection walked all of it again (1 to 2 s of a sample-corpus ingest, and 2 to 3 s at
    interpreter shutdown). Elsewhere it does nothing: a longer-lived caller's cyclic garbage
    would never be collected."""
    if _COMMAND_PROCESS:
        gc.freeze()


def main() -> None:
    global _COMMAND_PROCESS
    _COMMAND_PROCESS = True
    for name in _modules_for(sys.argv[1:]):
        importlib.import_module(f"indx_assets.app.cli.{name}")
    try:
        app()
    finally:
        freeze_heap()  # the command is done: files, instance and tables are closed; atexit hooks still run
