"""`ingest api`: serve the HTTP API with uvicorn on `API_HOST:API_PORT`."""

from __future__ import annotations

from typing import Annotated

import typer
import uvicorn

from shared import migrate
from shared.log import configure_logging, get_logger
from shared.settings import get_settings

log = get_logger("ingest.api")


def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default: API_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: API_PORT).")] = None,
    reload: Annotated[bool, typer.Option(help="Restart on code changes (development).")] = False,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
) -> None:
    """Serve the upload API, the CMS webhook, health checks and metrics."""
    settings = get_settings()
    configure_logging(settings)
    if not settings.api_keys:
        log.warning("API_KEYS is empty: every /v1/documents request will be refused")
    if settings.cms_webhook_secret is None:
        log.warning("CMS_WEBHOOK_SECRET is not set: the CMS webhook answers 503")
    if settings.eager:
        log.info(
            "no REDIS_URL: documents are processed inside the API process "
            "(embedded default); set REDIS_URL and run Celery workers in production"
        )
    migrate.ensure_embedded_schema()
    # Uvicorn's loggers go to the root logger (`shared.log`'s format: JSON lines when asked);
    # its access log is off: `api.request_log` writes one with the request id and no secrets.
    uvicorn.run(
        "api.app:create_app",
        log_config=None,
        access_log=False,
        factory=True,
        host=host or settings.api_host,
        port=port or settings.api_port,
        reload=reload,
        workers=None if reload else workers,
        log_level=settings.log_level.lower(),
        proxy_headers=True,
    )
