"""The reaper's periodic task (Celery beat, `ingest.reap`): a module of its own because it
sends versions through `worker.enqueue`, which imports the stage tasks."""

from __future__ import annotations

from shared.pipeline.reaper import reap as reap_versions
from worker.app import app
from worker.enqueue import backlog, enqueue_delete, enqueue_relabel, enqueue_version


@app.task(name="ingest.reap")
def reap() -> dict[str, int]:
    report = reap_versions(
        enqueue_version, enqueue_delete, backlog=backlog, enqueue_relabel=enqueue_relabel
    )
    return {
        "resent": len(report.resent),
        "failed": len(report.failed),
        "purges": len(report.purges),
    }
