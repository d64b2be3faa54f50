"""The one place that turns a user's mistake into one line on stderr and an exit code.

A mistake is the user's to fix (a setting, an argument, a file, where the command runs), so
`indx` says what is wrong and how to fix it in one line, `indx COMMAND: message`, and exits
non-zero; a traceback is for defects. `--debug` (or `INDX_DEBUG=1`) shows the traceback of a
mistake too. Bad command-line usage (a missing argument, a bad option value, a path that is not
there) is Typer's usage error, said in one line the same way, exit 2.

Commands raise the exceptions below from wherever the mistake is found (Dagster may wrap them
while it builds resources: the cause chain is searched), and need no try/except of their own.
"""

import os
import sys
from collections.abc import Iterator
from functools import cache

import typer

from indx_assets.pipeline.bounds import BoundsError
from indx_assets.pipeline.chain import CHAIN_ENV, ChainConfigError
from indx_assets.pipeline.embedders.registry import EmbedderError
from indx_assets.pipeline.readers.passwords import PasswordsError
from indx_assets.pipeline.roots import RootError
from indx_assets.wiring.settings import ExecutorError, NoDataDirectory, SensorIntervalError

DEBUG_ENV = "INDX_DEBUG"
#: Exit code of a usage error or a mistake in the settings (Click's own for usage errors).
EXIT_USAGE = 2


class UserError(Exception):
    """A mistake a command finds itself: its message says what is wrong and how to fix it."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@cache
def user_errors() -> tuple[tuple[type[BaseException], int, str], ...]:
    """The user's mistakes as they reach the command line: each kind, its exit code, and the
    line that says it (`{}` is the exception's own message)."""
    # Imported here, when a command has failed: `app.search` loads the table schema (pyarrow and
    # numpy, a third of a second), which `indx chunk` and the other commands that never search
    # should not pay for at every start.
    from indx_assets.app.search import InvalidSearch

    return (
        (UserError, EXIT_USAGE, "{}"),
        (BoundsError, EXIT_USAGE, "{}"),  # INDX_FOLLOW_SYMLINKS, INDX_MAX_FILE_MB, INDX_MAX_OCR_PAGES
        (PasswordsError, EXIT_USAGE, "{}"),  # INDX_PDF_PASSWORDS
        (RootError, EXIT_USAGE, "{}"),  # corpus roots: missing, overlapping, two with one label
        (ExecutorError, EXIT_USAGE, "{}"),  # INDX_EXECUTOR: unknown, or its package missing
        (SensorIntervalError, EXIT_USAGE, "{}"),  # INDX_SENSOR_INTERVAL_S: not a whole number >= 1
        (ChainConfigError, EXIT_USAGE, f"the chunker chain cannot be built: {{}}; fix {CHAIN_ENV} or unset it"),
        (NoDataDirectory, EXIT_USAGE, "{}"),  # a command that only reads, run where no data directory is
        (InvalidSearch, EXIT_USAGE, "{}"),  # a blank query
        (EmbedderError, EXIT_USAGE, "{}"),  # INDX_EMBEDDER: unknown, no model there; a table of another model
    )


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__  # `raise ... from`: how Dagster wraps what a resource raised


def user_error(exc: BaseException) -> tuple[str, int] | None:
    """The message and exit code of `exc` when it (or what caused it) is the user's mistake."""
    for cause in _causes(exc):
        for kind, code, line in user_errors():
            if isinstance(cause, kind):
                return line.format(cause), getattr(cause, "exit_code", code)
    return None


def debugging(ctx: typer.Context | None) -> bool:
    """Whether tracebacks were asked for: `--debug` or `INDX_DEBUG=1`."""
    root = ctx.find_root() if ctx is not None else None
    return bool(root is not None and root.meta.get(DEBUG_ENV)) or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def say(command: str, message: str) -> None:
    """One line on stderr, `indx COMMAND: message`."""
    typer.echo(f"{command}: {message}", err=True)


def usage_line(exc: typer.TyperException) -> str:
    """A usage error as one line: what is wrong, and where the help is."""
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        return f"{ctx.command_path}: {message} (see `{ctx.command_path} --help`)"
    return f"indx: {message}"


def exit_with_usage(exc: typer.TyperException) -> None:
    """Say a usage error in one line and exit with its code (2). `indx` alone prints its help:
    Typer raises that as a usage error too (told apart by name, as Typer does itself)."""
    show = getattr(exc, "show", None)  # Click's errors show themselves; a bare TyperException cannot
    if type(exc).__name__ == "NoArgsIsHelpError" and callable(show):
        show()  # its message is the help
    else:
        typer.echo(usage_line(exc), err=True)
    sys.exit(getattr(exc, "exit_code", EXIT_USAGE))
