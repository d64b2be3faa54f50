"""`indx restore TAG`: bring the LanceDB chunk table back to a tagged version."""

import json
from typing import Annotated

import typer
from rich.console import Console

from indx_assets.app.cli import app
from indx_assets.wiring.settings import Settings


@app.command()
def restore(
    tag: Annotated[str | None, typer.Argument(help="The tag (`indx backfill` prints it); omit to list tags.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Restore the search table to the version tagged TAG (e.g. the one before a re-chunk)."""
    from indx_assets.app.table_versions import restore as restore_tag
    from indx_assets.app.table_versions import tags
    from indx_assets.wiring.definitions import build_resources

    lancedb = build_resources(Settings.from_env().require_home())["lancedb"]
    if tag is None:
        known = tags(lancedb)  # type: ignore[arg-type]
        typer.echo(json.dumps(known) if json_output else "\n".join(f"{n}\tversion {v}" for n, v in sorted(known.items())) or "no tags")
        return
    try:
        result = restore_tag(lancedb, tag)  # type: ignore[arg-type]
    except KeyError as exc:
        Console(stderr=True).print(f"[red]{exc.args[0]}[/]")
        raise typer.Exit(code=2) from None
    if json_output:
        typer.echo(json.dumps(result))
    else:
        Console().print(f"restored {tag} (version {result['tagged_version']}) as version {result['version']}: "
                        f"{result['rows']} rows. Stored outputs still describe the newest chunk map; "
                        "reinstall the old chain and run `indx backfill --stale` to make them agree.")
