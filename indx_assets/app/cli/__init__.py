"""The `indx` command: one Typer app, one module per command."""

import importlib

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


def main() -> None:
    from indx_assets.pipeline.bounds import BoundsError
    from indx_assets.pipeline.readers.passwords import PasswordsError
    from indx_assets.pipeline.roots import RootError

    for name in COMMAND_MODULES:
        importlib.import_module(f"indx_assets.app.cli.{name}")
    try:
        app()
    except (BoundsError, PasswordsError, RootError) as exc:  # the user's settings or roots, not a defect: say which, no traceback
        typer.echo(f"indx: {exc}", err=True)
        raise SystemExit(2) from None
