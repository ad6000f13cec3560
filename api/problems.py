"""Errors as problem details (RFC 9457, `application/problem+json`), never a traceback.

Every refusal the API makes (401, 404, 413, 415, 422, 503, ...) goes through `problem()`, so
clients parse one shape: `type`, `title`, `status`, `detail`, `instance`, plus `errors` for
validation failures.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from qdrant_client.http.exceptions import ResponseHandlingException
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError
from starlette.exceptions import HTTPException as StarletteHTTPException

from shared.db import schema_missing
from shared.errors import IngestError, StoreError, StoreLockedError

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
#: Seconds a client waits before trying again when the vector index is out of reach.
STORE_RETRY_AFTER = "10"
STORE_MESSAGES = {
    StoreError.code: "The search index cannot be reached right now. Nothing was lost; "
    "try again in a few seconds.",
    StoreLockedError.code: "The search index is held by another process (a local QDRANT_PATH "
    "is locked to one process). Try again later; an operator runs `ingest serve` alone on "
    "that folder, or uses a Qdrant server (QDRANT_URL).",
}


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_JSON


class ApiProblem(Exception):
    """Raised by routes to answer with a problem document (and optional extra fields)."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.title = title
        self.headers = headers
        self.extra = extra


def problem(
    request: Request,
    status: int,
    detail: str | None = None,
    *,
    title: str | None = None,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> ProblemResponse:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": title or HTTPStatus(status).phrase,
        "status": status,
        "instance": request.url.path,
    }
    if detail:
        body["detail"] = detail
    body.update(extra)
    return ProblemResponse(body, status_code=status, headers=headers)


