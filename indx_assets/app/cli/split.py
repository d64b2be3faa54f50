"""`indx split [FILE|-]`: the OpenSearch-style chunk tree of one document, as JSON.

Errors are reported the way the service reports them: one JSON object with `code` and
`message` on stdout, and a non-zero exit status.
"""

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from indx_assets.app.cli import app

#: File suffixes that pick a content type when --type is not given (anything else is text).
_SUFFIX_TYPES = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html", ".xhtml": "html"}
EXIT_INVALID = 2


def _emit(obj: dict[str, Any]) -> None:
    typer.echo(json.dumps(obj, ensure_ascii=False))


def _fail(code: str, message: str) -> None:
    _emit({"code": code, "message": message})
    raise typer.Exit(EXIT_INVALID)


@app.command()
def split(
    file: Annotated[str, typer.Argument(help="The document to split; '-' reads standard input.")] = "-",
    content_type: Annotated[
        str | None, typer.Option("--type", help="text, markdown or html (default: from the file suffix, else text).")
    ] = None,
    max_chunk_size: Annotated[int, typer.Option("--max-chunk-size", help="Largest leaf, in tokens or characters.")] = 300,
    compute_type: Annotated[str, typer.Option("--compute-type", help="token (MiniLM word pieces) or character.")] = "token",
    need_sentence: Annotated[bool, typer.Option("--need-sentence", help="Also list every sentence with its chunk.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Accepted for uniformity: the output is always JSON.")] = True,
) -> None:
    """Split one document into chunks, nodes, rich_texts and sentences (OpenSearch document-split shape)."""
    from indx_assets.pipeline.chunking.split import SplitError, split_document

    del json_output  # the service's shape is JSON; the flag exists so every indx command takes it
    if file == "-":
        content = sys.stdin.buffer.read()
    else:
        path = Path(file)
        try:
            content = path.read_bytes()
        except OSError as exc:
            _fail("InvalidParameter", f"cannot read {file}: {exc.strerror or exc}")
        content_type = content_type or _SUFFIX_TYPES.get(path.suffix.lower())
    try:
        result = split_document(
            content,
            content_type=content_type or "text",
            max_chunk_size=max_chunk_size,
            compute_type=compute_type,
            need_sentence=need_sentence,
        )
    except SplitError as exc:
        _fail(exc.code, exc.message)
    _emit(result)
