"""`indx stats`: corpus statistics read straight from the stored Parquet dataset."""

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from indx_assets.app.cli import app
from indx_assets.wiring.settings import Settings


@app.command()
def stats(json_output: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False) -> None:
    """Chunks per document, chunk sizes, chunks per chunker, pages without chunks, unembedded chunks."""
    from indx_assets.app.analytics import corpus_stats

    settings = Settings.from_env().require_home()
    result = corpus_stats(settings.storage_uri)
    if json_output:
        typer.echo(json.dumps(result, ensure_ascii=False))
        return
    console = Console()
    if not result["documents"]:
        console.print(f"nothing ingested yet under {settings.storage_uri}")
        return
    console.print(f"{result['documents']} documents, {result['pages']} pages, {result['chunks']} chunks")
    table = Table("distribution", "count", "min", "mean", "p50", "p90", "p99", "max")
    for name in ("chunks_per_document", "chunk_characters"):
        d = result[name]
        table.add_row(name.replace("_", " "), *(str(d.get(k, "")) for k in ("count", "min", "mean", "p50", "p90", "p99", "max")))
    console.print(table)
    shares = Table("chunker", "chunks", "share")
    for chunker, s in result["chunks_by_chunker"].items():
        shares.add_row(chunker, str(s["chunks"]), f"{s['share']:.1%}")
    console.print(shares)
    by_status = ", ".join(f"{k} {v}" for k, v in sorted(result["pages_without_chunks_by_status"].items()))
    console.print(f"pages without chunks: {result['pages_without_chunks']}" + (f" ({by_status})" if by_status else ""))
    console.print(f"chunks without a vector: {result['unembedded_chunks']} {result['unembedded_chunks_by_type'] or ''}")