def readable_size(size: int) -> str:
    """`52428800` -> `50 MiB`, `262144` -> `256 KiB` (the limit as an editor reads it)."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor:
            value = size / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def request_too_large(request: Request, file_limit: int, request_limit: int) -> ProblemResponse:
    """The 413 for a whole request over the limit, as problem details naming both limits."""
    return problem(
        request,
        413,
        f"The upload is larger than the limit of {readable_size(file_limit)} ({file_limit} "
        f"bytes) per file (MAX_UPLOAD_BYTES); all files of one request together may take "
        f"{readable_size(request_limit)}.",
        title="Upload too large",
        limit_bytes=file_limit,
        request_limit_bytes=request_limit,
    )


class BodyTooLarge(StarletteHTTPException):
    """A request body over its route's limit (`api.middleware.BodyLimit`), raised while the
    body streams in; answered as problem details naming the limit."""

    def __init__(self, limit: int, setting: str | None) -> None:
        super().__init__(413, headers={"Connection": "close"})
        self.limit = limit
        self.setting = setting


def body_too_large(request: Request, limit: int, setting: str | None) -> ProblemResponse:
    """The 413 for a JSON (or webhook) body over its limit, naming the limit and its setting;
    the connection is closed (the rest of the body is never read)."""
    where = f" ({setting})" if setting else ""
    return problem(
        request,
        413,
        f"The request body is larger than the limit of {readable_size(limit)} ({limit} bytes) "
        f"for {request.method} {request.url.path}{where}.",
        title="Request body too large",
        headers={"Connection": "close"},
        limit_bytes=limit,
    )


def _validation_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    """Where and what, without echoing the (possibly large or binary) input back."""
    return [
        {"loc": [str(part) for part in error.get("loc", ())], "msg": str(error.get("msg", ""))}
        for error in exc.errors()
    ]


def store_failure(exc: Exception) -> StoreError | None:
    """`exc` as a failure of the vector index, or None when it is something else: a
    `StoreError`, the locked-folder error of qdrant-client's local mode (an `IngestError` with
    that code), or a connection error of qdrant-client or httpx (a Qdrant server down)."""
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, IngestError) and exc.code == StoreLockedError.code:
        return StoreLockedError(exc.message)
    if isinstance(exc, ResponseHandlingException | httpx.TransportError):
        return StoreError(f"{type(exc).__name__}: {exc}")
    return None


def store_unavailable(request: Request, error: StoreError) -> ProblemResponse:
    """The 503 for a vector index out of reach: its `code`, a plain message, Retry-After."""
    message = STORE_MESSAGES.get(error.code, STORE_MESSAGES[StoreError.code])
    return _unavailable(request, error, "Search index unavailable", message)


def embedding_unavailable(request: Request, error: IngestError) -> ProblemResponse:
    """The 503 for a question that could not be embedded (the embeddings API down, out of
    quota, the tokeniser's vocabulary missing): its `code`, a plain message, Retry-After."""
    message = (
        "The question could not be turned into a search vector right now (the embedding "
        "service did not answer). Nothing was lost; try again shortly."
    )
    return _unavailable(request, error, "Embedding unavailable", message)


def _unavailable(request: Request, error: IngestError, title: str, message: str) -> ProblemResponse:
    """A 503 for a service a route needs: logged with the error's own words, answered with
    the error's `code`, a plain message and Retry-After."""
    log.warning(
        "%s on %s %s: [%s] %s",
        title.lower(),
        request.method,
        request.url.path,
        error.code,
        error.message,
    )
    return problem(
        request,
        503,
        message,
        title=title,
        headers={"Retry-After": STORE_RETRY_AFTER},
        code=error.code,
    )


def _unexpected_error(request: Request) -> ProblemResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem(request, 500, "An unexpected error occurred; it has been logged.")


def install(app: FastAPI) -> None:
    """Register the handlers on `app`."""

    @app.exception_handler(ApiProblem)
    async def _api_problem(request: Request, exc: ApiProblem) -> ProblemResponse:
        return problem(
            request, exc.status, exc.detail, title=exc.title, headers=exc.headers, **exc.extra
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> ProblemResponse:
        if isinstance(exc, BodyTooLarge):
            return body_too_large(request, exc.limit, exc.setting)
        if exc.status_code == 413 and request.url.path == "/v1/documents":
            # The router's body limit, hit while a body without Content-Length streams in.
            settings = request.app.state.settings
            limit = request.app.state.upload_request_limit
            return request_too_large(request, settings.max_upload_bytes, limit)
        detail = exc.detail if isinstance(exc.detail, str) else None
        return problem(request, exc.status_code, detail, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> ProblemResponse:
        return problem(
            request,
            422,
            "The request is not valid; see `errors`.",
            errors=_validation_errors(exc),
        )

    @app.exception_handler(OperationalError)
    @app.exception_handler(ProgrammingError)
    async def _database_down(request: Request, exc: DBAPIError) -> ProblemResponse:
        if schema_missing(exc):
            log.error("database schema missing: run `ingest db upgrade` (%s)", exc.orig)
            return problem(
                request,
                503,
                "The database has no schema yet: an operator must run `ingest db upgrade`.",
            )
        if isinstance(exc, ProgrammingError):
            log.exception("database error on %s %s", request.method, request.url.path)
            return problem(request, 500, "An unexpected error occurred; it has been logged.")
        log.error("database unavailable: %s", exc.orig)
        return problem(
            request,
            503,
            "The database is unavailable. Nothing was stored; try again shortly.",
            headers={"Retry-After": "5"},
        )

    # The index's failures (and only they) as a 503; registered by type, not in the catch-all
    # below, whose handler Starlette runs and then raises the exception again.
    @app.exception_handler(IngestError)
    @app.exception_handler(ResponseHandlingException)
    @app.exception_handler(httpx.TransportError)
    async def _store(request: Request, exc: Exception) -> ProblemResponse:
        error = store_failure(exc)
        if error is not None:
            return store_unavailable(request, error)
        if isinstance(exc, IngestError):  # a search's question could not be embedded
            return embedding_unavailable(request, exc)
        return _unexpected_error(request)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> ProblemResponse:
        return _unexpected_error(request)
