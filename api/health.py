"""`/healthz` (the process answers) and `/readyz` (it can do its work: database, broker, and
the Qdrant server when one is configured). Both are open: orchestrators probe them without keys.

The API never opens the local Qdrant folder: local mode locks it to one process (the worker).
"""

from __future__ import annotations

import logging

import httpx
import redis
import sqlalchemy as sa
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api.schemas import Check, Readiness
from shared.db import engine
from shared.settings import Settings

log = logging.getLogger(__name__)
PROBE_TIMEOUT_SECONDS = 2.0

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness: the process answers")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


def check_database() -> Check:
    try:
        with engine().connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except Exception as exc:
        return Check(ok=False, detail=f"database unreachable: {exc.__class__.__name__}")
    return Check(ok=True)


def check_broker(settings: Settings) -> Check:
    if not settings.redis_url:
        return Check(ok=True, detail="no broker configured: tasks run in-process")
    client = redis.Redis.from_url(
        settings.redis_url,
        socket_connect_timeout=PROBE_TIMEOUT_SECONDS,
        socket_timeout=PROBE_TIMEOUT_SECONDS,
    )
    try:
        client.ping()
    except Exception as exc:
        return Check(ok=False, detail=f"broker unreachable: {exc.__class__.__name__}")
    finally:
        client.close()
    return Check(ok=True)


def check_qdrant(settings: Settings) -> Check | None:
    """The Qdrant server's own readiness probe; None in local mode (not the API's to open)."""
    if not settings.qdrant_url:
        return None
    headers = {}
    if settings.qdrant_api_key is not None:
        headers["api-key"] = settings.qdrant_api_key.get_secret_value()
    try:
        response = httpx.get(
            settings.qdrant_url.rstrip("/") + "/readyz",
            headers=headers,
            timeout=PROBE_TIMEOUT_SECONDS,
        )
    except httpx.HTTPError as exc:
        return Check(ok=False, detail=f"qdrant unreachable: {exc.__class__.__name__}")
    if response.status_code != 200:
        return Check(ok=False, detail=f"qdrant not ready: HTTP {response.status_code}")
    return Check(ok=True)


@router.get(
    "/readyz",
    summary="Readiness: database, broker, Qdrant server",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "A dependency is down."}},
)
def readyz(request: Request) -> JSONResponse:
    settings: Settings = request.app.state.settings
    checks = {"database": check_database(), "broker": check_broker(settings)}
    qdrant = check_qdrant(settings)
    if qdrant is not None:
        checks["qdrant"] = qdrant
    ready = all(check.ok for check in checks.values())
    if not ready:
        log.warning("not ready: %s", {k: v.detail for k, v in checks.items() if not v.ok})
    body = Readiness(ready=ready, checks=checks)
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if ready else 503)
