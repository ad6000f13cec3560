"""The pipeline chain, built in one place. Messages carry ids only."""

from __future__ import annotations

import uuid

import redis
from celery import chain
from celery.result import AsyncResult

from shared.settings import get_settings
from shared.states import Status
from worker import tasks
from worker.app import ROUTES

STAGE_TASKS = {
    Status.RECEIVED: tasks.convert,
    Status.CONVERTING: tasks.convert,
    Status.CHUNKING: tasks.chunk,
    Status.EMBEDDING: tasks.embed,
    Status.UPSERTING: tasks.upsert,
}
# The chain a version is sent with; embed sends upsert, and upsert finalize, for the whole
# batch it finished (so those carry lists of ids).
ORDER = [tasks.convert, tasks.chunk, tasks.embed]


def pipeline(version_id: uuid.UUID, start: Status = Status.RECEIVED) -> chain:
    """convert -> chunk -> embed (which goes on to upsert -> finalize), or its tail from
    `start`."""
    task = STAGE_TASKS[start]
    if task not in ORDER:
        return chain(task.si([str(version_id)]))
    return chain(*(t.si(str(version_id)) for t in ORDER[ORDER.index(task) :]))


def enqueue_version(version_id: uuid.UUID, start: Status = Status.RECEIVED) -> None:
    """Send the chain of a committed version (call only after the commit)."""
    pipeline(version_id, start).apply_async()


def backlog(stage: Status) -> int:
    """Messages waiting in the Redis queue that serves `stage` (0 when tasks run in-process)."""
    settings = get_settings()
    if settings.eager:
        return 0
    queues = [ROUTES[STAGE_TASKS[stage].name]["queue"]]
    if stage is Status.CONVERTING:  # scans that convert handed to `ocr` wait there
        queues.append(ROUTES[tasks.ocr.name]["queue"])
    client = redis.Redis.from_url(settings.redis_url)  # type: ignore[arg-type]
    try:
        return sum(int(client.llen(queue)) for queue in queues)
    finally:
        client.close()


def enqueue_delete(document_id: uuid.UUID) -> AsyncResult:
    """Send a document's delete (call only after the commit that marked it deleted)."""
    return tasks.delete.apply_async((str(document_id),))
