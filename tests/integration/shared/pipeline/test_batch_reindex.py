"""A re-index through the Batch API, on the real Postgres, local Qdrant and the OpenAI
stand-in's `/v1/files` and `/v1/batches`, driven by the real SDK: pages indexed with
text-embedding-3-large, then re-embedded with text-embedding-3-small in batches, polled until
the fleet switches (or the job is cancelled, or fails)."""

from __future__ import annotations

import uuid

import numpy as np
import openai
import orjson
import pytest

from shared import repository as repo
from shared.db import transaction
from shared.pipeline import wiring
from shared.pipeline.batch_poll import poll
from shared.pipeline.batch_reindex import JobReport, Plan, cancel, start, status
from shared.pipeline.in_process import run_local
from shared.pipeline.verify import verify
from shared.settings import get_settings
from tests.support.fakes.openai_server import Outcome, vector_for
from tests.support.pipeline import PipelineEnv, document_point_ids, page
from tests.support.steps import register
from tests.support.workers import wait_for

OLD, NEW = "text-embedding-3-large", "text-embedding-3-small"
DIMENSIONS = 256


def use_model(monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    """This process's settings now embed with `model` (a deploy of the new model)."""
    monkeypatch.setenv("EMBEDDING_MODEL", model)
    get_settings.cache_clear()


def index(pages: dict[str, str]) -> dict[str, uuid.UUID]:
    """The pages through the pipeline, here; their version ids."""
    ids = {name: register(text.encode(), name) for name, text in pages.items()}
    run_local(list(ids.values()))
    return ids


PAGES = {f"page-{n}": page(sections=6, words=200, seed=n) for n in range(4)}


@pytest.fixture
def batch_env(pipeline: PipelineEnv, monkeypatch: pytest.MonkeyPatch) -> PipelineEnv:
    """Four pages of about six chunks indexed with the old model; request files of 6 inputs
    in requests of 2 (several batches, several lines each); settings on the new model."""
    index(PAGES)
    monkeypatch.setenv("EMBEDDING_BATCH_SIZE", "2")
    monkeypatch.setenv("EMBEDDING_BATCH_FILE_INPUTS", "6")
    monkeypatch.setenv("LEASE_SECONDS", "2")
    use_model(monkeypatch, NEW)
    return pipeline


def sync_requests(env: PipelineEnv, model: str = NEW) -> int:
    """Requests of the embeddings API (not the Batch API) for `model`."""
    return sum(1 for r in env.fake.requests if r.model == model and r.status == 200)


def poll_until(state: str, timeout: float = 60) -> JobReport:
    reports: list[JobReport] = []

    def reached() -> bool:
        report = poll() or status()
        assert report is not None
        reports.append(report)
        return report.state == state

    wait_for(reached, timeout=timeout, what=f"the batch re-index to be {state}")
    return reports[-1]


def active(model: str = NEW) -> str | None:
    with transaction() as session:
        return repo.active_collection(session, model, DIMENSIONS)


def test_a_batch_reindex_fills_the_new_collection_and_switches_when_verify_is_clean(
    batch_env: PipelineEnv,
) -> None:
    batch_env.fake.batches.next_outcomes.append(Outcome("completed", error_lines=1))
    started = start("chunks_batch")
    assert isinstance(started, JobReport) and started.state == "running"
    assert len(started.batches) > 1 and all(b.batch_id for b in started.batches)
    lines = [
        orjson.loads(line) for f in batch_env.fake.batches.uploads() for line in f.splitlines()
    ]
    assert all(line["url"] == "/v1/embeddings" and line["method"] == "POST" for line in lines)
    assert {line["body"]["model"] for line in lines} == {NEW}
    assert {line["body"]["dimensions"] for line in lines} == {DIMENSIONS}
    assert len({line["custom_id"] for line in lines}) == len(lines)
    assert sum(len(line["body"]["input"]) for line in lines) == started.inputs
    assert poll() is not None and active() is None  # in progress: nothing switched

    report = poll_until("switched")

    assert active() == "chunks_batch"
    verified = verify(get_settings())
    assert verified.ok and verified.expected > 0, verified
    # The one line the API failed went through the embeddings API; all else through batches.
    assert 0 < sync_requests(batch_env) <= 2
    assert 0 < report.sync_tokens < report.batch_tokens
    assert report.batch_tokens + report.sync_tokens == report.tokens_estimated
    assert report.cost < report.sync_cost_estimate
    index_now = wiring.index_for(get_settings(), wiring.embedder(get_settings()))
    assert index_now.collection == "chunks_batch"
    for record in index_now.retrieve(sorted(index_now.all_point_ids())[:3]):
        text = record.payload["text"]
        expected = vector_for(_embedding_text(record.payload), DIMENSIONS, NEW)
        assert text and np.allclose(record.vector, expected, atol=1e-5)


def _embedding_text(payload: dict[str, object]) -> str:
    from shared.pipeline.embed import embedding_input

    return embedding_input(payload["headings"], payload["text"], payload["sections"])  # type: ignore[arg-type]


def test_a_poll_cut_off_mid_read_and_a_dead_polls_claim_are_taken_over(
    batch_env: PipelineEnv,
) -> None:
    started = start("chunks_batch")
    assert isinstance(started, JobReport)
    batch_env.fake.batches.break_downloads = 1
    cut: list[Exception] = []

    def cut_off() -> bool:
        try:
            poll()
        except Exception as exc:  # the SDK's connection error, or the HTTP client's
            cut.append(exc)
        return bool(cut)

    wait_for(cut_off, timeout=30, what="a poll to be cut off while it reads an output file")
    report = status()
    assert report is not None and report.state == "running"
    applied = report.batch_tokens
    assert 0 < applied < report.tokens_estimated  # the lines read before the cut are kept

    # A worker killed while polling leaves its claim: the next poll waits it out, then
    # carries the job on from what Postgres recorded.
    with transaction() as session:
        job = repo.running_job(session)
        assert job is not None
        assert repo.claim_poll(session, job.id, "killed-worker", _seconds_from_now(1.5))
    blocked = poll()
    assert blocked is not None and blocked.batch_tokens == applied
    finished = poll_until("switched")
    # Every line applied once: no token counted twice, none sent synchronously.
    assert finished.batch_tokens == finished.tokens_estimated
    assert sync_requests(batch_env) == 0
    assert verify(get_settings()).ok


def _seconds_from_now(seconds: float):  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from shared.models import utcnow

    return utcnow() + timedelta(seconds=seconds)


def test_an_expired_batch_is_used_as_far_as_it_got_and_the_rest_embedded_at_once(
    batch_env: PipelineEnv,
) -> None:
    batch_env.fake.batches.next_outcomes.append(Outcome("expired"))
    start("chunks_batch")
    report = poll_until("switched")
    assert report.batches[0].state == "expired"
    assert 0 < report.sync_tokens < report.batch_tokens
    assert report.batch_tokens + report.sync_tokens == report.tokens_estimated
    assert sync_requests(batch_env) > 0
    assert active() == "chunks_batch" and verify(get_settings()).ok


def test_a_document_updated_during_the_batch_is_current_in_the_new_collection(
    batch_env: PipelineEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch_env.fake.batches.hold()
    start("chunks_batch")
    poll()
    # The fleet, still on the old model, indexes a new version of one page meanwhile.
    use_model(monkeypatch, OLD)
    updated = index({"page-2": "# Knee surgery\n\n## Visiting hours\n\nVisitors welcome 14-20h.\n"})
    with transaction() as session:
        version = repo.load_version(session, updated["page-2"])
        assert version is not None
        document_id = version.document_id
        new_points = set(repo.current_point_ids_of(session, document_id))
    use_model(monkeypatch, NEW)
    batch_env.fake.batches.release()

    poll_until("switched")

    new_index = wiring.index_for(get_settings(), wiring.embedder(get_settings()))
    assert new_index.collection == "chunks_batch"
    assert document_point_ids(new_index, document_id) == new_points
    (record,) = new_index.retrieve(list(new_points))
    assert "Visitors welcome" in record.payload["text"]
    assert verify(get_settings()).ok

    # After the switch, until the new model is deployed, the fleet still indexes with the old
    # one into the old collection; the first poll of a process of the new model catches up.
    use_model(monkeypatch, OLD)
    index({"page-3": "# Knee surgery\n\n## Parking\n\nPark in garage P2.\n"})
    use_model(monkeypatch, NEW)
    assert not verify(get_settings()).ok  # the new collection lacks that version
    caught_up = poll()
    assert caught_up is not None and caught_up.state == "done"
    assert verify(get_settings()).ok
    assert poll() is None  # nothing left to do


def test_cancel_stops_the_batches_and_the_old_collection_keeps_serving(
    batch_env: PipelineEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch_env.fake.batches.hold()
    started = start("chunks_batch")
    assert isinstance(started, JobReport)
    poll()
    report = cancel()
    assert report is not None and report.state == "cancelled"
    assert set(batch_env.fake.batches.cancelled) == {b.batch_id for b in started.batches}
    assert poll() is None  # nothing running: the beat's poll does nothing
    assert active() is None
    use_model(monkeypatch, OLD)
    old = wiring.index_for(get_settings(), wiring.embedder(get_settings()))
    assert old.collection != "chunks_batch"
    assert verify(get_settings()).ok


def test_a_batch_the_api_refuses_fails_the_job_with_its_reason(batch_env: PipelineEnv) -> None:
    batch_env.fake.batches.next_outcomes.append(Outcome("failed"))
    start("chunks_batch")
    report = poll_until("failed")
    assert report.error and "was refused" in report.error and "line 1" in report.error
    assert active() is None
    assert len(batch_env.fake.batches.cancelled) == len(report.batches) - 1


def test_a_dry_run_counts_and_prices_both_routes_and_sends_nothing(
    batch_env: PipelineEnv,
) -> None:
    planned = start(dry_run=True)
    assert isinstance(planned, Plan)
    assert planned.tokens > 0 and planned.inputs == planned.chunks > 0
    assert planned.batch_cost == pytest.approx(planned.sync_cost / 2)
    assert batch_env.fake.batches.uploads() == [] and status() is None


def test_vectors_the_batches_returned_are_kept_and_a_later_reindex_of_the_model_sends_none(
    batch_env: PipelineEnv,
) -> None:
    """The vector cache (model, dimensions, input): a batch re-index keeps the vectors it was
    sent back; a second one of the same model plans no input, and its finish takes every
    vector from the cache (no request to either API)."""
    start("chunks_batch")
    poll_until("switched")
    requests = len(batch_env.fake.requests)

    planned = start("chunks_again", dry_run=True)
    assert isinstance(planned, Plan)
    assert planned.chunks > 0 and planned.reused == planned.chunks
    assert planned.inputs == 0 and planned.tokens == 0
    uploads = len(batch_env.fake.batches.uploads())
    again = start("chunks_again")
    assert isinstance(again, JobReport) and again.inputs == 0
    report = poll_until("switched")
    assert report.collection == "chunks_again" and report.sync_tokens == 0
    assert len(batch_env.fake.batches.uploads()) == uploads
    assert len(batch_env.fake.requests) == requests
    assert verify(get_settings()).ok


@pytest.mark.parametrize("refused", ["files", "batches"])
def test_a_start_cut_short_is_completed_by_the_poll(batch_env: PipelineEnv, refused: str) -> None:
    """The upload (or the batch's creation) failed after the job was recorded: the poll
    uploads the file again from the recorded lines (or creates the batch on the uploaded
    file), then carries on as usual."""
    batch_env.fake.batches.refuse[refused] = 4  # the SDK's try and its 3 retries
    with pytest.raises(openai.InternalServerError):
        start("chunks_batch")
    report = status()
    assert report is not None and report.state == "running"
    assert all(b.batch_id is None for b in report.batches)
    finished = poll_until("switched")
    assert all(b.batch_id for b in finished.batches)
    assert finished.batch_tokens == finished.tokens_estimated
    assert verify(get_settings()).ok
