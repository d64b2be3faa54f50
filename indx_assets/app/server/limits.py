"""Bodies over the limit are refused from their length, before they are read.

The document-split service takes at most 8 MB a request. A body that declares more is answered
413 at once; one that does not declare its length (chunked) is cut off once it passes the limit,
and answered 413 all the same.
"""

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from indx_assets.app.server.errors import error_body, new_request_id

MAX_BODY_BYTES = 8 * 1024 * 1024


async def _refuse(send: Send, limit: int) -> None:
    body = error_body(new_request_id(), "RequestEntityTooLarge", f"the request body is larger than {limit} bytes")
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})


class BodyLimit:
    """ASGI middleware refusing request bodies over `limit` bytes with 413."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _refuse(send, self.limit)
            return
        received = 0
        over = False
        started = False

        async def counted() -> Message:
            nonlocal received, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    over = True  # the app sees a client that went away; the client sees 413
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if over and not started:
                return  # the app's answer to a half-read body is replaced by the 413 below
            started = True
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not over:
                raise
        if over and not started:
            await _refuse(send, self.limit)
