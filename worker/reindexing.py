"""The batch re-index's tasks (`shared.pipeline.batch_reindex`), thin: `ingest.reindex_poll`
runs on Celery beat's schedule (REINDEX_POLL_INTERVAL_SECONDS) and does nothing unless a job
is running; `ingest.reindex_batch` and `ingest.reindex_cancel` let an operator start or stop
one from where Celery is reachable (`celery -A worker.app call ingest.reindex_batch`)."""

from __future__ import annotations

from typing import Any

from shared.pipeline.batch_poll import poll
from shared.pipeline.batch_reindex import JobReport, Plan, cancel, start
from worker.app import app


def _summary(report: JobReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    return {
        "job": str(report.id),
        "state": report.state,
        "collection": report.collection,
        "batches": {b.batch_id or str(b.number): b.state for b in report.batches},
        "batch_tokens": report.batch_tokens,
        "sync_tokens": report.sync_tokens,
        "error": report.error,
    }


@app.task(name="ingest.reindex_poll")
def reindex_poll() -> dict[str, Any] | None:
    return _summary(poll())


@app.task(name="ingest.reindex_batch")
def reindex_batch(collection: str | None = None) -> dict[str, Any] | None:
    report = start(collection)
    assert not isinstance(report, Plan)
    return _summary(report)


@app.task(name="ingest.reindex_cancel")
def reindex_cancel() -> dict[str, Any] | None:
    return _summary(cancel())
