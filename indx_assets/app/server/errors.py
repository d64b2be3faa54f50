"""The service's error shape: an HTTP status and `{"request_id", "latency", "code", "message"}`.

Every failure a client can cause answers in this shape with a 4xx status; a 500 means a defect
of the server, never bad input.
"""

import logging
import time
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

#: HTTP status -> the service's error code.
CODES = {400: "InvalidParameter", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
         405: "MethodNotAllowed", 408: "RequestTimeout", 413: "RequestEntityTooLarge", 500: "InternalError", 503: "ServiceUnavailable"}


class ApiError(Exception):
    """A request the service refuses: `status` and the seed's `code` / `message`."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code or CODES[status]
        self.message = message


def new_request_id() -> str:
    """An id in the service's form (`47EA146B-…-50B89D7EA434`)."""
    return str(uuid.uuid4()).upper()


def request_id(request: Request) -> str:
    """This request's id, made on first use and kept on the request."""
    if not hasattr(request.state, "request_id"):
        request.state.request_id = new_request_id()
        request.state.started = time.perf_counter()
    return request.state.request_id


def latency_ms(request: Request) -> int:
    request_id(request)
    return round((time.perf_counter() - request.state.started) * 1000)


def error_body(request_id: str, code: str, message: str, latency: int = 0) -> dict[str, Any]:
    return {"request_id": request_id, "latency": latency, "code": code, "message": message}


def error_response(request: Request, status: int, message: str, code: str | None = None) -> JSONResponse:
    body = error_body(request_id(request), code or CODES.get(status, "InvalidParameter"), message, latency_ms(request))
    headers = {"x-request-id": body["request_id"]}
    if status == 408:
        headers["connection"] = "close"  # the rest of the body may still come: the connection cannot be reused
    return JSONResponse(body, status_code=status, headers=headers)


def _validation_message(request: Request, exc: RequestValidationError) -> str:
    """The first problems, named by where they are in the body (`strategy.max_chunk_size: …`)."""
    problems = []
    for error in exc.errors()[:3]:
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        content_type = request.headers.get("content-type", "application/json")
        if not where and "json" not in content_type:  # a form post: FastAPI left the body unparsed
            problems.append(f"the body must be a JSON object sent as Content-Type: application/json, not {content_type}")
        elif error.get("type") == "json_invalid":
            problems.append(f"JSON parse error: {error.get('ctx', {}).get('error', error.get('msg'))}")
        else:
            problems.append(f"{where or 'body'}: {error.get('msg')}")
    return "; ".join(problems) or "invalid request"


def install(app: FastAPI) -> None:
    """Answer every refusal in the service's shape."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(request, exc.status, exc.message, exc.code)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(request, 400, _validation_message(request, exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code if exc.status_code in CODES else 400
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if status == 404 and message == "Not Found":
            message = f"no such endpoint: {request.method} {request.url.path}"
        return error_response(request, status, message)

    @app.exception_handler(Exception)
    async def _defect(request: Request, exc: Exception) -> JSONResponse:
        log.exception("request %s failed", request_id(request))
        return error_response(request, 500, f"internal error ({type(exc).__name__}); request id {request_id(request)}")
