"""Thin Celery tasks with fixed names; the logic is in `shared.pipeline`.

A task maps a stage's outcome to Celery, with retry budgets of its own, taken from the settings
(Celery's `max_retries` is off: `retry(max_retries=None)` would mean the task default, 3):

- BUSY (another live task holds the version) tries again every `BUSY_RETRY_SECONDS` for one
  lease (`LEASE_SECONDS`): by then the holder has finished, or died and its lease ran out and
  this task takes over. If the holder is still alive after that, it sends the next stage itself;
  this message ends with a warning (and the reaper watches the version either way).
- A transient error (or a bug nobody foresaw) is retried with exponential backoff (countdowns
  below the visibility timeout); a stage runs at most `MAX_ATTEMPTS` times, then the version
  ends `failed` (retryable) with a message an editor can read.
The two budgets are counted apart: the BUSY waits travel in the message (`busy_waits`).

Every stage takes a batch of version ids (a single id is a batch of one; `ingest.ocr` is sent
one scanned PDF at a time) and sends the next stage for the versions it finished, with its
leases (`handover`): convert takes the pages waiting with its own, chunk and embed go on with
that batch (embed fills its requests with other versions waiting too), upsert and finalize
with embed's. The stages themselves are `shared.pipeline.steps`, the same functions `ingest
run` schedules in-process.
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Callable
from typing import Any

from celery import Task

from shared.log import get_logger
from shared.pipeline import steps
from shared.pipeline.convert import Ocr
from shared.pipeline.failures import give_up
from shared.settings import Settings, get_settings
from worker import wakeup
from worker.app import app

log = get_logger("worker.tasks")
# Celery gives up only when these budgets say so (see the module's docstring).
TASK_OPTIONS: dict[str, Any] = {"bind": True, "max_retries": None}


def busy_budget(settings: Settings) -> int:
    """How many BUSY waits add up to one lease: long enough for a dead holder's to run out."""
    return math.ceil(settings.lease_seconds / settings.busy_retry_seconds) + 1


def _gave_up_waiting(busy_waits: int, what: str) -> bool:
    """True, said in the log, when the BUSY waits add up to one lease."""
    if busy_waits < busy_budget(get_settings()):
        return False
    log.warning(
        "still held by another live task after one lease; leaving it to that task",
        target=what,
        busy_waits=busy_waits,
    )
    return True


def _retry_busy(task: Task[Any, Any], busy_waits: int, what: str) -> str:
    if _gave_up_waiting(busy_waits, what):
        return "stopped: still held by another task"
    raise task.retry(
        kwargs={**(task.request.kwargs or {}), "busy_waits": busy_waits + 1},
        countdown=get_settings().busy_retry_seconds,
    )


def _retry_or_fail(
    task: Task[Any, Any], exc: Exception, version_ids: list[str], busy_waits: int
) -> None:
    """Retry the task for `version_ids` with backoff (raises Celery's Retry) while attempts
    are left; after the last one, end each version `failed` (retryable) with a message an
    editor can act on."""
    settings = get_settings()
    attempt = task.request.retries - busy_waits + 1  # this run, counted from 1
    if attempt < settings.max_attempts:
        backoff = min(2 ** (attempt - 1) * 2, settings.retry_backoff_max_seconds)
        raise task.retry(
            args=(version_ids,), countdown=backoff * random.uniform(0.75, 1.25), exc=exc
        ) from exc
    hint = f"see the worker log for task {task.request.id}"
    give_up([uuid.UUID(v) for v in version_ids], exc, task.name, hint)


@app.task(name="ingest.convert", **TASK_OPTIONS)
def convert(
    self: Task[Any, Any],
    version_ids: str | list[str],
    busy_waits: int = 0,
    handover: str | None = None,
) -> str:
    """Converts its versions and the others waiting in `received` (`STAGE_BATCH_VERSIONS`),
    then sends the batch to `ingest.chunk`. PDFs with scanned pages go to `ingest.ocr` (the
    `ocr` queue) one by one; in-process (the embedded default) OCR runs right here."""
    settings = get_settings()
    if settings.eager:
        mode = Ocr.RUN
    else:
        mode = Ocr.DEFER
        wakeup.convert_started()

    def claimed(full: bool) -> None:
        """A full batch: more may be waiting, for another convert task (sent once)."""
        if full and not settings.eager and wakeup.message_needed():
            convert.apply_async(([],))

    ids = [version_ids] if isinstance(version_ids, str) else version_ids
    waiting = max(settings.stage_batch_versions - len(ids), 0)
    return _run_batch(
        self,
        lambda ids, owner, **kw: steps.convert_versions(
            ids, owner, ocr=mode, take_waiting=waiting, claimed=claimed, **kw
        ),
        version_ids,
        busy_waits,
        then=chunk,
        handover=handover,
    )


