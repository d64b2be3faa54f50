"""Whose turn it is: a request's body is read only when its work can start, and must arrive in time.

Splitting and chunking run one at a time a process (`cpu`): they hold the GIL, so several at once
are no faster and hold several working sets. Their bodies wait too: at most `ADMITTED` split or
chunk requests a process have a body in memory (read, being read, or being worked on); the
others wait with their bodies unread, in the socket (uvicorn stops reading a connection at
64 kB). When FastAPI parsed every body first, 32 clients sending 1 MB documents kept 32 bodies
and their parsed copies alive while they waited their turn. Searches (small bodies) run at
most `SEARCHES` at once, for the same reason: the model answers one query at a time.

A client that takes its turn must send the rest of its body within `timeout` seconds, or it is
answered 408 and its turn passes: a slow or stalled client (slowloris) holds one turn for at
most that long, never the server. Behind a reverse proxy that buffers request bodies (nginx
does by default) slow clients never reach the server.
"""

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from fastapi import Request
from starlette.requests import ClientDisconnect

from indx_assets.app.server.errors import ApiError

TIMEOUT_ENV = "INDX_BODY_TIMEOUT"
#: Seconds a client has, once its turn comes, to send the rest of its body.
DEFAULT_TIMEOUT = 30.0
#: Searches a process runs at once. Each opens the table and reads its indexes; the model
#: answers one query at a time anyway. 32 searches at once left the server 70 MB larger.
SEARCHES = 2
#: Requests a process holds a body of at once: one worked on, the next ones read and ready, and
#: room for a few slow clients before the others wait for them.
ADMITTED = 4


def timeout_from_env() -> float:
    """`INDX_BODY_TIMEOUT` in seconds (a positive number), else the default."""
    raw = os.environ.get(TIMEOUT_ENV, "")
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ValueError(f"{TIMEOUT_ENV}={raw}: not a positive number of seconds")
    return value


@dataclass
class Turns:
    """The turns of one process: admission of bodies, the one CPU-bound slot, the search slots."""

    timeout: float = DEFAULT_TIMEOUT
    admitted: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(ADMITTED))
    cpu: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(1))
    searches: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(SEARCHES))

    @asynccontextmanager
    async def body(self, request: Request) -> AsyncIterator[bytes]:
        """Wait for a turn, then read the request's whole body; the turn lasts the `with` block."""
        async with self.admitted:
            with anyio.move_on_after(self.timeout) as deadline:
                try:
                    content = await request.body()
                except ClientDisconnect:
                    # a client that went away, or a body cut off at the size limit (answered 413)
                    raise ApiError(400, "the client closed the connection before sending its whole body") from None
            if deadline.cancelled_caught:
                raise ApiError(408, f"the request body did not arrive within {self.timeout:g} s")
            yield content
