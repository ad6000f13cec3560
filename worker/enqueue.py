"""Where a version enters the pipeline's tasks (after the commit), in one place. Messages carry
ids only."""

from __future__ import annotations

import uuid
from typing import Any

import redis
from celery.result import AsyncResult

from shared.settings import get_settings
from shared.states import Status
from worker import tasks, wakeup
from worker.app import ROUTES

STAGE_TASKS = {
    Status.RECEIVED: tasks.convert,
    Status.CONVERTING: tasks.convert,
    Status.CHUNKING: tasks.chunk,
    Status.EMBEDDING: tasks.embed,
    Status.UPSERTING: tasks.upsert,
}


def enqueue_version(version_id: uuid.UUID, start: Status = Status.RECEIVED) -> None:
    """Send a committed version (call only after the commit) to the task of the stage it is
    in; each stage sends the next (convert -> chunk -> embed -> upsert -> finalize), for the
    batch it finished."""
    STAGE_TASKS[start].apply_async(([str(version_id)],))


def enqueue_new(version_id: uuid.UUID) -> None:
    """Send a newly registered version (after the commit), unless a convert message is queued
    and not yet started: that task takes it with the others waiting (`worker.wakeup`). The
    message waits `CONVERT_GATHER_SECONDS`, so the pages that arrive meanwhile join it."""
    settings = get_settings()
    if settings.eager:
        enqueue_version(version_id)
    elif wakeup.message_needed():
        tasks.convert.apply_async(([str(version_id)],), countdown=settings.convert_gather_seconds)


def backlog(stage: Status) -> int:
    """Messages waiting in the Redis queue that serves `stage` (0 when tasks run in-process)."""
    settings = get_settings()
    if settings.eager:
        return 0
    queues = [ROUTES[STAGE_TASKS[stage].name]["queue"]]
    if stage is Status.CONVERTING:  # scans that convert handed to `ocr` wait there
        queues.append(ROUTES[tasks.ocr.name]["queue"])
    assert settings.redis_url is not None  # not eager: a broker is configured
    client = redis.Redis.from_url(settings.redis_url)
    try:
        return sum(int(client.llen(queue)) for queue in queues)
    finally:
        client.close()


def enqueue_relabel(version_id: uuid.UUID) -> None:
    """Send a committed metadata version to `ingest.relabel` (after the commit)."""
    tasks.relabel.apply_async(([str(version_id)],))


def enqueue_delete(document_id: uuid.UUID) -> AsyncResult[Any]:
    """Send a document's delete (call only after the commit that marked it deleted)."""
    result: AsyncResult[Any] = tasks.delete.apply_async((str(document_id),))
    return result
