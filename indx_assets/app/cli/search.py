"""`indx search "QUERY"` (or `--image FILE`): ranked hits from the LanceDB chunk table, or from a
running `indx serve` (text queries only)."""

import io
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from indx_assets.app.cli import app
from indx_assets.app.cli.errors import UserError
from indx_assets.app.excerpts import highlight, query_terms, term_spans
from indx_assets.app.search import MAX_K, Hit, SearchFilters, check_search, search_chunks
from indx_assets.pipeline.schema import SearchMode
from indx_assets.wiring.settings import Settings

SERVER_ENV = "INDX_SERVER"
#: The key `indx search` sends to a server that wants one (`INDX_API_KEYS` is the server's list).
API_KEY_ENV = "INDX_API_KEY"


def _search_server(server: str, body: dict[str, Any]) -> list[Hit] | None:
    """The server's hits, or None when nothing answers there (the caller searches in-process)."""
    request = urllib.request.Request(
        server.rstrip("/") + "/v1/search", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 **({"Authorization": f"Bearer {os.environ[API_KEY_ENV]}"} if os.environ.get(API_KEY_ENV) else {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return [Hit.from_json(hit) for hit in json.load(response)["hits"]]
    except urllib.error.HTTPError as exc:  # the server answered: its word is final
        try:
            message = json.load(exc).get("message", exc.reason)
        except (ValueError, AttributeError):
            message = exc.reason
        raise UserError(f"{server} refused the search ({exc.code}): {message}", exit_code=1) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        print(f"indx: no server at {server} ({reason}); searching in-process", file=sys.stderr)
        return None


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for (may be left out with --image).")] = "",
    k: Annotated[int, typer.Option("--top-k", "-k", min=1, max=MAX_K, help="How many hits.")] = 5,
    mode: Annotated[SearchMode, typer.Option(
        "--mode", help="hybrid (vector and full text, fused; score: rrf), vector (score: cosine) or fts (score: bm25).")
    ] = "hybrid",
    expand: Annotated[bool, typer.Option("--expand", help="Show each hit's section: the chunks around it.")] = False,
    source: Annotated[str | None, typer.Option("--source", help="Only sources whose id starts with this.")] = None,
    chunk_type: Annotated[str | None, typer.Option("--type", help="Only chunks of this type (content, table, image, …).")] = None,
    page: Annotated[int | None, typer.Option("--page", min=1, help="Only chunks of this page.")] = None,
    server: Annotated[str | None, typer.Option("--server", envvar=SERVER_ENV,
                                               help="A running `indx serve` to ask (e.g. http://127.0.0.1:8080).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
    image: Annotated[Path | None, typer.Option("--image", help="Search by this picture (needs an embedder of images, "
                                                                "INDX_EMBEDDER=clip:DIR).")] = None,
) -> None:
    """Search the chunk index: each hit's best-matching sentences, the query's terms marked; or
    by a picture (`--image`, vector mode)."""
    picture = _picture(image) if image is not None else None
    check_search(query, k, mode, image=picture is not None)  # before the model loads: a blank query is said at once
    hits = None
    if server and picture is None:
        hits = _search_server(server, {"query": query, "k": k, "mode": mode, "expand": expand,
                                       "source_prefix": source, "chunk_type": chunk_type, "page": page})
    where = server
    if hits is None:
        settings = Settings.from_env()
        filters = SearchFilters(source_prefix=source, chunk_type=chunk_type, page=page)
        hits = search_chunks(settings, query, k=k, mode=mode, expand=expand, filters=filters, image=picture)
        where = str(settings.home)
    if json_output:
        typer.echo(json.dumps([hit.to_json() for hit in hits], ensure_ascii=False))
        return
    _print_hits(hits, query, expand, where, Console(highlight=False, soft_wrap=True))


def _picture(path: Path) -> bytes:
    """The picture's bytes, or a one-line refusal of a file that is missing or no picture."""
    from PIL import Image, UnidentifiedImageError

    try:
        data = path.read_bytes()
        with Image.open(io.BytesIO(data)) as picture:
            picture.verify()
    except (UnidentifiedImageError, SyntaxError, ValueError):  # UnidentifiedImageError is an OSError: first
        raise typer.BadParameter(f"{path} is not a picture Pillow can read", param_hint="--image") from None
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror or exc}", param_hint="--image") from None
    return data


#: How the query's terms are marked where the output is not a terminal (a pipe, a file, a log).
PLAIN_MARK = ("**", "**")


def _marked(text: str, query: str, console: Console) -> Text:
    """`text` with the query's terms in bold on a terminal, between `PLAIN_MARK`s elsewhere."""
    if not console.is_terminal:
        return Text(highlight(text, query, PLAIN_MARK))
    out = Text(text)
    for s, e in term_spans(text, query_terms(query)):
        out.stylize("bold", s, e)
    return out


def _print_hits(hits: list[Hit], query: str, expand: bool, where: str | None, console: Console) -> None:
    if not hits:
        console.print(f"no hits in {where} (try another mode or fewer filters; `indx status` shows what is ingested)",
                      markup=False)
    for rank, hit in enumerate(hits, start=1):
        place = "  ".join(filter(None, (hit.source_id, f"page {hit.page}" if hit.page is not None else None, hit.locator)))
        header = Text.assemble((f"{rank}. ", "bold"), (place, "bold"), f"  {hit.score_scale} {hit.score:.4g}")
        if hit.chunk_type != "content":
            header.append(f"  ({hit.chunk_type})")
        console.print(header)
        console.print(Text("   ").append_text(_marked(hit.excerpt, query, console)))
        if hit.sentence is not None:
            console.print(Text(f"   found by its sentence {hit.sentence.locator}", style="dim"))
        if expand and hit.section is not None and len(hit.section) > 1:
            title = hit.metadata.get("section_title") or "its section"
            console.print(Text(f"   in {title!r}, {len(hit.section)} chunks:", style="dim"))
            for chunk in hit.section:
                mark = "▸" if chunk.id == hit.id else "·"
                console.print(Text(f"     {mark} {chunk.locator}  {' '.join(chunk.content.split())[:100]}"))
