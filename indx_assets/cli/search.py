"""`indx search "QUERY"`: ranked hits from the LanceDB chunk table."""

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from indx_assets.cli import app


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", min=1, help="How many hits.")] = 5,
    mode: Annotated[str, typer.Option(help="hybrid (vector + full text, fused), vector or fts.")] = "hybrid",
    expand: Annotated[bool, typer.Option("--expand", help="Show each hit's section: the chunks around it.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
) -> None:
    """Search the chunk index."""
    from indx_assets.search import search_chunks
    from indx_assets.settings import Settings

    if mode not in ("hybrid", "vector", "fts"):
        raise typer.BadParameter("mode must be hybrid, vector or fts", param_hint="--mode")
    hits = search_chunks(Settings.from_env(), query, k=k, mode=mode, expand=expand)  # type: ignore[arg-type]
    if json_output:
        typer.echo(json.dumps(hits, ensure_ascii=False))
        return
    console = Console()
    if not hits:
        console.print("no hits (has anything been ingested? try `indx ingest`)")
    for rank, hit in enumerate(hits, start=1):
        excerpt = " ".join((hit["text"] or "").split())[:160]
        console.print(
            f"[bold]{rank}. {escape(hit['source_id'])}[/] page {hit['page']}  {hit['locator']}  score {hit['score']:.4f}"
        )
        console.print(f"   {excerpt}", markup=False)  # chunk text is data: "[/]" in it is not markup
        if hit["sentence"]:
            console.print(f"   [dim]found by its sentence {hit['sentence']['locator']}:[/] {escape(hit['sentence']['text'][:120])}")
        if expand and len(hit["section"]) > 1:
            title = hit["metadata"].get("section_title") or "its section"
            console.print(f"   [dim]in {escape(repr(title))}, {len(hit['section'])} chunks:[/]")
            for chunk in hit["section"]:
                mark = "▸" if chunk["id"] == hit["id"] else "·"
                console.print(f"     {mark} {chunk['locator']}  {' '.join((chunk['text'] or '').split())[:100]}", markup=False)
