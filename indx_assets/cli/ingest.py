"""`indx ingest [PATH ...]`: register every source as a partition and materialize what changed."""

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from indx_assets.cli import app
from indx_assets.cli.writer import holds_home
from indx_assets.settings import SAMPLE_CORPUS, Settings, record_roots, recorded_roots


def _roots(settings: Settings, paths: list[Path]) -> list[str]:
    """Corpus roots: those recorded by earlier ingests plus the new ones (the sample corpus
    when there are none), so every known source stays known."""
    roots = list(recorded_roots(settings.home))
    for path in paths:
        if str(path.resolve()) not in roots:
            roots.append(str(path.resolve()))
    return roots or [str(SAMPLE_CORPUS)]


@app.command()
@holds_home
def ingest(
    paths: Annotated[list[Path] | None, typer.Argument(exists=True, help="Files or folders (default: the bundled sample corpus).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    batch_size: Annotated[int, typer.Option(min=1, help="Documents per Dagster run.")] = 100,
    force: Annotated[bool, typer.Option("--force", help="Re-read, re-cut and re-embed every document, fresh or not.")] = False,
) -> None:
    """Ingest documents into the chunk index, re-doing only what is missing or changed (or all, with --force)."""
    from indx_assets.analytics import ingest_summary
    from indx_assets.runner import materialize_partitions, open_instance, sync_partitions

    started = time.perf_counter()
    settings = Settings.from_env()
    settings = replace(settings, corpus_roots=tuple(_roots(settings, paths or [])))
    record_roots(settings.home, list(settings.corpus_roots))
    console = Console(stderr=True, quiet=json_output)
    instance = open_instance(settings)
    sync = sync_partitions(instance, settings)
    console.print(
        f"{len(sync.current)} source(s) under {', '.join(settings.corpus_roots)}: "
        f"{len(sync.added)} new, {len(sync.removed)} removed"
    )
    with Progress(
        TextColumn("[bold]ingesting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        task = progress.add_task("ingest", total=len(sync.current))
        results = materialize_partitions(
            instance, settings, sync.current, batch_size=batch_size, force=force,
            on_batch=lambda batch: progress.advance(task, len(batch.partitions)),
        )
    summary = ingest_summary(settings.storage_uri, sync.current)
    summary.update(
        added=len(sync.added),
        removed=len(sync.removed),
        runs=len(results),
        failed_runs=[r.run_id for r in results if not r.success],
        materializations=sum(r.materialized for r in results),
        elapsed_s=round(time.perf_counter() - started, 2),
        home=str(settings.home),
    )
    if json_output:
        typer.echo(json.dumps(summary, ensure_ascii=False))
    else:
        _print_summary(summary, Console())
    if summary["failed_runs"]:
        raise typer.Exit(code=1)


def _print_summary(summary: dict, console: Console) -> None:
    def counts(mapping: dict) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(mapping.items())) or "none"

    console.print(f"documents: {summary['documents']} ({counts(summary['documents_by_status'])})")
    console.print(f"pages:     {sum(summary['pages_by_status'].values())} ({counts(summary['pages_by_status'])})")
    console.print(f"chunks:    {summary['chunks']} by chunker: {counts(summary['chunks_by_chunker'])}")
    console.print(f"vectors:   {summary['vectors']} ({summary['unembedded_chunks']} image chunks unembedded)")
    for source_id, reason in summary["problems"].items():
        console.print(f"[yellow]{source_id}: {reason}[/]")
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
