"""`indx backfill [--stale] [--assets ...]`: materialize exactly the partitions that need it.

One scan finds them (`status.corpus_status`); they run in batched runs over contiguous
partition ranges. Interrupting is safe: every partition a stage finished is recorded as it
finishes, and the stages skip fresh partitions, so running the same command again resumes.
Before a re-chunk of the whole corpus the LanceDB table version is tagged (`indx restore`).
"""

import json
import time
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from indx_assets.app.cli import app
from indx_assets.app.cli.writer import holds_home
from indx_assets.wiring.settings import Settings

ASSET_NAMES = ("source_documents", "page_outputs", "chunk_map", "chunk_embeddings", "chunks_table")


def _assets(value: list[str] | None) -> list[str] | None:
    names = [n.strip() for v in value or [] for n in v.split(",") if n.strip()]
    unknown = sorted(set(names) - set(ASSET_NAMES))
    if unknown:
        raise typer.BadParameter(f"unknown asset(s) {', '.join(unknown)}; choose from {', '.join(ASSET_NAMES)}")
    return names or None


@app.command()
@holds_home
def backfill(
    stale: Annotated[bool, typer.Option("--stale", help="Only stale partitions (default: missing and stale).")] = False,
    assets: Annotated[list[str] | None, typer.Option(
        "--assets", callback=_assets,  # checked as the line is parsed, before the data directory is looked for
        help="Assets to run (comma-separated or repeated; default: all five).")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Documents per Dagster run.")] = 100,
    tag: Annotated[bool, typer.Option(help="Tag the LanceDB table version before re-chunking the whole corpus.")] = True,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Redo the selected assets for every partition, fresh or not.")] = False,
) -> None:
    """Backfill exactly the partitions that are stale (and missing, unless --stale), or all of them with --force."""
    import dagster as dg

    from indx_assets.app.runner import materialize_partitions, open_instance
    from indx_assets.app.table_versions import tag_current
    from indx_assets.wiring.assets.partitions import SOURCES
    from indx_assets.wiring.assets.status import CODE_VERSION, code_versions, corpus_status
    from indx_assets.wiring.definitions import build_definitions, build_resources
    from indx_assets.wiring.resources.source_index import SourceIndex

    started = time.perf_counter()
    selection = assets
    console = Console(stderr=True, quiet=json_output)
    settings = Settings.from_env()
    instance = open_instance(settings)
    resources = build_resources(settings)
    found = corpus_status(instance, code_versions(build_definitions(settings)), SourceIndex(resources["corpus"].index))  # type: ignore[attr-defined]
    keys = (list(instance.get_dynamic_partitions(SOURCES.name)) if force
            else found.needing_work([dg.AssetKey(a) for a in selection] if selection else None, missing=not stale))
    summary: dict = {"partitions": found.partitions, "to_run": len(keys), "runs": 0, "failed_runs": [],
                     "problems": {}, "materializations": 0, "tag": None, "interrupted": False}

    rechunk = found.assets[dg.AssetKey("chunk_map")].stale.get(CODE_VERSION, [])
    if tag and keys and (selection is None or "chunk_map" in selection) and found.partitions and len(rechunk) == found.partitions:
        tagged = tag_current(resources["lancedb"], "before-rechunk")  # type: ignore[arg-type]
        if tagged:
            summary["tag"] = tagged[0]
            console.print(f"whole-corpus re-chunk: table version {tagged[1]} tagged [bold]{tagged[0]}[/] "
                          f"(`indx restore {tagged[0]}` brings it back)")
    console.print(f"{len(keys)} of {found.partitions} source(s) to run" + (f" ({', '.join(selection)})" if selection else ""))
    try:
        with Progress(TextColumn("[bold]backfill"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console) as progress:
            task = progress.add_task("backfill", total=len(keys))

            def done(batch) -> None:
                summary["runs"] += 1
                summary["materializations"] += batch.materialized
                if not batch.success:
                    summary["failed_runs"].append(batch.run_id)
                summary["problems"].update(batch.failed)
                progress.advance(task, len(batch.partitions))

            materialize_partitions(instance, settings, keys, batch_size=batch_size, selection=selection, on_batch=done,
                                   force=force, log_level="CRITICAL")  # failures are listed below, source by source
    except KeyboardInterrupt:
        summary["interrupted"] = True
        console.print("[yellow]interrupted: finished partitions are recorded; run the same command to resume[/]")
    summary["elapsed_s"] = round(time.perf_counter() - started, 2)
    if json_output:
        typer.echo(json.dumps(summary, ensure_ascii=False))
    else:
        for source_id, reason in summary["problems"].items():
            Console().print(f"[yellow]{escape(source_id)}: {escape(reason)}[/]")
        Console().print(f"{summary['runs']} run(s), {summary['materializations']} materializations in "
                        f"{summary['elapsed_s']} s" + (f"; [red]failed runs: {', '.join(summary['failed_runs'])}[/]"
                                                       if summary["failed_runs"] else ""))
    if summary["interrupted"]:
        raise typer.Exit(code=130)
    if summary["failed_runs"]:
        raise typer.Exit(code=1)
