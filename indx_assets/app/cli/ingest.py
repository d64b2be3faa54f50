"""`indx ingest [[LABEL=]PATH ...]`: register every source as a partition and materialize what changed."""

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from indx_assets.app.cli import app
from indx_assets.app.cli.writer import holds_home
from indx_assets.pipeline.roots import Root, RootError, parse_root, parse_roots
from indx_assets.wiring.settings import SAMPLE_CORPUS, Settings, record_roots, recorded_roots

#: `indx ingest` exit codes: everything ingested; some file failed or a root is missing; a usage error.
EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def _argument_root(arg: str) -> tuple[Root, bool]:
    """A command-line root, `LABEL=PATH` or `PATH`, with its path resolved, and whether it was
    labelled (`RootError` if there is nothing there). A path whose name holds `=` stays a
    path when it exists."""
    root = parse_root(arg)
    labelled = root.path != arg
    if labelled and Path(arg).exists() and not Path(root.path).expanduser().exists():
        labelled = False
    path = Path(root.path if labelled else arg).expanduser()
    if not path.exists():
        raise RootError(f"{path}: no such file or folder")
    resolved = path.resolve()
    return Root(root.label if labelled else resolved.name, str(resolved)), labelled


def _roots(settings: Settings, args: list[str]) -> list[str]:
    """Corpus roots (specs): those recorded by earlier ingests plus the new ones (the sample
    corpus when there are none), so every known source stays known. `RootError` when two
    would share a label or a recorded folder is given another label."""
    roots = parse_roots(recorded_roots(settings.home))
    for root, labelled in map(_argument_root, args):
        same = next((r for r in roots if r.path == root.path), None)
        if same is None:
            roots.append(root)
        elif labelled and same.label != root.label:
            raise RootError(f"{root.path} is already the root labelled {same.label!r}; "
                            f"`indx forget {same.label}` before giving it another label")
    specs = [r.spec for r in roots] or [Root(SAMPLE_CORPUS.name, str(SAMPLE_CORPUS)).spec]
    parse_roots(specs)  # refuses two roots with one label, or one inside another
    return specs


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
) -> None:
    """Ingest documents into the chunk index, re-doing only what is missing or changed (or all, with --force).

    Exit codes: 0 everything ingested; 1 some file failed or a corpus root is missing (its
    documents are kept); 2 a usage error (nothing is written).
    """
    from indx_assets.app.analytics import ingest_summary
    from indx_assets.app.runner import materialize_partitions, open_instance, sync_partitions

    started = time.perf_counter()
    settings = Settings.from_env()
    roots = _roots(settings, paths or [])  # RootError: one line, exit 2 (`cli.errors`)
    settings = replace(settings, corpus_roots=tuple(roots))
    console = Console(stderr=True, quiet=json_output)
    instance = open_instance(settings)
    record_roots(settings.home, roots)
    sync = sync_partitions(instance, settings)
    console.print(
        f"{len(sync.current)} source(s) under {', '.join(settings.corpus_roots)}: "
        f"{len(sync.added)} new, {len(sync.removed)} removed" + (f", {len(sync.kept)} kept (not found, not known gone)"
                                                                   if sync.kept else "")
    )
    with Progress(
        TextColumn("[bold]ingesting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        task = progress.add_task("ingest", total=len(sync.current))
        # The summary names every failed source and why; Dagster's own log of a failed run
        # (a traceback per run) stays in the instance, for `dagster dev`.
        results = materialize_partitions(
            instance, settings, sync.current, batch_size=batch_size, force=force, log_level="CRITICAL",
            on_batch=lambda batch: progress.advance(task, len(batch.partitions)),
        )
    failed = {s: why for r in results for s, why in r.failed.items()}
    summary = ingest_summary(settings.storage_uri, sync.current, failed)
    summary["problems"].update(_corpus_problems(sync))
    summary.update(
        added=len(sync.added),
        removed=len(sync.removed),
        kept=len(sync.kept),
        missing_roots=sync.missing_roots,
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
    if summary["failed_runs"] or summary["missing_roots"] or sync.unlisted:
        raise typer.Exit(code=EXIT_PROBLEMS)


def _corpus_problems(sync) -> dict[str, str]:
    """What the listing could not see, by where: missing roots (by label) and folders that
    could not be listed (by their id prefix), each with the documents it keeps."""
    problems = {}
    for root in map(parse_root, sync.missing_roots):
        kept = sum(1 for s in sync.kept if s == root.label or s.startswith(root.prefix))
        problems[root.label] = f"corpus root missing: {root.path}; its {kept} document(s) are kept (`indx forget {root.label}` removes them)"
    for prefix, reason in sync.unlisted.items():
        kept = sum(1 for s in sync.kept if s.startswith(prefix))
        problems[prefix] = f"{reason}; its {kept} document(s) are kept"
    return problems


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
