"""The HTTP app: the document-split service (seed 001), search and chunking of one data directory.

The model, the tokenizer and the LanceDB connection are opened once, in the background, as the
server starts: `/healthz` answers at once, `/readyz` once they are ready. The table is opened
anew for each search (well under a millisecond), so a version an ingest commits is searched
without a restart.
"""

import base64
import binascii
import logging
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Annotated, Any

import anyio
from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from indx_assets.app.server import errors
from indx_assets.app.server.auth import load_keys, require_key
from indx_assets.app.server.errors import ApiError, latency_ms, request_id
from indx_assets.app.server.limits import BodyLimit
from indx_assets.app.server.models import SearchRequest, SplitRequest, parse_body
from indx_assets.app.server.turns import Turns, timeout_from_env
from indx_assets.wiring.settings import Settings

log = logging.getLogger(__name__)

#: The splitters a `service_id` may name; the seed's is the default one.
SPLIT_SERVICES = ("ops-document-split-001",)


@dataclass
class Warm:
    """What the server opens once: the tokenizer, the query embedder and the index."""

    settings: Settings
    tokenizer: Any = None
    embed: Any = None
    lancedb: Any = None
    error: str | None = None
    ready: threading.Event = field(default_factory=threading.Event)
    # Every query goes through the model on this one thread: the model already uses every core
    # for one query, and torch keeps per-thread state (an OpenMP team, allocator arenas) for each
    # thread that calls it. 600 searches from 8 then 32 clients grew the server from 944 to
    # 1,241 MB when each request thread took a lock to call the model; 941 to 1,028 MB so.
    _model_thread: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="indx-model"))

    def load(self) -> None:
        try:
            from indx_assets.app.search import query_embedder
            from indx_assets.pipeline.embedders.registry import sizing_tokenizer
            from indx_assets.wiring.resources.lancedb import LanceDBResource

            self.tokenizer = sizing_tokenizer()
            embed = replace(query_embedder(), run=lambda work: self._model_thread.submit(work).result())
            embed("warm up")  # load the weights now, not on the first query
            self.embed = embed
            self.lancedb = LanceDBResource(uri=self.settings.lancedb_uri)
            self.ready.set()
        except Exception as exc:  # reported by /readyz; the split service still answers
            log.exception("the server could not load its model or index")
            self.error = f"{type(exc).__name__}: {exc}"

    def require(self) -> None:
        if not self.ready.is_set():
            raise ApiError(503, self.error or "the server is still loading its model and index; retry shortly")


