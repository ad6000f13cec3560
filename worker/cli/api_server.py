"""`ingest api` and `ingest serve`: the HTTP API with uvicorn on `API_HOST:API_PORT`.

`ingest api` with `REDIS_URL` is the production API beside Celery workers (and a Qdrant
server); without `REDIS_URL` it is `ingest serve`: one process that also runs the pipeline and
the reaper in the background (`shared.pipeline.background`). The layouts that would lose work are
refused before the server listens (`shared.layout`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from worker.cli.output import errors

HostOption = Annotated[str | None, typer.Option(help="Bind address (default: API_HOST).")]
PortOption = Annotated[int | None, typer.Option(help="Port (default: API_PORT).")]


def api(
    host: HostOption = None,
    port: PortOption = None,
    reload: Annotated[bool, typer.Option(help="Restart on code changes (development).")] = False,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
) -> None:
    """Serve the upload API, the CMS webhook, health checks and metrics (beside Celery workers;
    without REDIS_URL, as `ingest serve`)."""
    from shared import layout
    from shared.settings import get_settings

    settings = get_settings()
    why = (
        layout.api_refusal(settings)
        if settings.redis_url
        else layout.serve_refusal(settings, workers)
    )
    _refuse_if(why)
    _run(host, port, reload, workers)


def serve(host: HostOption = None, port: PortOption = None) -> None:
    """One process for a small site or a demo: the API, the pipeline and the reaper, without
    Redis (SQLite or Postgres, the embedded index or a Qdrant server)."""
    from shared import layout
    from shared.settings import get_settings

    _refuse_if(layout.serve_refusal(get_settings()))
    _run(host, port, reload=False, workers=1)


def _refuse_if(why: str) -> None:
    if why:
        errors.print(why, markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)


def _stopped(_signum: int, _frame: object) -> None:
    """SIGTERM or Ctrl-C outside uvicorn's own handling: before it listens, or the signal it
    raises again once its shutdown is done (the runner stopped, its leases given back): a
    clean stop, so the process ends with exit code 0."""
    raise SystemExit(0)


def _run(host: str | None, port: int | None, reload: bool, workers: int) -> None:
    import signal

    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, _stopped)
    import uvicorn

    from shared import migrate
    from shared.log import configure_logging, get_logger
    from shared.settings import get_settings

    log = get_logger("ingest.api")
    settings = get_settings()
    configure_logging(settings)
    if not settings.api_keys:
        log.warning("API_KEYS is empty: every /v1/documents request will be refused")
    if settings.cms_webhook_secret is None:
        log.warning("CMS_WEBHOOK_SECRET is not set: the CMS webhook answers 503")
    if settings.eager:
        log.info(
            "no REDIS_URL: this process also runs the pipeline and the reaper in the background "
            "(ingest serve); set REDIS_URL and QDRANT_URL and run Celery workers in production"
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
