"""`indx status`: per asset, how many partitions are missing, stale (and why) and fresh."""

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from indx_assets.app.cli import app
from indx_assets.wiring.settings import Settings


@app.command()
def status(json_output: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False) -> None:
    """Missing, stale and fresh partitions of every ingestion asset, in one paged scan."""
    from indx_assets.app.runner import open_instance
    from indx_assets.wiring.assets.status import code_versions, corpus_status
    from indx_assets.wiring.definitions import build_definitions, build_resources
    from indx_assets.wiring.resources.source_index import SourceIndex

    settings = Settings.from_env().require_home()
    instance = open_instance(settings)
    corpus = build_resources(settings)["corpus"]
    result = corpus_status(instance, code_versions(build_definitions(settings)), SourceIndex(corpus.index))  # type: ignore[attr-defined]
    summary = result.to_json()
    if json_output:
        typer.echo(json.dumps(summary))
        return
    table = Table("asset", "missing", "stale", "fresh", "stale because", title=f"{summary['partitions']} source(s)")
    for asset, counts in summary["assets"].items():
        causes = ", ".join(f"{cause}: {n}" for cause, n in counts["stale_by_cause"].items())
        table.add_row(asset, str(counts["missing"]), str(counts["stale"]), str(counts["fresh"]), causes)
    Console().print(table)