def create_app(settings: Settings | None = None, api_keys: tuple[str, ...] | None = None,
               body_timeout: float | None = None) -> FastAPI:
    """The ASGI app (uvicorn's factory). Without arguments it reads the environment as `indx` does."""
    from indx_assets.pipeline.chain import load_chain

    settings = settings or Settings.from_env()
    warm = Warm(settings)
    chain = load_chain()  # a bad INDX_CHAIN stops the server here, with its message

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        threading.Thread(target=warm.load, name="indx-warm-up", daemon=True).start()
        yield

    app = FastAPI(title="indx-assets", version=_version(), lifespan=lifespan,
                  summary="Document split (OpenSearch-compatible), search and chunking over one indx data directory.")
    app.state.api_keys = load_keys() if api_keys is None else api_keys
    app.state.warm = warm
    # Splitting and chunking hold the GIL, so one at a time a process is as fast as several at
    # once and holds one's working memory instead of several: 16 splits of a 1 MB document from
    # 8 clients grew the server by 557 MB and took 50 s on 2 cores when all ran at once; by 31 MB
    # and 45 s so. More throughput comes from more processes (`indx serve --workers`).
    turns = Turns(timeout=timeout_from_env() if body_timeout is None else body_timeout)
    errors.install(app)
    _name_bodies(app, SplitRequest)
    keyed = [Depends(require_key)]

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        """200 as soon as the server accepts requests."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"])
    def readyz(request: Request) -> JSONResponse:
        """200 once the model is loaded and the index open; 503 until then."""
        if not warm.ready.is_set() or warm.lancedb.existing_table() is None:
            reason = warm.error or ("loading the model" if not warm.ready.is_set() else "no index yet: run `indx ingest`")
            return errors.error_response(request, 503, reason)
        return JSONResponse({"status": "ready"})

    @app.post("/v3/openapi/workspaces/{workspace_name}/document-split/{service_id}", dependencies=keyed,
              tags=["document-split"], openapi_extra=_json_body(SplitRequest))
    async def document_split(workspace_name: str, service_id: str, request: Request) -> JSONResponse:
        """Split a document into chunks, nodes, rich_texts and sentences (seed 001)."""
        del workspace_name  # any workspace is accepted: one server is one workspace
        if service_id not in SPLIT_SERVICES:
            raise ApiError(404, f"no document-split service {service_id!r}; this server has {', '.join(SPLIT_SERVICES)}")
        content_type = request.headers.get("content-type")
        async with turns.body(request) as raw:
            result, tokens = await anyio.to_thread.run_sync(_split, warm, raw, content_type, limiter=turns.cpu)
        # plain JSON values already: a JSONResponse skips FastAPI's copy of them (megabytes for a 1 MB document)
        return JSONResponse({"request_id": request_id(request), "latency": latency_ms(request),
                             "usage": {"token_count": tokens}, "result": result})

    @app.post("/v1/search", dependencies=keyed, tags=["search"])
    async def search(body: SearchRequest, request: Request) -> dict[str, Any]:
        """The hits of `indx search --json` for the same query and filters (the chunk's text as `content`)."""
        from indx_assets.app.search import InvalidSearch, SearchFilters, check_search, search_index
        from indx_assets.pipeline.embedders.registry import SpaceMismatch

        try:
            check_search(body.query, body.k, body.mode)
        except InvalidSearch as exc:
            raise ApiError(400, str(exc)) from None
        warm.require()
        filters = SearchFilters(source_prefix=body.source_prefix, chunk_type=body.chunk_type, page=body.page)
        try:
            hits = await anyio.to_thread.run_sync(
                partial(search_index, warm.lancedb, warm.embed, body.query, k=body.k, mode=body.mode, expand=body.expand,
                        filters=filters), limiter=turns.searches)
        except SpaceMismatch as exc:  # the index was built with another embedder than this server's
            raise ApiError(409, str(exc), "EmbedderMismatch") from None
        return {"request_id": request_id(request), "latency": latency_ms(request),
                "hits": [hit.to_json() for hit in hits]}

    @app.post("/v1/chunk", dependencies=keyed, tags=["chunk"])
    async def chunk(request: Request,
                    filename: Annotated[str, Query(min_length=1, description="The file's name; its suffix picks the reader.")]
                    ) -> dict[str, Any]:
        """The `Document` of `indx chunk --json` for the request body's bytes."""
        async with turns.body(request) as content:
            if not content:
                raise ApiError(400, "the request body is empty: send the file's bytes")
            return await anyio.to_thread.run_sync(_chunk, chain, content, filename, limiter=turns.cpu)

    return app


def _version() -> str:
    from importlib.metadata import version

    return version("indx-assets")


def _json_body(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of an endpoint that reads and validates its JSON body itself
    (`_name_bodies` puts the schema in the document)."""
    return {"requestBody": {"required": True,
                            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}


def _name_bodies(app: FastAPI, *models: type[BaseModel]) -> None:
    """Add to the OpenAPI document's schemas the bodies FastAPI does not parse, so it shows them as before."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = generate()  # FastAPI's: builds the document and keeps it as `app.openapi_schema`
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for model in models:
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas.update(schema.pop("$defs", {}))
            schemas[model.__name__] = schema
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def _content(body: SplitRequest) -> bytes:
    """The document's UTF-8 bytes, decoded from base64 when so declared."""
    if body.document.content_encoding == "base64":
        try:
            return base64.b64decode(body.document.content, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(400, "document.content is not valid base64") from None
    return body.document.content.encode("utf-8", "surrogatepass")


def _split(warm: Warm, raw: bytes, content_type: str | None) -> tuple[dict[str, Any], int]:
    """Validate the request's body and split its document (in a worker thread, in turn)."""
    from indx_assets.pipeline.chunking.split import SplitError, split_document
    from indx_assets.pipeline.embedders.registry import sizing_tokenizer

    body = parse_body(SplitRequest, raw, content_type)
    content = _content(body)
    tokenizer = warm.tokenizer or sizing_tokenizer()
    strategy = body.strategy
    try:
        result = split_document(content, content_type=body.document.content_type,
                                max_chunk_size=strategy.max_chunk_size, compute_type=strategy.compute_type,
                                need_sentence=strategy.need_sentence, tokenizer=tokenizer)
    except SplitError as exc:
        raise ApiError(400, exc.message, exc.code) from None
    return result, _token_count(result, strategy.compute_type, tokenizer)


def _token_count(result: dict[str, Any], compute_type: str, tokenizer: Any) -> int:
    """`usage.token_count`: the MiniLM tokens of what the split returns, its chunks and rich texts.

    In token mode each piece's `size` is that count already; otherwise each piece is counted on
    its own. (Encoding a 1 MB document whole for this left 150 MB of the tokenizer's buffers
    with the server.)"""
    pieces = result["chunks"] + result["rich_texts"]
    if compute_type == "token":
        return sum(piece["meta"]["size"] for piece in pieces)
    return sum(tokenizer.count(piece["content"]) for piece in pieces)


def _chunk(chain: Any, content: bytes, filename: str) -> dict[str, Any]:
    from indx_assets.pipeline.document import document_to_json
    from indx_assets.pipeline.read_and_chunk import encode_bytes, to_document

    return document_to_json(to_document(encode_bytes(content, source_id=filename, name=filename, chain=chain)))


def build(settings: Settings | None = None, api_keys: tuple[str, ...] | None = None,
          body_timeout: float | None = None) -> Any:
    """The app with its body limit: what uvicorn serves."""
    return BodyLimit(create_app(settings, api_keys, body_timeout))
