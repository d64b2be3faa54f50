"""`indx ingest [[LABEL=]PATH ...]`: register every source as a partition and materialize what changed."""

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from indx_assets.app.cli import app, freeze_heap
from indx_assets.app.cli.writer import holds_home
from indx_assets.wiring.settings import Settings

if TYPE_CHECKING:
    from indx_assets.app.runner import PartitionSync

#: `indx ingest` exit codes: everything ingested; some file failed or a root is missing; a usage error.
EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


@app.command()
@holds_home(creates=True)
def ingest(
    paths: Annotated[list[str] | None, typer.Argument(
        metavar="[[LABEL=]PATH]...",
        help="Files or folders to add as corpus roots, each labelled by its name unless given as LABEL=PATH "
             "(default: the roots ingested before, else the bundled sample corpus).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    batch_size: Annotated[int, typer.Option(min=1, help="Documents per Dagster run.")] = 100,
    force: Annotated[bool, typer.Option("--force", help="Re-read, re-cut and re-embed every document, fresh or not.")] = False,
    profile: Annotated[bool, typer.Option("--profile", help="Print where the time went: seconds in startup, read, OCR, "
                                          "chunk, model load, embed, write and orchestration (--json always has them).")] = False,
) -> None:
    """Ingest documents into the chunk index, re-doing only what is missing or changed (or all, with --force).

    Exit codes: 0 everything ingested; 1 some file failed or a corpus root is missing (its
    documents are kept); 2 a usage error (nothing is written).
    """
    from indx_assets.app.ingest import ingest as ingest_into
    from indx_assets.pipeline.stage_clock import since_process_start

    startup = since_process_start()  # the interpreter and its imports: part of what a user waits for

    console = Console(stderr=True, quiet=json_output)
    progress = Progress(TextColumn("[bold]ingesting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)

    def found(roots: Sequence[str], sync: "PartitionSync") -> None:  # the bar starts once the sources are known
        console.print(f"{len(sync.current)} source(s) under {', '.join(roots)}: {len(sync.added)} new, "
                      f"{len(sync.removed)} removed"
                      + (f", {len(sync.kept)} kept (not found, not known gone)" if sync.kept else ""))
        progress.add_task("ingest", total=len(sync.current))
        progress.start()
        freeze_heap()  # Dagster, the definitions and the instance are loaded, and live until exit

    try:  # a RootError is the user's: one line, exit 2 (`cli.errors`)
        summary = ingest_into(Settings.from_env(), paths or [], batch_size=batch_size, force=force, on_sync=found,
                              startup=startup,
                              on_batch=lambda batch: progress.advance(progress.task_ids[0], len(batch.partitions)))
    finally:
        progress.stop()
    if json_output:
        typer.echo(json.dumps(summary.to_json(), ensure_ascii=False))
    else:
        _print_summary(summary.to_json(), Console())
        if profile:
            _print_profile(summary.profile, Console())
    if not summary.complete:
        raise typer.Exit(code=EXIT_PROBLEMS)


def _print_profile(profile: dict[str, float], console: Console) -> None:
    wall = profile["wall"] or 1.0
    spent = ", ".join(f"{stage} {seconds:.2f} s ({seconds / wall:.0%})" for stage, seconds in profile.items() if stage != "wall")
    console.print(f"time:      {spent} of {profile['wall']:.2f} s", soft_wrap=True)


def _print_summary(summary: dict, console: Console) -> None:
    def counts(mapping: dict) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(mapping.items())) or "none"

    console.print(f"documents: {summary['documents']} ({counts(summary['documents_by_status'])})")
    console.print(f"pages:     {sum(summary['pages_by_status'].values())} ({counts(summary['pages_by_status'])})")
    console.print(f"chunks:    {summary['chunks']} by chunker: {counts(summary['chunks_by_chunker'])}")
    console.print(f"vectors:   {summary['vectors']} ({summary['unembedded_chunks']} image chunks unembedded)")
    for source_id, reason in summary["problems"].items():
        console.print(f"[yellow]{escape(source_id)}: {escape(reason)}[/]")
    for source_id, record in summary["below_fidelity"].items():
        example = next(iter(record["examples"]), None)
        said = f"; e.g. {example['kind']} {example['word']!r} at {example['locator']}" if example else ""
        console.print(f"[yellow]{escape(source_id)}: chunks below the word-fidelity thresholds on page(s) "
                      f"{', '.join(map(str, record['pages_below'][:10]))} ({record['foreign']} foreign, "
                      f"{record['lost']} lost words{escape(said)}); `indx verify` says more[/]")
    runs = f"{summary['runs']} run(s), {summary['materializations']} materializations"
    if summary["failed_runs"]:
        runs += f", [red]{len(summary['failed_runs'])} failed: {', '.join(summary['failed_runs'])}[/]"
    console.print(f"{runs} in {summary['elapsed_s']} s; data in {summary['home']}")
