"""`indx verify [PATH ...]`: whether the chunks hold their pages' words, whole (`fidelity`).

Without paths it checks what the data directory stores (page outputs against chunk maps);
with paths it reads and cuts those files (folders: every file below them) with the installed
chain, as `indx chunk` does, and checks that. Exit code 1 when a document falls below the
thresholds, 0 otherwise.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from indx_assets.app.cli import app
from indx_assets.pipeline.fidelity import MIN_KEPT, DocumentFidelity, totals

if TYPE_CHECKING:
    from indx_assets.pipeline.chain import Chain


def _cut(paths: list[Path], chain: "Chain") -> Iterator[DocumentFidelity]:
    """Each file under `paths`, read and cut with `chain`, measured. A file's source id is the
    one `indx ingest` would give it: `{folder name}/{path below the folder}` (its name when
    given itself)."""
    from indx_assets.pipeline.fidelity import measure
    from indx_assets.pipeline.read_and_chunk import encode_bytes, page_origins, to_document
    from indx_assets.wiring.resources.corpus import CorpusResource

    for source_id, path in CorpusResource(roots=[str(p) for p in paths]).iter_sources():
        encoded = encode_bytes(path.read_bytes(), source_id=source_id, name=path.name, chain=chain)
        yield measure(source_id, encoded.read.pages, to_document(encoded).chunks, page_origins(encoded.read))


def _print(documents: list[DocumentFidelity], console: Console) -> None:
    table = Table(show_edge=False, caption="sub/sup: sub/superscript notation (not foreign); dup.: duplicated")
    table.add_column("document", overflow="fold", min_width=16, ratio=3)
    for column in ("pages", "words", "foreign", "sub/sup", "lost", "dup."):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("verdict", overflow="fold", ratio=2)
    for d in documents:
        t = d.totals()
        verdict = "ok" if d.passes else f"[red]below on page(s) {', '.join(map(str, d.failing_pages[:10]))}" + (
            " …" if len(d.failing_pages) > 10 else "") + "[/]"
        table.add_row(escape(d.source_id), str(len(d.pages)), *(str(t[k]) for k in ("words", "foreign", "notation", "lost", "duplicated")), verdict)
    console.print(table)
    for d in documents:
        for page in d.pages:
            if page.passes:
                continue
            for e in page.examples:
                if e.kind in ("foreign", "lost"):
                    console.print(f"  {escape(d.source_id)} page {page.page}: {e.kind} [bold]{escape(e.word)}[/] "
                                  f"at {escape(e.locator)}: …{escape(e.context)}…")
            break  # the first page below the thresholds says enough; --json lists them all
    s = totals(documents)
    console.print(f"{s['documents']} document(s), {s['pages']} page(s), {s['words']} words: {s['foreign']} foreign, "
                  f"{s['notation']} sub/superscript notation, {s['lost']} lost, {s['duplicated']} duplicated; "
                  f"{s['documents_below']} document(s) below the thresholds (0 foreign, {MIN_KEPT:.0%} of each page's words kept)")


@app.command()
def verify(
    paths: Annotated[list[Path] | None, typer.Argument(exists=True, help="Files or folders to cut and check (default: what the data directory stores).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Check that every chunk word is a word of its page and every page word is in a chunk."""
    if paths:
        from indx_assets.pipeline.chain import load_chain

        documents = list(_cut(paths, load_chain()))
    else:
        from indx_assets.app.analytics import stored_fidelity
        from indx_assets.wiring.settings import Settings

        settings = Settings.from_env().require_home()
        documents = list(stored_fidelity(settings.storage_uri))
        if not documents and not json_output:
            Console().print(f"nothing ingested yet under {settings.storage_uri}")
    if json_output:
        typer.echo(json.dumps({"documents": [d.to_json() for d in documents], "totals": totals(documents)}, ensure_ascii=False))
    elif documents:
        _print(documents, Console())
    if not all(d.passes for d in documents):
        raise typer.Exit(1)
