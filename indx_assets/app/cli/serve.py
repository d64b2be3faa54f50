"""`indx serve`: the HTTP server (document split, search, chunking) on uvicorn."""

from typing import Annotated

import typer

from indx_assets.app.cli import app


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8080,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes (each loads the model once).")] = 1,
) -> None:
    """Serve the document-split API, search and chunking over HTTP."""
    import uvicorn

    from indx_assets.app.server.auth import check_bind, load_keys
    from indx_assets.app.server.turns import timeout_from_env
    from indx_assets.pipeline.chain import load_chain

    try:
        check_bind(host, load_keys())
        timeout_from_env()
        load_chain()  # each worker loads it again; a configuration mistake is said here, once
    except ValueError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(2) from None
    uvicorn.run("indx_assets.app.server.app:build", factory=True, host=host, port=port, workers=workers,
                log_level="info", proxy_headers=True)
