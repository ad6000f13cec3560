"""The HTTP app: `create_app()` wires settings, routes, auth, problem details and metrics.

`uvicorn api.app:app` (or `ingest api`) serves it. Everything but `/healthz`, `/readyz`,
`/metrics` and the signed CMS webhook needs a Bearer API key.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi_offline import FastAPIOffline

from api import (
    health,
    metrics,
    problems,
    routes_bulk,
    routes_documents,
    routes_fields,
    routes_files,
    routes_search,
    web,
    webhook,
)
from api.auth import parse_keys
from api.middleware import BodyLimit, KeyBeforeBody, SecurityHeaders, UploadSizeLimit
from api.replay import SignatureMemory
from api.request_log import RequestLogMiddleware
from api.schemas import CmsEvent
from shared.log import configure_logging
from shared.pipeline.background import Runner
from shared.settings import Settings, get_settings

#: Room for the multipart envelope and the form's text fields on top of the files' bytes.
FORM_OVERHEAD_BYTES = 1024 * 1024


def enqueue_version(version_id: uuid.UUID) -> None:
    """Send a new version to the pipeline (imported lazily: the worker package is heavy)."""
    from worker.enqueue import enqueue_new

    enqueue_new(version_id)


def enqueue_relabel(version_id: uuid.UUID) -> None:
    """Send a metadata version to its relabel task (lazily imported, as above)."""
    from worker.enqueue import enqueue_relabel as send

    send(version_id)


def enqueue_delete(document_id: uuid.UUID) -> None:
    from worker.enqueue import enqueue_delete as send

    send(document_id)


def _wire_processing(app: FastAPI, settings: Settings) -> None:
    """Where the routes send committed work: Celery tasks through the broker (`REDIS_URL`,
    Celery workers do the work), or, without a broker, this process's background runner
    (`ingest serve`): the route answers at once and the runner takes the work after it."""
    if settings.redis_url:
        app.state.runner = None
        app.state.enqueue = enqueue_version
        app.state.enqueue_delete = enqueue_delete
        app.state.enqueue_relabel = enqueue_relabel
        return
    runner = Runner(settings)
    app.state.runner = runner
    app.state.enqueue = app.state.enqueue_delete = app.state.enqueue_relabel = runner.wake


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The background runner lives as long as the server: started before the first request,
    stopped at shutdown (SIGTERM) after the step in flight."""
    runner: Runner | None = app.state.runner
    if runner is not None:
        runner.start()
    try:
        yield
    finally:
        if runner is not None:
            await asyncio.to_thread(runner.stop)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings)  # every process that serves the app: uvicorn's lines too
    # /docs and /redoc with Swagger UI's and ReDoc's files served from here, not from a CDN:
    # a hospital network is often closed (fastapi-offline ships the files).
    app = FastAPIOffline(
        title="Hospital content ingestion API",
        version="1.0.0",
        description=(
            "Upload Markdown pages and PDF brochures, follow them through conversion, "
            "chunking, embedding and indexing, and receive CMS webhooks. Errors are "
            "problem details (`application/problem+json`)."
        ),
        lifespan=_lifespan,
    )
    app.state.settings = settings
    app.state.api_keys = parse_keys(settings.api_keys)
    _wire_processing(app, settings)
    app.state.signature_memory = SignatureMemory(
        settings.redis_url, settings.webhook_tolerance_seconds
    )
    registry, http_metrics = metrics.new_registry(settings)
    app.state.metrics_registry = registry

    problems.install(app)
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(routes_bulk.router)  # before `/{document_id}` takes "export.csv"
    app.include_router(
        routes_documents.router,
        # Files of one request together stay under the limit; refused while streaming, or at
        # once when Content-Length already says so.
        max_body_size=settings.max_upload_bytes + FORM_OVERHEAD_BYTES,
        form_limits={
            "max_files": routes_documents.MAX_FILES,
            "max_fields": 100,
            "max_part_size": FORM_OVERHEAD_BYTES,
        },
    )
    app.include_router(routes_fields.router)
    app.include_router(routes_files.router)
    app.include_router(routes_search.router)
    app.include_router(webhook.router)
    web.install(app, settings.max_upload_bytes)  # the content team's page at `/`
    app.state.upload_request_limit = settings.max_upload_bytes + FORM_OVERHEAD_BYTES
    app.add_middleware(
        UploadSizeLimit,
        path="/v1/documents",
        file_limit=settings.max_upload_bytes,
        request_limit=app.state.upload_request_limit,
    )
    app.add_middleware(
        BodyLimit,
        default=(settings.max_json_body_bytes, "MAX_JSON_BODY_BYTES"),
        paths={
            "/v1/search": (settings.search_max_body_bytes, "SEARCH_MAX_BODY_BYTES"),
            "/v1/webhooks/cms": (webhook.MAX_BODY_BYTES, None),
        },
        exempt=frozenset({"/v1/documents"}),  # UploadSizeLimit and the router's limit
    )
    app.add_middleware(KeyBeforeBody)  # 401 before an anonymous upload's body is read
    app.add_middleware(metrics.HttpMetricsMiddleware, metrics=http_metrics)
    app.add_middleware(SecurityHeaders)  # every response, refusals included
    app.add_middleware(RequestLogMiddleware)  # outermost: every answer gets its line and id
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]  # FastAPI's documented override
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document plus the webhook's body schema (the route reads the raw body itself,
    to check the signature before parsing)."""
    if app.openapi_schema is None:
        document = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        event_schema = CmsEvent.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        schemas.update(event_schema.pop("$defs", {}))
        schemas["CmsEvent"] = event_schema
        _document_body_limits(document)
        app.openapi_schema = document
    return app.openapi_schema


def _document_body_limits(document: dict[str, Any]) -> None:
    """Every route that takes a body may answer 413 (`api.middleware.BodyLimit` refuses a body
    over its limit before the route runs): say so where a route did not already."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                operation.setdefault("responses", {}).setdefault(
                    "413",
                    {
                        "description": "The body is larger than its limit (problem details "
                        "name the limit and its setting)."
                    },
                )


app = create_app()
