"""`indx forget ROOT`: remove a corpus root's documents from every asset and the table.

A root that is missing keeps its documents (`indx ingest` exits 1 and says so) until the
user says it is gone for good: this command. ROOT is a label or a path.
"""

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from indx_assets.app.cli import app
from indx_assets.app.cli.ingest import EXIT_PROBLEMS, EXIT_USAGE
from indx_assets.app.cli.writer import holds_home
from indx_assets.pipeline.roots import Root, parse_roots
from indx_assets.wiring.settings import Settings, recorded_roots


def _find(root: str, roots: list[Root]) -> Root | None:
    """The recorded root with this label, or at this path."""
    for candidate in roots:
        if root == candidate.label:
            return candidate
    resolved = str(Path(root).expanduser().resolve())
    return next((r for r in roots if r.path in (root, resolved)), None)


@app.command()
@holds_home
def forget(
    root: Annotated[str, typer.Argument(metavar="ROOT", help="The root's label or path.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask first.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print what was removed as JSON.")] = False,
) -> None:
    """Remove a corpus root's documents from every asset and the chunk table, and stop ingesting it."""
    from indx_assets.app.runner import forget_root, open_instance, root_sources

    settings = Settings.from_env()
    roots = parse_roots(recorded_roots(settings.home), overlapping=True)
    found = _find(root, roots)
    if found is None:
        known = ", ".join(r.spec for r in roots) or "none"
        typer.echo(f"indx forget: {root} is not a corpus root (roots: {known})", err=True)
        raise typer.Exit(code=EXIT_USAGE)
    instance = open_instance(settings)
    sources = root_sources(instance, found)
    if not yes and not typer.confirm(
            f"Remove {len(sources)} document(s) of root {found.label} ({found.path}) from the index?", err=True):
        typer.echo("nothing removed", err=True)
        raise typer.Exit(code=EXIT_PROBLEMS)
    gone = forget_root(instance, settings, found)
    if json_output:
        typer.echo(json.dumps({"root": found.label, "path": found.path, "removed": len(gone)}, ensure_ascii=False))
    else:
        Console().print(f"root {found.label} ({found.path}) forgotten: {len(gone)} document(s) removed")
