"""Retry budgets with a real worker: a transient error is tried exactly
MAX_ATTEMPTS times and then ends `failed` (retryable) with a readable message; a version held
by another live task is waited for (one lease), not given up after Celery's default 3."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from shared.db import transaction
from shared.models import DocumentVersion, utcnow
from shared.states import Status
from tests.support.pipeline import PipelineEnv, page
from tests.support.workers import wait_for


def test_a_transient_error_is_tried_max_attempts_times_then_fails_retryable(
    pipeline: PipelineEnv,
) -> None:
    pipeline.env["EMBEDDING_MAX_RETRIES"] = "0"  # one request per attempt of the stage
    pipeline.env["MAX_ATTEMPTS"] = "5"
    pipeline.fake.fail_next(100, status=500)
    with pipeline.worker() as worker:
        registered = pipeline.submit(page(sections=2).encode(), "down.md")
        version = pipeline.wait_done(registered.version_id, timeout=90)
    assert version.status == Status.FAILED
    assert version.retryable and version.error_code and version.error_message
    assert pipeline.fake.count(500) == 5
    output = worker.output()
    assert "MaxRetriesExceeded" not in output
    failed = [line for line in output.splitlines() if "version failed" in line]
    assert len(failed) == 1 and str(registered.version_id) in failed[0]


def test_a_version_held_by_another_live_task_is_waited_for_past_three_retries(
    pipeline: PipelineEnv,
) -> None:
    pipeline.env["BUSY_RETRY_SECONDS"] = "1"  # LEASE_SECONDS is 6: up to 7 waits
    registered = pipeline.submit(page(sections=2).encode(), "held.md")
    hold(registered.version_id, "another-task")
    with pipeline.worker() as worker:
        wait_for(
            lambda: (
                worker.output().count("Retry in 1s") >= 4 or "MaxRetriesExceeded" in worker.output()
            ),
            timeout=60,
            what="four waits for the other task",
        )
        hold(registered.version_id, None)  # the other task finishes its work
        version = pipeline.wait_done(registered.version_id, timeout=90)
    assert "MaxRetriesExceeded" not in worker.output()
    assert version.status == Status.INDEXED, version.error_message


def hold(version_id, owner: str | None) -> None:
    """Play another task holding (or giving back) the version's lease."""
    with transaction() as session:
        session.execute(
            sa.update(DocumentVersion)
            .where(DocumentVersion.id == version_id)
            .values(
                lease_owner=owner,
                lease_expires_at=utcnow() + timedelta(minutes=5) if owner else None,
            )
        )
