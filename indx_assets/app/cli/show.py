"""`indx show FILE --page N [--out page.png]`: a picture of how one page was cut.

Reads and chunks the file with the installed chain, draws every chunk's box on the page,
numbered in reading order (number k is the page's `chunk:{k-1}`), writes the PNG and lists
the numbered chunks.
"""

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from indx_assets.app.cli import app
from indx_assets.pipeline.chunk_picture import DEFAULT_DPI, render_chunk_picture
from indx_assets.pipeline.document import chunk_to_json
from indx_assets.pipeline.read_and_chunk import encode_file, to_document


@app.command()
def show(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="The file to look at.")],
    page: Annotated[int, typer.Option("--page", "-p", min=1, help="1-based page (slide) number.")] = 1,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Where to write the PNG (default: FILE-stem.pN.png here).")] = None,
    dpi: Annotated[int, typer.Option("--dpi", min=24, max=600, help="Resolution of the page picture.")] = DEFAULT_DPI,
    json_output: Annotated[bool, typer.Option("--json", help="Print the page's chunks and the picture's path as JSON.")] = False,
) -> None:
    """Draw the page with every chunk's box, numbered in reading order, and write it as a PNG."""
    console = Console()
    encoded = encode_file(file)
    document = to_document(encoded)
    pages = {p["page"]: p for p in document.metadata["pages"]}
    if page not in pages:
        console.print(f"[red]{file.name} has no page {page} (status {document.metadata['status']}"
                      + (f": {document.metadata['reason']}" if document.metadata.get("reason") else "") + ").[/]")
        raise typer.Exit(1)
    chunks = [c for c in document.chunks if c.page == page]
    picture = render_chunk_picture(file.read_bytes(), encoded.media_type, page, chunks, dpi=dpi)
    if picture is None:
        console.print(f"[red]Page {page} of {file.name} cannot be pictured.[/]")
        raise typer.Exit(1)
    target = out or Path(f"{file.stem}.p{page}.png")
    target.write_bytes(picture)
    info = pages[page]
    if json_output:
        chunk_json = [chunk_to_json(c) for c in chunks]
        typer.echo(json.dumps({"source_id": document.source_id, "page": info, "picture": str(target), "chunks": chunk_json}))
        return
    console.print(f"[bold]{file.name}[/] page {page}: {info['status']} by {info['reader']}, {len(chunks)} chunks → {target}")
    table = Table(show_edge=False)
    for column in ("#", "chunker", "type", "bbox / reason", "text"):
        table.add_column(column, overflow="ellipsis", no_wrap=True, max_width=48 if column == "text" else None)
    for number, c in enumerate(chunks, start=1):
        where = ", ".join(f"{v:.3f}" for v in c.bbox) if c.bbox else (c.bbox_reason or "")
        text = " ".join(c.content.split())[:70] if c.image is None else f"<image {len(c.image)} bytes>"
        table.add_row(str(number), c.chunker, c.chunk_type, where, text)
    console.print(table)