def _send_to_ocr(version_ids: list[uuid.UUID]) -> None:
    limit = get_settings().ocr_timeout_seconds
    for version_id in version_ids:
        ocr.apply_async((str(version_id),), soft_time_limit=limit, time_limit=limit + 60)


@app.task(name="ingest.ocr", **TASK_OPTIONS)
def ocr(self: Task[Any, Any], version_id: str | list[str], busy_waits: int = 0) -> str:
    """The convert stage with OCR, for PDFs with scanned pages (queue `ocr`); then chunk."""
    return _run_batch(
        self,
        lambda ids, owner, **kw: steps.convert_versions(ids, owner, ocr=Ocr.RUN, **kw),
        version_id,
        busy_waits,
        then=chunk,
    )


@app.task(name="ingest.chunk", **TASK_OPTIONS)
def chunk(
    self: Task[Any, Any],
    version_ids: str | list[str],
    busy_waits: int = 0,
    handover: str | None = None,
) -> str:
    """Chunks a batch (one transaction stores every version's chunks), then sends it to embed.
    `handover`: the convert task that kept the versions' leases for this one."""
    return _run_batch(
        self, steps.chunk_versions, version_ids, busy_waits, then=embed, handover=handover
    )


def _run_batch(
    task: Task[Any, Any],
    stage: Callable[..., steps.Outcome],
    version_ids: str | list[str],
    busy_waits: int,
    then: Task[Any, Any] | None = None,
    handover: str | None = None,
) -> str:
    """A stage over a batch of versions: the versions done go on to `then` in one message
    (sent after the stage's commits), the busy ones are tried again later on their own, a
    transient error retries the batch (what was stored stays stored)."""
    ids = [version_ids] if isinstance(version_ids, str) else list(version_ids)
    settings = get_settings()
    try:
        outcome = stage(
            [uuid.UUID(v) for v in ids],
            task.request.id or f"local-{uuid.uuid4()}",
            handover_from=handover,
        )
    except Exception as exc:
        _retry_or_fail(task, exc, ids, busy_waits)
        return "stopped: failed"
    if then is not None and outcome.go_on:
        then.apply_async(([str(v) for v in outcome.go_on],), {"handover": outcome.handover})
    if outcome.ocr:
        _send_to_ocr(outcome.ocr)
    busy = [str(v) for v in outcome.busy]
    if busy and not _gave_up_waiting(busy_waits, f"versions {', '.join(busy)}"):
        if set(busy) == set(ids) and not outcome.go_on and not outcome.retry:  # all of it waits
            raise task.retry(
                args=(busy,),
                kwargs={**(task.request.kwargs or {}), "busy_waits": busy_waits + 1},
                countdown=settings.busy_retry_seconds,
            )
        task.apply_async(
            (busy,),
            {"busy_waits": busy_waits + 1},
            countdown=settings.busy_retry_seconds,
        )
    if outcome.retry and outcome.error is not None:  # each met an error of its own
        _retry_or_fail(task, outcome.error, [str(v) for v in outcome.retry], busy_waits)
    return str(outcome)


@app.task(name="ingest.embed", **TASK_OPTIONS)
def embed(
    self: Task[Any, Any],
    version_ids: str | list[str],
    busy_waits: int = 0,
    handover: str | None = None,
) -> str:
    """Embeds its versions and the others waiting in `embedding`, in full requests.
    `handover`: the chunk task that kept the versions' leases for this one."""
    return _run_batch(
        self, steps.embed_versions, version_ids, busy_waits, then=upsert, handover=handover
    )


@app.task(name="ingest.upsert", **TASK_OPTIONS)
def upsert(
    self: Task[Any, Any],
    version_ids: str | list[str],
    busy_waits: int = 0,
    handover: str | None = None,
) -> str:
    """`handover`: the embed task that kept the versions' leases for this one."""
    return _run_batch(
        self, steps.upsert_versions, version_ids, busy_waits, then=finalize, handover=handover
    )


@app.task(name="ingest.finalize", **TASK_OPTIONS)
def finalize(
    self: Task[Any, Any],
    version_ids: str | list[str],
    busy_waits: int = 0,
    handover: str | None = None,
) -> str:
    return _run_batch(self, steps.finalize_versions, version_ids, busy_waits, handover=handover)


@app.task(name="ingest.relabel", **TASK_OPTIONS)
def relabel(
    self: Task[Any, Any],
    version_ids: str | list[str],
    busy_waits: int = 0,
    handover: str | None = None,
) -> str:
    """A metadata version: its fields onto the current points' payloads (io queue: the
    process that holds Qdrant), nothing embedded."""
    return _run_batch(self, steps.relabel_versions, version_ids, busy_waits, handover=handover)


@app.task(name="ingest.delete", **TASK_OPTIONS)
def delete(self: Task[Any, Any], document_id: str, busy_waits: int = 0) -> str:
    outcome = steps.delete_document(uuid.UUID(document_id), actor=self.name)
    if outcome.busy:
        return _retry_busy(self, busy_waits, f"document {document_id}")
    return str(outcome)
