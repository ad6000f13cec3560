"""`/healthz` (the process answers) and `/readyz` (it can take uploads, and whether work
moves: `processing`, `degraded`). Both are open:
orchestrators probe them without keys (keep them, and `/metrics`, off the internet).

Ready means what an upload needs: the database answers and its schema is at the migration
head this code was built for (else every upload would get a 503). The broker and the Qdrant
server are reported in the body and as `ingest_dependency_up` in `/metrics`, but do not make
the API unready: an accepted upload waits in `received` until the reaper sends it, so taking
the API out of service when Redis or Qdrant blips would refuse exactly what it promises to
keep. (A missing OpenAI key is a configuration error at start: see `Settings`.)

The probe never opens the local Qdrant folder: it belongs to the one process that indexes
(`ingest serve`, or the worker).
"""

from __future__ import annotations

import httpx
import redis
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api.processing import processing
from api.schemas import Check, ProcessingOut, Readiness
from shared.db import engine
from shared.log import get_logger
from shared.migrate import current_revision, head_revision
from shared.settings import Settings

log = get_logger(__name__)
PROBE_TIMEOUT_SECONDS = 2.0

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness: the process answers")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


def check_database() -> Check:
    """The database answers, and its schema is at the code's migration head."""
    try:
        with engine().connect() as connection:
            current = current_revision(connection)
    except Exception as exc:
        return Check(ok=False, detail=f"database unreachable: {exc.__class__.__name__}")
    head = head_revision()
    if current != head:
        found = f"at revision {current}" if current else "without a schema"
        return Check(
            ok=False, detail=f"database {found}; this code needs {head}: run `ingest db upgrade`"
        )
    return Check(ok=True)


def check_broker(settings: Settings) -> Check:
    if not settings.redis_url:
        return Check(ok=True, detail="no broker: the pipeline runs in this process")
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


def dependency_checks(settings: Settings) -> dict[str, Check]:
    """The broker, and the Qdrant server when one is configured: reported, not required."""
    checks = {"broker": check_broker(settings)}
    qdrant = check_qdrant(settings)
    if qdrant is not None:
        checks["qdrant"] = qdrant
    return checks


@router.get(
    "/readyz",
    summary="Readiness: the database answers at the schema's head (broker and Qdrant reported)",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "The database is down or not migrated."}},
)
def readyz(request: Request) -> JSONResponse:
    settings: Settings = request.app.state.settings
    checks = {"database": check_database(), **dependency_checks(settings)}
    ready = checks["database"].ok
    down = {name: check.detail for name, check in checks.items() if not check.ok}
    if down:
        log.warning("ready" if ready else "not ready", down=down)
    work = ProcessingOut(**vars(processing(settings))) if ready else None
    degraded = work is not None and (work.workers == "none" or work.stalled)
    body = Readiness(ready=ready, degraded=degraded, checks=checks, processing=work)
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if ready else 503)
