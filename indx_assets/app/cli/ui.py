"""`indx ui [--host H] [--port P]`: the Dagster UI (webserver and daemon) on the data directory.

Runs `dagster dev` in this process's place, as a user would, on the data directory `indx`
finds (created, like `indx ingest` does, when there is none), with what Dagster needs and a
user would have to spell out: `DAGSTER_HOME` and `INDX_HOME` as absolute paths (Dagster
refuses a relative `DAGSTER_HOME`), the instance set up as `indx` sets it up, the event
settings `indx ingest` runs with, and the code location `workspace.yaml` names. Ctrl-C (or
SIGTERM) stops the webserver, the daemon and the code server, as it does `dagster dev`.
"""

import os
import sys
from collections.abc import Mapping
from typing import Annotated

import typer

from indx_assets.app.cli import app
from indx_assets.wiring.settings import HOME_ENV, Settings

#: The code location: the module `workspace.yaml` loads, which is also its name there.
DEFINITIONS_MODULE = "indx_assets.definitions"
PORT_ENV = "INDX_UI_PORT"


def dagster_dev_command(host: str, port: int) -> list[str]:
    """The `dagster dev` command line `indx ui` runs, with this interpreter."""
    return [sys.executable, "-m", "dagster", "dev", "-m", DEFINITIONS_MODULE, "--host", host, "--port", str(port)]


def dagster_dev_environment(settings: Settings, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment `dagster dev` runs in: `environ` as a daemon's (`runner.daemon_environment`),
    with the data directory's absolute paths."""
    from indx_assets.app.runner import daemon_environment

    return {**daemon_environment(environ), HOME_ENV: str(settings.home), "DAGSTER_HOME": str(settings.dagster_home)}


@app.command()
def ui(
    host: Annotated[str, typer.Option("--host", help="Address the webserver listens on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, envvar=PORT_ENV,
                                      help="Port the webserver listens on.")] = 3000,
) -> None:
    """Start the Dagster UI (webserver and daemon, as `dagster dev` does) on the data directory."""
    from indx_assets.app.runner import open_instance

    settings = Settings.from_env()
    open_instance(settings).dispose()  # creates the data directory and its instance as `indx ingest` does
    env = dagster_dev_environment(settings, os.environ)
    typer.echo(f"indx ui: the Dagster UI of {settings.home} at http://{host}:{port} (Ctrl-C stops it)", err=True)
    command = dagster_dev_command(host, port)
    os.execve(command[0], command, env)  # dagster dev in this process's place: its signals are its own
