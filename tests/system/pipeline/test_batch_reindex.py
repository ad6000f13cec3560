"""A batch re-index on a real Celery worker: started by `ingest.reindex_batch`, polled by
`ingest.reindex_poll` (beat's task), the worker killed while a poll reads an output file; a
new worker takes the job over from what Postgres recorded and switches the fleet."""

from __future__ import annotations

import pytest

from shared import repository as repo
from shared.db import transaction
from shared.pipeline.verify import verify
from shared.settings import get_settings
from shared.states import Status
from tests.support.pipeline import PipelineEnv, page
from tests.support.workers import wait_for
from worker.app import app

NEW = "text-embedding-3-small"


def job_state() -> tuple[str, int, int, int] | None:
    """(state, batches created, batch tokens, tokens estimated) of the latest job."""
    with transaction() as session:
        job = repo.latest_job(session)
        if job is None:
            return None
        created = sum(1 for b in repo.batches_of(session, job.id) if b.batch_id)
        return job.state, created, job.batch_tokens, job.tokens_estimated


def test_a_worker_killed_while_it_polls_is_taken_over_and_the_fleet_switches(
    pipeline: PipelineEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pipeline.worker():
        registered = [
            pipeline.submit(page(sections=6, words=200, seed=n).encode(), f"page-{n}.md")
            for n in range(3)
        ]
        for r in registered:
            assert pipeline.wait_done(r.version_id).status == Status.INDEXED
    # The new model deployed; small request files, so a poll reads several.
    pipeline.env.update(
        EMBEDDING_MODEL=NEW, EMBEDDING_BATCH_SIZE="2", EMBEDDING_BATCH_FILE_INPUTS="6"
    )
    batches = pipeline.fake.batches
    batches.stall_downloads()
    with pipeline.worker() as first:
        app.send_task("ingest.reindex_batch", kwargs={"collection": "chunks_batch"})
        wait_for(
            lambda: (state := job_state()) is not None and state[1] > 1,
            timeout=60,
            what="the batches to be created",
        )

        def stuck_in_a_read() -> bool:
            app.send_task("ingest.reindex_poll")
            return batches.stalled > 0

        wait_for(stuck_in_a_read, timeout=60, interval=0.5, what="a poll to read an output")
        first.kill()
    batches.resume_downloads()
    state = job_state()
    assert state is not None and state[0] == "running"

    with pipeline.worker():

        def switched() -> bool:
            app.send_task("ingest.reindex_poll")
            current = job_state()
            return current is not None and current[0] in ("switched", "done")

        wait_for(switched, timeout=90, interval=1.0, what="the new worker to finish the job")
    final = job_state()
    assert final is not None
    _, _, batch_tokens, estimated = final
    assert batch_tokens == estimated  # every line applied once, none paid again
    assert not [r for r in pipeline.fake.requests if r.model == NEW]  # all through batches
    monkeypatch.setenv("EMBEDDING_MODEL", NEW)
    get_settings.cache_clear()
    with transaction() as session:
        assert repo.active_collection(session, NEW, 256) == "chunks_batch"
    assert verify(get_settings()).ok
