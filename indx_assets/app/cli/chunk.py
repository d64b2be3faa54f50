"""`indx chunk FILE`: read and chunk one file with the installed chain, and show the result."""

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from indx_assets.app.cli import app
from indx_assets.pipeline.chain import CHAIN_ENV, ENTRY_POINT_GROUP, Chain, load_chain
from indx_assets.pipeline.document import Document, document_to_json
from indx_assets.pipeline.fidelity import UNSTRUCTURED_KEY
from indx_assets.pipeline.read_and_chunk import encode_file, to_document

#: A row of the chunk listing: page, locator, chunker, box or reason, text excerpt.
_ROW = "{:>5}  {:<22}  {:<8}  {:<27}  {}"


def _excerpt(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_document(document: Document, chain: Chain, console: Console) -> None:
    # Everything from the file (its name, its text, reader reasons) is escaped: text such as
    # "[/]" is Rich markup and would otherwise vanish or crash the printing.
    meta = document.metadata
    console.print(
        f"[bold]{escape(document.source_id)}[/]  {meta['media_type']}  status={meta['status']}"
        + (f"  ({escape(meta['reason'])})" if meta.get("reason") else "")
    )
    for page in meta["pages"]:
        # plain lines, written as they come: Rich renders each print (styles, wrapping), which
        # cost about as long as reading 100 pages for the 619 page lines of a rulebook
        reason = f" ({page['reason']})" if page["reason"] else ""
        console.file.write(f"  page {page['page']}: {page['status']} by {page['reader']}{reason}\n")
        if page.get(UNSTRUCTURED_KEY):
            console.print(f"    [yellow]part of its text is unstructured: {escape(page[UNSTRUCTURED_KEY])}[/]")
    if not chain.links:
        if chain.config.disabled:
            console.print(
                f"[yellow]No chunker is enabled: the chain config ({CHAIN_ENV}) disables every installed one "
                f"({', '.join(sorted(chain.config.disabled))}); nothing was chunked.[/]"
            )
        else:
            console.print(
                f"[yellow]No chunker is installed (entry-point group {ENTRY_POINT_GROUP} is empty): "
                "nothing was chunked.[/]"
            )
        return
    if not meta["pages"]:
        console.print("[yellow]No chunks: the readers produced no pages, so there was nothing to chunk.[/]")
        return
    if not document.chunks:
        console.print(f"[yellow]No chunks: no chunker claimed any page (chain: {', '.join(chain.names)}).[/]")
        return
    # One plain line per chunk in fixed columns, written at once: a Rich table measures and
    # wraps every cell, which took longer than reading and chunking a 619-page PDF (6 s for
    # its 3,139 chunks; this takes 0.01 s). Nothing here is markup, so nothing needs escaping.
    lines = [_ROW.format("page", "locator", "chunker", "bbox / reason", "text")]
    for c in document.chunks:
        where = ", ".join(f"{v:.3f}" for v in c.bbox) if c.bbox else (c.bbox_reason or "")
        text = _excerpt(c.content) if c.image is None else f"<image {len(c.image)} bytes>"
        lines.append(_ROW.format(str(c.page), c.locator, c.chunker, where, text))
    lines.append(f"{len(document.chunks)} chunks")
    console.file.write("\n".join(lines) + "\n")


@app.command()
def chunk(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="The file to chunk.")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the Document as one JSON object.")] = False,
    source_id: Annotated[str | None, typer.Option("--source-id", help="Stable id of the source (default: the file name).")] = None,
) -> None:
    """Read and chunk one file with the installed chunker chain. Exits 1 when no reader
    supports the file (status `unsupported`), naming the reason."""
    if source_id is not None and not source_id.strip():
        raise typer.BadParameter("must not be empty", param_hint="--source-id")
    chain = load_chain()  # a mistake in INDX_CHAIN is said in one line (`cli.errors`)
    encoded = encode_file(file, source_id=source_id, chain=chain)
    document = to_document(encoded)
    if json_output:
        typer.echo(json.dumps(document_to_json(document), ensure_ascii=False))
    else:
        _print_document(document, chain, Console())
    if document.metadata["status"] == "unsupported":
        typer.echo(f"Error: {file}: no reader supports it: {document.metadata.get('reason')}", err=True)
        raise typer.Exit(1)
