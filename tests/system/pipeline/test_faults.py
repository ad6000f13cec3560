"""The pipeline under faults: a worker killed mid-stage, an API that errs, a lost message,
a broken file. Every document still ends where it should, exactly once."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from shared import repository as repo
from shared.db import transaction
from shared.documents import NewVersion
from shared.models import DocumentVersion, utcnow
from shared.pipeline import steps
from shared.pipeline.reaper import reap
from shared.states import Status
from tests.support.pipeline import PipelineEnv, page, point_ids_of
from tests.support.workers import wait_for


def test_worker_killed_mid_embed_a_new_worker_finishes_without_duplicates(
    pipeline: PipelineEnv,
) -> None:
    pipeline.env["EMBEDDING_BATCH_SIZE"] = "4"  # several requests, so the kill lands midway
    # One request in flight: what a kill loses is that one (with N in flight, up to N).
    pipeline.env["EMBEDDING_CONCURRENT_REQUESTS"] = "1"
    pipeline.fake.latency = 0.5
    with pipeline.worker() as first:
        registered = pipeline.submit(page().encode(), "killed.md")
        wait_for(
            lambda: (
                pipeline.version(registered.version_id).status == Status.EMBEDDING
                and pipeline.fake.count(200) >= 2
            ),
            timeout=60,
            what="the embed stage to be under way",
        )
        first.kill()
    paid_at_kill = pipeline.embedded_inputs()
    assert pipeline.version(registered.version_id).status == Status.EMBEDDING

    pipeline.fake.latency = 0.0
    # The unacked message comes back once older than the visibility timeout (8 s here), at
    # the next sweep of Redis's unacked messages: a tenth of the timeout, at least 10 s (it
    # was kombu's fixed 100 s).
    with pipeline.worker():
        version = pipeline.wait_done(registered.version_id, timeout=45)
    assert version.status == Status.INDEXED, version.error_message
    expected = point_ids_of(registered.version_id)
    assert len(expected) == version.chunk_count
    with pipeline.qdrant() as index:
        assert index.count() == version.chunk_count  # no duplicate points
        assert index.all_point_ids() == expected
    # Vectors already paid for before the kill were kept: at most one batch is paid twice.
    assert paid_at_kill >= 4
    assert pipeline.embedded_inputs() <= version.chunk_count + 4


def test_api_errors_500_then_429_still_end_indexed(pipeline: PipelineEnv) -> None:
    pipeline.fake.fail_next(5, status=500)
    pipeline.fake.rate_limit_next(3, retry_after=0.2)
    with pipeline.worker():
        registered = pipeline.submit(page(sections=4).encode(), "flaky.md")
        version = pipeline.wait_done(registered.version_id, timeout=120)
    assert version.status == Status.INDEXED, version.error_message
    assert pipeline.fake.count(500) == 5 and pipeline.fake.count(429) == 3
    with pipeline.qdrant() as index:
        assert index.all_point_ids() == point_ids_of(registered.version_id)


def test_reaper_recovers_a_version_left_in_embedding_with_no_task(pipeline: PipelineEnv) -> None:
    from worker.enqueue import enqueue_delete, enqueue_version

    # Convert and chunk here, then leave the version in `embedding` as a dead worker would:
    # a lease that ran out, no message in any queue.
    with transaction() as session:
        new = NewVersion(
            source="upload",
            external_id="orphan.md",
            content=page(sections=3).encode(),
            sha256="0" * 64,
            media_type="text/markdown",
        )
        registered = repo.register_version(session, new)
    version_id = registered.version_id
    assert steps.convert_versions([version_id], "here", then_chunk=True).done == [version_id]
    past = utcnow() - timedelta(minutes=10)
    with transaction() as session:
        claim = repo.claim(session, Status.EMBEDDING, "dead", timedelta(0), [version_id])
        assert version_id in claim.claimed
        session.execute(
            sa.update(DocumentVersion)
            .where(DocumentVersion.id == version_id)
            .values(updated_at=past, lease_expires_at=past)
        )

    with pipeline.worker():
        report = reap(enqueue_version, enqueue_delete)
        assert version_id in report.resent
        version = pipeline.wait_done(version_id)
    assert version.status == Status.INDEXED
    assert version.attempts == 2  # the first run, and the reaper's


def test_corrupt_pdf_fails_clearly_and_the_worker_keeps_serving(pipeline: PipelineEnv) -> None:
    with pipeline.worker():
        broken = pipeline.submit(
            b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage", "broken.pdf", "application/pdf"
        )
        fine = pipeline.submit(page(sections=2).encode(), "fine.md")
        failed = pipeline.wait_done(broken.version_id)
        indexed = pipeline.wait_done(fine.version_id)
    assert failed.status == Status.FAILED
    assert failed.error_code == "pdf_corrupt"
    assert failed.error_message and "PDF" in failed.error_message
    assert failed.retryable is False
    assert indexed.status == Status.INDEXED


def test_a_failed_version_leaves_one_warning_line_with_its_ids_code_and_message(
    pipeline: PipelineEnv,
) -> None:
    import json

    pipeline.env["LOG_FORMAT"] = "json"
    with pipeline.worker() as worker:
        broken = pipeline.submit(b"%PDF-1.7\ngarbage", "broken.pdf", "application/pdf")
        failed = pipeline.wait_done(broken.version_id)
        lines = [json.loads(line) for line in worker.output().splitlines() if line.startswith("{")]
    ours = [
        line
        for line in lines
        if line.get("version_id") == str(broken.version_id)
        and line["level"] in ("warning", "error")
    ]
    assert len(ours) == 1, ours
    assert ours[0]["document_id"] == str(failed.document_id)
    assert ours[0]["code"] == "pdf_corrupt"
    assert ours[0]["error_message"] == failed.error_message
