"""`indx search "QUERY"`: ranked hits from the LanceDB chunk table, or from a running `indx serve`."""

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from indx_assets.app.cli import app

SERVER_ENV = "INDX_SERVER"
#: The key `indx search` sends to a server that wants one (`INDX_API_KEYS` is the server's list).
API_KEY_ENV = "INDX_API_KEY"


def _search_server(server: str, body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The server's hits, or None when nothing answers there (the caller searches in-process)."""
    request = urllib.request.Request(
        server.rstrip("/") + "/v1/search", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 **({"Authorization": f"Bearer {os.environ[API_KEY_ENV]}"} if os.environ.get(API_KEY_ENV) else {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)["hits"]
    except urllib.error.HTTPError as exc:  # the server answered: its word is final
        try:
            message = json.load(exc).get("message", exc.reason)
        except (ValueError, AttributeError):
            message = exc.reason
        typer.echo(f"Error: {server} refused the search ({exc.code}): {message}", err=True)
        raise typer.Exit(1) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        print(f"indx: no server at {server} ({reason}); searching in-process", file=sys.stderr)
        return None


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[int, typer.Option("-k", min=1, help="How many hits.")] = 5,
    mode: Annotated[str, typer.Option(help="hybrid (vector + full text, fused), vector or fts.")] = "hybrid",
    expand: Annotated[bool, typer.Option("--expand", help="Show each hit's section: the chunks around it.")] = False,
    source: Annotated[str | None, typer.Option("--source", help="Only sources whose id starts with this.")] = None,
    chunk_type: Annotated[str | None, typer.Option("--type", help="Only chunks of this type (content, table, image, …).")] = None,
    page: Annotated[int | None, typer.Option("--page", min=1, help="Only chunks of this page.")] = None,
    server: Annotated[str | None, typer.Option("--server", envvar=SERVER_ENV,
                                               help="A running `indx serve` to ask (e.g. http://127.0.0.1:8080).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
) -> None:
    """Search the chunk index."""
    if mode not in ("hybrid", "vector", "fts"):
        raise typer.BadParameter("mode must be hybrid, vector or fts", param_hint="--mode")
    hits = None
    if server:
        hits = _search_server(server, {"query": query, "k": k, "mode": mode, "expand": expand,
                                       "source_prefix": source, "chunk_type": chunk_type, "page": page})
    if hits is None:
        from indx_assets.app.search import SearchFilters, search_chunks
        from indx_assets.wiring.settings import Settings

        filters = SearchFilters(source_prefix=source, chunk_type=chunk_type, page=page)
        hits = search_chunks(Settings.from_env(), query, k=k, mode=mode, expand=expand,  # type: ignore[arg-type]
                             filters=filters)
    if json_output:
        typer.echo(json.dumps(hits, ensure_ascii=False))
        return
    _print_hits(hits, expand, Console())


def _print_hits(hits: list[dict[str, Any]], expand: bool, console: Console) -> None:
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
