"""Thin Celery tasks with fixed names; the logic is in `shared.pipeline`.

A task maps a stage's outcome to Celery: BUSY retries after a short wait, STOPPED ends the
chain, transient errors retry with exponential backoff (countdowns below the visibility
timeout) and end in `failed` (retryable) when the attempts run out.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable

from celery import Task

from shared import repository as repo
from shared.db import transaction
from shared.errors import TransientError
from shared.pipeline import stages
from shared.pipeline.convert import Ocr
from shared.pipeline.reaper import reap as reap_versions
from shared.settings import get_settings
from worker.app import app

BUSY_RETRY_SECONDS = 5


def _run(task: Task, stage: Callable[[uuid.UUID, str], stages.Outcome], version_id: str) -> str:
    settings = get_settings()
    try:
        outcome = stage(uuid.UUID(version_id), task.request.id or f"local-{uuid.uuid4()}")
    except Exception as exc:
        # Transient errors, and bugs we did not foresee, are retried with backoff; when the
        # attempts run out the version ends `failed` (retryable) instead of hanging unseen.
        if task.request.retries >= settings.max_attempts:
            code = exc.code if isinstance(exc, TransientError) else "internal_error"
            message = (
                exc.message
                if isinstance(exc, TransientError)
                else f"Unexpected error in {task.name}; operators: see the worker log for task "
                f"{task.request.id}."
            )
            with transaction() as session:
                repo.fail_version(
                    session,
                    uuid.UUID(version_id),
                    code=code,
                    message=message,
                    retryable=True,
                    actor=task.name,
                )
            task.request.chain = task.request.callbacks = None
            return stages.Outcome.STOPPED
        backoff = min(2**task.request.retries * 2, settings.retry_backoff_max_seconds)
        raise task.retry(countdown=backoff * random.uniform(0.75, 1.25), exc=exc) from exc
    if outcome is stages.Outcome.BUSY:
        raise task.retry(countdown=BUSY_RETRY_SECONDS, max_retries=None)
    if outcome is stages.Outcome.STOPPED:
        task.request.chain = task.request.callbacks = None
    return outcome


@app.task(name="ingest.convert", bind=True)
def convert(self: Task, version_id: str) -> str:
    """Convert; a PDF with scanned pages goes on to `ingest.ocr` (the `ocr` queue), the rest
    of the chain with it. In-process (the embedded default) OCR runs right here."""
    mode = Ocr.RUN if get_settings().eager else Ocr.DEFER
    outcome = _run(self, lambda v, owner: stages.convert_version(v, owner, mode), version_id)
    if outcome is stages.Outcome.NEEDS_OCR:
        limit = get_settings().ocr_timeout_seconds
        return self.replace(ocr.si(version_id).set(soft_time_limit=limit, time_limit=limit + 60))
    return outcome


@app.task(name="ingest.ocr", bind=True)
def ocr(self: Task, version_id: str) -> str:
    """The convert stage with OCR, for PDFs with scanned pages (queue `ocr`)."""
    return _run(self, lambda v, owner: stages.convert_version(v, owner, Ocr.RUN), version_id)


@app.task(name="ingest.chunk", bind=True)
def chunk(self: Task, version_id: str) -> str:
    return _run(self, stages.chunk_version, version_id)


@app.task(name="ingest.embed", bind=True)
def embed(self: Task, version_id: str) -> str:
    return _run(self, stages.embed_version, version_id)


@app.task(name="ingest.upsert", bind=True)
def upsert(self: Task, version_id: str) -> str:
    return _run(self, stages.upsert_version, version_id)


@app.task(name="ingest.finalize", bind=True)
def finalize(self: Task, version_id: str) -> str:
    return _run(self, stages.finalize_version, version_id)


@app.task(name="ingest.delete", bind=True)
def delete(self: Task, document_id: str) -> str:
    outcome = stages.delete_document(uuid.UUID(document_id), actor=self.name)
    if outcome is stages.Outcome.BUSY:
        raise self.retry(countdown=BUSY_RETRY_SECONDS, max_retries=None)
    return outcome


@app.task(name="ingest.reap")
def reap() -> dict[str, int]:
    from worker.chain import backlog, enqueue_delete, enqueue_version

    report = reap_versions(enqueue_version, enqueue_delete, backlog=backlog)
    return {
        "resent": len(report.resent),
        "failed": len(report.failed),
        "purges": len(report.purges),
    }
