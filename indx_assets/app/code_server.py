"""The code server of a multi-process deployment (`deploy/local-cluster`): Dagster's gRPC code
server (`dagster api grpc`, the same options), whose launched runs' processes are forked from a
process that has imported the definitions once.

    python -m indx_assets.app.code_server --port 4000 -m indx_assets.wiring.definitions

Rules:
- One code server serves the daemon (sensors, automation, launching runs) and the webserver,
  both naming it in their workspace (`grpc_server`); with `python_module` each of them started
  and fed a code server of its own.
- A launched run's process only orchestrates (its steps go to the Celery workers), yet Dagster
  starts it as a new interpreter that imports Dagster and the definitions (about 4.5
  CPU-seconds, at every run). Here it is forked from a fork server that imported the module
  named by `-m` once (`dagster_internals.fork_run_processes`), so a run's process starts with
  them loaded. The fork server is started from this process's environment, so a setting such
  as `INDX_CHAIN` is the code server's own; a restart of the code server starts a new one.
- SIGTERM stops it, however it was started. Dagster gives SIGTERM the handler SIGINT has, and a
  process started with SIGINT ignored (a background job of a non-interactive shell, `cmd &` in
  a script, and every process it starts) has none: the server ignored SIGTERM, and `cluster.py
  restart` waited 30 s before killing it. SIGINT gets Python's own handler back first.
"""

import signal
import sys

from indx_assets.wiring.dagster_internals import dagster_cli, fork_run_processes


def preload_of(argv: list[str]) -> list[str]:
    """The module `dagster api grpc` is told to load (`-m`/`--module-name`), which the run
    processes then find imported."""
    for flag in ("-m", "--module-name"):
        if flag in argv[:-1]:
            return [argv[argv.index(flag) + 1]]
    return []


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    fork_run_processes(preload_of(args))
    dagster_cli(["api", "grpc", *args])


if __name__ == "__main__":
    main()
