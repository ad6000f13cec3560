"""The API's access log, through the same structured logging as every other line: one
`request` line per request, with a request id bound to every line written while it is
answered (ours, SQLAlchemy's, Celery's "could not send").

The request id is the caller's `X-Request-ID` when it is a plain token (a proxy's), else a new
one; the response carries it back. Headers are never logged (no `Authorization`), and query
parameters that look like credentials are written as `***` (a key sent in a URL is refused,
but it must not land in the log either). Uvicorn's own access log is off (`ingest api`).
"""

from __future__ import annotations

import re
import time
import uuid
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shared.log import bind, get_logger

log = get_logger("api.access")

REQUEST_ID_HEADER = "x-request-id"
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
#: Parameter names whose values are credentials.
CREDENTIAL_NAMES = re.compile(
    r"(key|token|secret|password|passwd|pwd|auth|signature|sig|session|credential)", re.I
)
#: Values that look like a key whatever the parameter is called: long opaque tokens.
KEY_LIKE_VALUE = re.compile(r"^(sk-|Bearer\s)|^[A-Za-z0-9_\-.~+/=]{24,}$")


def redact_query(query: str) -> str:
    """The query string with credential-like values replaced by `***`."""
    if not query:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True)
    return urlencode(
        [(name, "***" if _credential(name, value) else value) for name, value in pairs],
        safe="*",
    )


def _credential(name: str, value: str) -> bool:
    return bool(CREDENTIAL_NAMES.search(name) or KEY_LIKE_VALUE.search(value))


def request_id_from(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == REQUEST_ID_HEADER.encode():
            given: str = value.decode("latin-1").strip()
            if _SANE_REQUEST_ID.match(given):
                return given
    return uuid.uuid4().hex


class RequestLogMiddleware:
    """Binds `request_id`, answers it in `X-Request-ID`, and writes the access line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [h for h in message.get("headers", []) if h[0] != b"x-request-id"]
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        with bind(request_id=request_id):
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                query = redact_query(scope.get("query_string", b"").decode("latin-1"))
                client = scope.get("client")
                log.info(
                    "request",
                    method=scope.get("method"),
                    path=scope.get("path"),
                    query=query or None,
                    status=status,
                    duration_ms=round((time.perf_counter() - started) * 1000, 1),
                    client=client[0] if client else None,
                )
