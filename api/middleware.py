"""Two guards in front of every route, as plain ASGI middleware (no body buffering):

- `KeyBeforeBody`: a request to a key-protected path (`/v1/...` but the signed webhook) with
  no valid API key is answered 401, and one whose key lacks the route's scope 403, before a
  byte of its body is read: neither an anonymous client nor the chatbot's search key can make
  the API spool a large upload first. The scope is the one the route declares
  (`require_scope`), found by matching the request against the app's routes as the router
  will; the key is handed to the route's dependencies, which check it again.
- `SecurityHeaders`: the standard headers on every response (`nosniff`, no framing, no
  referrer, no caching of API data); a header a route set itself (the page's CSP) is kept.
- `UploadSizeLimit`: an upload whose Content-Length is over the limit gets a 413 with problem
  details naming the limit, before its body is read.
- `BodyLimit`: every other request's body within its path's limit (a few KB for search, the
  webhook's 5 MB, `MAX_JSON_BODY_BYTES` elsewhere): refused at once from Content-Length, or
  cut off while a body without one (chunked) streams in.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.requests import Request
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.auth import check_bearer, check_scope, declared_scope, refuse_query_credentials
from api.problems import ApiProblem, BodyTooLarge, body_too_large, problem, request_too_large

PROTECTED_PREFIX = "/v1/"
OPEN_PREFIXES = ("/v1/webhooks/",)  # the webhook is signed instead


class KeyBeforeBody:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _protected(scope["path"]) or scope["method"] == "OPTIONS":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        app: FastAPI = scope["app"]
        try:
            refuse_query_credentials(request.query_params)
            key = check_bearer(app.state.api_keys, request.headers.get("authorization"))
            wanted = route_scope(app, scope)
            if wanted:
                check_scope(key, wanted)
        except ApiProblem as refused:
            headers = {**(refused.headers or {}), "Connection": "close"}
            answer = problem(
                request, refused.status, refused.detail, headers=headers, **refused.extra
            )
            await answer(scope, receive, send)
            return
        request.state.api_key = key  # the route's `require_key` takes it from here
        await self.app(scope, receive, send)


def route_scope(app: FastAPI, scope: Scope) -> str | None:
    """The scope the route that will answer this request declares; None for no route (404,
    405: the router says so) or a route without one."""
    for route, wanted in _route_scopes(app):
        match, _ = route.matches(scope)
        if match == Match.FULL:
            return wanted
    return None


def _route_scopes(app: FastAPI) -> list[tuple[Any, str | None]]:
    """Every route of the app (included routers flattened, in the router's order) with its
    declared scope; built on the first request, the routes are fixed by then."""
    table = getattr(app.state, "route_scopes", None)
    if table is None:
        table = [
            (route, declared_scope(route.original_route.dependant))
            if isinstance(route.original_route, APIRoute)
            else (route, None)
            for route in iter_route_contexts(app.routes)
        ]
        app.state.route_scopes = table
    return table


def _protected(path: str) -> bool:
    return path.startswith(PROTECTED_PREFIX) and not path.startswith(OPEN_PREFIXES)


SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
#: Data answers run nothing and are framed by nobody; HTML (the page sets its own, stricter
#: one; Swagger UI at /docs loads its own scripts) is only kept from being framed.
DATA_CSP = b"default-src 'none'; frame-ancestors 'none'"
FRAME_CSP = b"frame-ancestors 'none'"


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api_data = scope["path"].startswith(PROTECTED_PREFIX)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                for name, value in SECURITY_HEADERS:
                    if name not in present:
                        headers.append((name, value))
                if b"content-security-policy" not in present:
                    content_type = dict(headers).get(b"content-type", b"")
                    html = content_type.startswith(b"text/html")
                    headers.append((b"content-security-policy", FRAME_CSP if html else DATA_CSP))
                if api_data and b"cache-control" not in present:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class UploadSizeLimit:
    """Refuse an upload whose Content-Length is over the limit before reading it, with problem
    details (the router's own body limit answers such a request in `text/plain`; a body sent
    without a length is still counted and refused by it while streaming, see problems.py)."""

    def __init__(self, app: ASGIApp, path: str, file_limit: int, request_limit: int) -> None:
        self.app = app
        self.path = path
        self.file_limit = file_limit
        self.request_limit = request_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == self.path:
            request = Request(scope, receive)
            length = request.headers.get("content-length", "")
            if length.isdigit() and int(length) > self.request_limit:
                response = request_too_large(request, self.file_limit, self.request_limit)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


#: A limit and the setting that sets it (None: fixed in the code).
Limit = tuple[int, str | None]


class BodyLimit:
    """Every request body within a limit, before and while it is read: a Content-Length over
    it is a 413 at once; a body sent without one (chunked) is counted as it arrives and the
    route's read fails with a 413 when it passes the limit, so no route ever holds more than
    its limit in memory. `exempt` paths (the upload) have their own limits."""

    def __init__(
        self, app: ASGIApp, default: Limit, paths: dict[str, Limit], exempt: frozenset[str]
    ) -> None:
        self.app = app
        self.default = default
        self.paths = paths
        self.exempt = exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        limit, setting = self.paths.get(scope["path"], self.default)
        request = Request(scope, receive)
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            await body_too_large(request, limit, setting)(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit, setting)
            return message

        await self.app(scope, counted, send)
