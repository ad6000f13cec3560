"""The convert and chunk stages over a batch of versions, for the Celery path.

A page converts and chunks in a millisecond or two; what a page cost the workers was the tasks
and transactions around that work. So `ingest.convert` takes, besides the versions it was sent
for, the other pages waiting in `received` (up to `STAGE_BATCH_VERSIONS`), converts them, and
stores every conversion in one transaction; `ingest.chunk` then chunks that batch and stores
the chunks in one more. Each version still moves through its own states, with its own event
and lease, and fails on its own; the batch keeps its leases from one stage to the next
(`handover`), so no other task takes a version in between.

A version the batch claim cannot take (a page sent by URL, a conversion an earlier task left
half done) goes through the one-version stage (`shared.pipeline.stages`) in the same task.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared import repository as repo
from shared.db import transaction
from shared.errors import PermanentError
from shared.log import get_logger
from shared.models import DocumentVersion, utcnow
from shared.pipeline import stages
from shared.pipeline.batches import BatchOutcome, lease_for, log_done
from shared.pipeline.convert import Ocr, OcrNeeded, convert
from shared.pipeline.failures import fail_version
from shared.repository import prepare_batches
from shared.settings import Settings, get_settings
from shared.states import TERMINAL, Status

log = get_logger(__name__)


def _where_they_stand(
    session: Session, version_ids: Sequence[uuid.UUID], owner: str
) -> tuple[list[uuid.UUID], list[uuid.UUID], list[uuid.UUID], list[uuid.UUID]]:
    """For versions a batch claim did not take: (to run alone here, to go on, to wait for, to
    stop)."""
    if not version_ids:
        return [], [], [], []
    now = utcnow()
    rows = session.execute(
        sa.select(
            DocumentVersion.id,
            DocumentVersion.status,
            sa.and_(
                DocumentVersion.lease_owner.is_not(None),
                DocumentVersion.lease_owner != owner,
                DocumentVersion.lease_expires_at >= now,
            ),
        ).where(DocumentVersion.id.in_(list(version_ids)))
    ).all()
    alone, go_on, wait, stop = [], [], [], []
    for version_id, status, held_by_another in rows:
        state = Status(status)
        converting = state in (Status.RECEIVED, Status.CONVERTING)
        if state in TERMINAL:
            stop.append(version_id)
        elif converting and held_by_another:
            wait.append(version_id)  # tried again later: if its holder dies, this takes it
        elif converting:
            alone.append(version_id)
        elif held_by_another:
            stop.append(version_id)  # past convert, carried on by the task that holds it
        else:
            go_on.append(version_id)  # converted by an earlier delivery
    stop += [v for v in version_ids if v not in {row[0] for row in rows}]
    return alone, go_on, wait, stop


def convert_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    ocr: Ocr = Ocr.DEFER,
    handover_from: str | None = None,
    claimed: Callable[[bool], None] = lambda full: None,
) -> BatchOutcome:
    """Convert the versions and others waiting in `received`; those converted go on to chunk
    under this owner's leases (`handover`). Scanned PDFs are handed to the `ocr` queue
    (`outcome.ocr`) with `Ocr.DEFER`. `claimed` hears, before the work, whether the claim
    took as many waiting pages as it could (then more may be waiting)."""
    settings = settings or get_settings()
    others = max(settings.stage_batch_versions - len(version_ids), 0)
    with transaction() as session:
        versions = prepare_batches.start_converting(
            session, owner, lease_for(settings), version_ids, take_waiting=others
        )
        taken = {version.id for version in versions}
        alone, past, busy, stopped = _where_they_stand(
            session, [v for v in version_ids if v not in taken], owner
        )
        room = others - len(taken - set(version_ids))
        fetch = prepare_batches.waiting_by_url(session, room)
        alone += [v for v in fetch if v not in alone]
    claimed(len(taken - set(version_ids)) + len(fetch) >= others)
    outcome = BatchOutcome(go_on=past, busy=busy, stopped=stopped)
    outputs: dict[uuid.UUID, dict[str, Any]] = {}
    give_back: list[uuid.UUID] = []
    for version in versions:
        try:
            converted = convert(
                version.content,
                version.media_type,
                version.filename,
                language=version.document.language,
                ocr=ocr,
            )
        except PermanentError as exc:
            fail_version(version.id, code=exc.code, message=exc.message, actor=owner)
            outcome.stopped.append(version.id)
            continue
        except OcrNeeded:
            give_back.append(version.id)
            outcome.ocr.append(version.id)
            continue
        except Exception as exc:  # tried again on its own by the task, with its budget
            give_back.append(version.id)
            outcome.retry.append(version.id)
            outcome.error = exc
            continue
        outputs[version.id] = stages.conversion_output(converted)
    try:
        with transaction() as session:
            moved = prepare_batches.finish_converting(session, owner, outputs)
            repo.release_batch(session, owner, give_back + [v for v in outputs if v not in moved])
    except BaseException:
        with transaction() as session:
            repo.release_batch(session, owner, list(taken))
        raise
    log_done(Status.CONVERTING, {v.id: v.document_id for v in versions}, moved)
    outcome.go_on += moved
    outcome.stopped += [v for v in outputs if v not in moved]
    outcome.handover = owner
    _run_alone(alone, owner, ocr, outcome)
    return outcome


def _run_alone(alone: list[uuid.UUID], owner: str, ocr: Ocr, outcome: BatchOutcome) -> None:
    """The one-version convert stage, for what the batch claim could not take."""
    for version_id in alone:
        try:
            result = stages.convert_version(version_id, owner, ocr)
        except Exception as exc:
            outcome.retry.append(version_id)
            outcome.error = exc
            continue
        if result is stages.Outcome.NEEDS_OCR:
            outcome.ocr.append(version_id)
        elif result is stages.Outcome.BUSY:
            outcome.busy.append(version_id)
        elif result is stages.Outcome.STOPPED:
            outcome.stopped.append(version_id)
        else:  # done or skipped: released, so the chunk task claims it as a free version
            outcome.go_on.append(version_id)


def chunk_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    handover_from: str | None = None,
) -> BatchOutcome:
    """Chunk the versions' conversions and store every version's chunks and move in one
    transaction; those chunked go on to embed under this owner's leases."""
    settings = settings or get_settings()
    with transaction() as session:
        claim = repo.claim_batch(
            session,
            Status.CHUNKING,
            owner,
            lease_for(settings),
            version_ids,
            handover_from=handover_from,
        )
        outcome = BatchOutcome(go_on=sorted(claim.past), stopped=sorted(claim.held | claim.gone))
        if not claim.claimed:
            return outcome
        versions = prepare_batches.conversions_of(session, list(claim.claimed))
    ctx = stages.StageContext(uuid.UUID(int=0), owner, settings)
    rows: dict[uuid.UUID, list[dict[str, Any]]] = {}
    described: dict[uuid.UUID, tuple[uuid.UUID, dict[str, Any]]] = {}
    for version in versions:
        try:
            rows[version.id], found = stages.chunk_stored_conversion(ctx, version)
        except PermanentError as exc:
            fail_version(version.id, code=exc.code, message=exc.message, actor=owner)
            outcome.stopped.append(version.id)
            continue
        described[version.id] = (version.document_id, found)
    held = list(claim.claimed)
    try:
        with transaction() as session:
            for document_id, found in described.values():
                repo.describe_document(session, document_id, found)
            repo.replace_chunks_of(session, rows)
            moved = repo.finish_batch(
                session,
                Status.CHUNKING,
                owner,
                list(rows),
                keep_lease=True,
                each={"chunk_count": {v: len(some) for v, some in rows.items()}},
            )
            repo.release_batch(session, owner, [v for v in held if v not in moved])
    except BaseException:
        with transaction() as session:
            repo.release_batch(session, owner, held)
        raise
    log_done(Status.CHUNKING, claim.claimed, moved)
    outcome.go_on += moved
    outcome.stopped += [v for v in rows if v not in moved]
    outcome.handover = owner
    return outcome
