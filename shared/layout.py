"""Which layouts of processes the settings allow, checked by the commands that start servers
(`ingest api`, `ingest serve`) before they listen: a wrong layout loses documents quietly, so it
is refused at the start with one line that names the way out.

- Embedded: one process owns the local index folder (`QDRANT_PATH`): `ingest run`, or
  `ingest serve` (the API, the stage runners and the reaper in one process, no broker).
- Production: the API beside Celery workers (`REDIS_URL`) shares the index through a Qdrant
  server (`QDRANT_URL`); a local folder is locked to one process, so the API's searches and the
  workers' upserts would lock each other out.
"""

from __future__ import annotations

from shared.settings import Settings


def api_refusal(settings: Settings) -> str:
    """Why the API must not start beside Celery workers with these settings; "" if it may."""
    if not settings.redis_url or settings.qdrant_url:
        return ""
    return (
        "refusing to start: with REDIS_URL the Celery workers index the documents, and the API "
        f"cannot share their local Qdrant folder (QDRANT_PATH={settings.qdrant_path}, locked to "
        "one process); set QDRANT_URL to a Qdrant server, or unset REDIS_URL and run "
        "`ingest serve` (the API and the pipeline in one process)."
    )


def serve_refusal(settings: Settings, workers: int = 1) -> str:
    """Why `ingest serve` (or `ingest api` without a broker) must not start; "" if it may."""
    if settings.redis_url:
        return (
            "refusing to start: `ingest serve` runs the pipeline in its own process and takes "
            "no broker; unset REDIS_URL, or run `ingest api` beside Celery workers with a "
            "Qdrant server (QDRANT_URL)."
        )
    if workers > 1:
        return (
            "refusing to start: without REDIS_URL the API runs the pipeline in its own process, "
            f"so it serves with one process, not {workers}; set REDIS_URL and QDRANT_URL and "
            "run Celery workers to scale out."
        )
    return ""
