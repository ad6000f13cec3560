"""A worker that holds messages when its broker vanishes stays up and serves again once the
broker is back (kombu's Redis transport made it exit: `worker.broker`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.settings import get_settings
from shared.states import Status
from tests.support.pipeline import PipelineEnv, page
from tests.support.private_services import PrivateValkey
from tests.support.workers import celery_worker, wait_for


@pytest.fixture
def broker(
    pipeline: PipelineEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[PrivateValkey]:
    """A Valkey server of the test's own as the broker of this process and `pipeline.env`."""
    from worker.app import app, configure

    shared_url = pipeline.env["REDIS_URL"]
    private = PrivateValkey(tmp_path)
    private.start()
    pipeline.env["REDIS_URL"] = private.url
    monkeypatch.setenv("REDIS_URL", private.url)
    get_settings.cache_clear()
    configure(app, get_settings())
    try:
        yield private
    finally:
        private.stop()
        pipeline.env["REDIS_URL"] = shared_url
        monkeypatch.setenv("REDIS_URL", shared_url)
        get_settings.cache_clear()
        configure(app, get_settings())


def test_a_worker_holding_a_message_survives_losing_its_broker(
    pipeline: PipelineEnv, broker: PrivateValkey, tmp_path: Path
) -> None:
    from worker import tasks

    with celery_worker(pipeline.env, tmp_path, queues="cpu") as worker:
        # A countdown keeps the message in the worker, unacknowledged, as a convert message
        # waiting for its gather time or a stage waiting to retry does.
        held = tasks.convert.apply_async(([str(uuid.uuid4())],), countdown=300)
        wait_for(lambda: f"[{held.id}] received" in worker.output(), what="the held task")
        broker.kill()
        wait_for(
            lambda: (
                "Connection to broker lost" in worker.output() or worker.process.poll() is not None
            ),
            what="the worker to notice",
        )
        broker.start()
        served = tasks.convert.apply_async(([str(uuid.uuid4())],))
        wait_for(
            lambda: (
                f"[{served.id}] succeeded" in worker.output() or worker.process.poll() is not None
            ),
            timeout=60,
            what="the worker to serve again",
        )
        assert worker.process.poll() is None, worker.output()[-3000:]
        assert f"[{served.id}] succeeded" in worker.output()


def test_a_task_running_through_a_broker_loss_finishes_and_its_page_is_indexed(
    pipeline: PipelineEnv, broker: PrivateValkey, tmp_path: Path
) -> None:
    pipeline.fake.latency = 3.0  # the embed request is in flight while the broker is away
    with celery_worker(pipeline.env, tmp_path, queues="cpu,io") as worker:
        registered = pipeline.submit(page(sections=2).encode(), "through-the-loss.md")
        wait_for(lambda: pipeline.fake.arrived() == 1, what="the embed request to be sent")
        broker.kill()
        broker.start()
        # The embed task finishes on its old channel and sends the next stage on a new one.
        version = pipeline.wait_done(registered.version_id, timeout=60)
        assert worker.process.poll() is None, worker.output()[-3000:]
    assert version.status == Status.INDEXED, version.error_message
