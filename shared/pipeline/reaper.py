"""The reaper (Celery beat, `ingest.reap`): nothing stays stuck where nobody sees it.

- a version left in `received` (its chain was never sent: the broker was down at the commit)
  is sent again (a metadata version to its relabel task);
- a version in a work stage with no live task and no progress for `stuck_after_seconds` is
  sent again from that stage: when its task died midway (the lease ran out) that counts as an
  attempt, and after `max_attempts` it ends `failed` with code `stuck`; when it merely has no
  task, it is sent again only once its queue is empty (a long backlog is not a fault);
- a deleted document whose points are not yet removed gets its delete task again.
Leases keep a version from running twice at once, whatever the reaper sends.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from shared import repository as repo
from shared.db import transaction
from shared.models import utcnow
from shared.pipeline.failures import fail_version
from shared.settings import Settings, get_settings
from shared.states import WORK_STAGES, Status

log = logging.getLogger(__name__)

EnqueueVersion = Callable[[uuid.UUID, Status], object]
EnqueueDelete = Callable[[uuid.UUID], object]
Backlog = Callable[[Status], int]


@dataclass
class ReapReport:
    resent: list[uuid.UUID] = field(default_factory=list)
    failed: list[uuid.UUID] = field(default_factory=list)
    purges: list[uuid.UUID] = field(default_factory=list)


def reap(
    enqueue_version: EnqueueVersion,
    enqueue_delete: EnqueueDelete,
    settings: Settings | None = None,
    backlog: Backlog = lambda _stage: 0,
    enqueue_relabel: EnqueueDelete | None = None,
) -> ReapReport:
    """One round. `backlog(stage)` is the number of messages waiting in the queue that serves
    `stage`: while it is not empty, a version without a task is most likely queued behind the
    others (a large import), so it is left alone instead of sent again and again.

    The backlogs are measured once, before this round sends anything: counting its own sends
    would let only the first lost version of each queue through per round, and after a broker
    lost its queues the rest would trickle out over many rounds. Each version is still sent at
    most once per round (`touch_for_retry`), and leases keep a twice-sent one from running
    twice."""
    settings = settings or get_settings()
    now = utcnow()
    report = ReapReport()
    queued = {stage: backlog(stage) for stage in (Status.RECEIVED, *WORK_STAGES)}

    if queued[Status.RECEIVED] == 0:
        with transaction() as session:
            waiting = repo.waiting_in_received(
                session, now - timedelta(seconds=settings.received_grace_seconds)
            )
        _resend_waiting(report, waiting, lambda v: enqueue_version(v, Status.RECEIVED))

    if enqueue_relabel is not None:
        with transaction() as session:
            relabels = repo.waiting_relabels(
                session, now - timedelta(seconds=settings.received_grace_seconds)
            )
        _resend_waiting(report, relabels, enqueue_relabel)

    with transaction() as session:
        stuck = repo.stuck_in_stage(session, now - timedelta(seconds=settings.stuck_after_seconds))
    for version in stuck:
        stage = Status(version.status)
        # A lease that ran out means a task died working on it (a crash, an OOM kill): that
        # counts as an attempt. No lease means its message was lost, or is still queued.
        crashed = version.lease_owner is not None
        if not crashed and queued[stage] > 0:
            continue
        if crashed and version.attempts >= settings.max_attempts:
            message = (
                f"Processing stopped in the {stage} stage {version.attempts} times "
                "without finishing. An operator should check the worker logs; "
                "re-ingest the document to try again."
            )
            if fail_version(
                version.id, code="stuck", message=message, retryable=True, actor="reaper"
            ):
                report.failed.append(version.id)
            continue
        with transaction() as session:
            if not repo.touch_for_retry(session, version, bump_attempts=crashed):
                continue
            why = (
                "the task working on it stopped (its lease ran out)"
                if crashed
                else f"no task for {settings.stuck_after_seconds}s"
            )
            repo.add_event(
                session,
                version.document_id,
                version.id,
                stage,
                stage,
                actor="reaper",
                detail=f"{why}: sent again",
            )
        if _send(enqueue_version, version.id, stage):
            report.resent.append(version.id)

    with transaction() as session:
        unpurged = repo.unpurged_documents(
            session, now - timedelta(seconds=settings.received_grace_seconds)
        )
    for document_id in unpurged:
        try:
            enqueue_delete(document_id)
            report.purges.append(document_id)
        except Exception as exc:
            log.warning("reaper could not send a delete: %r", exc)
    return report


def _send(enqueue_version: EnqueueVersion, version_id: uuid.UUID, stage: Status) -> bool:
    return _sent(lambda v: enqueue_version(v, stage), version_id)


def _sent(send: Callable[[uuid.UUID], object], version_id: uuid.UUID) -> bool:
    try:
        send(version_id)
    except Exception as exc:  # broker still down: the next round tries again
        log.warning("reaper could not send version %s: %r", version_id, exc)
        return False
    return True


def _resend_waiting(
    report: ReapReport, waiting: list[uuid.UUID], send: Callable[[uuid.UUID], object]
) -> None:
    """Versions still `received` past the grace (their message lost, or never sent): their
    retry time noted, then sent again."""
    for version_id in waiting:
        with transaction() as session:
            version = repo.load_version(session, version_id)
            if version is None or not repo.touch_for_retry(session, version, bump_attempts=False):
                continue
        if _sent(send, version_id):
            report.resent.append(version_id)
