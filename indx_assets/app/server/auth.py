"""API keys: `Authorization: Bearer <API-KEY>`, as the document-split service takes them.

Keys come from `INDX_API_KEYS` (comma-separated) and the file named by `INDX_API_KEYS_FILE`
(one a line, `#` comments). With no key configured the server is open, and so may listen
only on loopback (`check_bind`).
"""

import hmac
import ipaddress
import os
from pathlib import Path

from fastapi import Request

from indx_assets.app.server.errors import ApiError

KEYS_ENV = "INDX_API_KEYS"
KEYS_FILE_ENV = "INDX_API_KEYS_FILE"


def load_keys(environ: os._Environ[str] | dict[str, str] = os.environ) -> tuple[str, ...]:
    """Every configured key; a missing key file is a configuration error, not an open server."""
    keys = [k.strip() for k in environ.get(KEYS_ENV, "").split(",")]
    path = environ.get(KEYS_FILE_ENV)
    if path:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ValueError(f"{KEYS_FILE_ENV}={path}: cannot read it ({exc.strerror or exc})") from None
        keys += [line.strip() for line in lines if not line.lstrip().startswith("#")]
    return tuple(dict.fromkeys(k for k in keys if k))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, keys: tuple[str, ...]) -> None:
    """Refuse to serve without keys anywhere but loopback."""
    if not keys and not is_loopback(host):
        raise ValueError(
            f"refusing to listen on {host} without API keys: set {KEYS_ENV} or {KEYS_FILE_ENV}, "
            "or listen on 127.0.0.1"
        )


def require_key(request: Request) -> None:
    """A FastAPI dependency: pass a request carrying a configured key (every key is compared,
    in constant time, so timing tells nothing of which or how much matched)."""
    keys: tuple[str, ...] = request.app.state.api_keys
    if not keys:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise ApiError(401, "missing API key: send 'Authorization: Bearer <API-KEY>'")
    given_bytes = given.strip().encode()
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(given_bytes, key.encode())
    if not matched:
        raise ApiError(403, "the API key is not valid")
