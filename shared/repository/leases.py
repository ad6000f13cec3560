"""Leases: which task holds which version for a stage, and the moves from stage to stage.

Every operation takes a batch of versions; one version is a batch of one. Each version is still
claimed with its own lease, moved with its own event and failed on its own; the batch only
shares the round trips. A claim is one conditional UPDATE, so exactly one task holds a version
however many claim at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared.documents import CONTENT
from shared.models import Chunk, Document, DocumentVersion, Event, utcnow
from shared.repository.versions import STAGE_TIMESTAMP
from shared.states import TERMINAL, Status, can_move, next_stage, stage_order

# The tables, for the statements every batch runs: ORM-enabled INSERT, UPDATE and DELETE cost
# several times the CPU of the same statement in Core (no ORM state to synchronise here).
VERSIONS = cast(sa.Table, DocumentVersion.__table__)
EVENTS = cast(sa.Table, Event.__table__)
CHUNKS = cast(sa.Table, Chunk.__table__)


@dataclass(frozen=True)
class BatchClaim:
    """What a claim found: the versions now held, and where the others stand."""

    claimed: dict[uuid.UUID, uuid.UUID]  # version id -> document id
    held: set[uuid.UUID]  # in (or entering) the stage under another live lease
    past: set[uuid.UUID]  # beyond the stage and free (an earlier delivery did it): go on
    gone: set[uuid.UUID]  # left the pipeline, not yet at the stage, or never existed: stop


def _free(now: datetime, handover_from: str | None) -> sa.ColumnElement[bool]:
    """No live lease, or the lease of the task that handed the versions over."""
    free = sa.or_(VERSIONS.c.lease_owner.is_(None), VERSIONS.c.lease_expires_at < now)
    return free if handover_from is None else sa.or_(free, VERSIONS.c.lease_owner == handover_from)


def _waiting(
    session: Session,
    stage: Status,
    free: sa.ColumnElement[bool],
    skip: Sequence[uuid.UUID],
    *,
    versions: int,
    chunks: int,
) -> list[uuid.UUID]:
    """Other versions waiting for `stage`, oldest first: up to `versions` of them, or until
    about `chunks` chunks (the embed stage fills its requests across documents that way)."""
    entry = Status.RECEIVED if stage is Status.CONVERTING else stage
    query = (
        sa.select(VERSIONS.c.id, VERSIONS.c.chunk_count)
        .where(
            VERSIONS.c.status == entry,
            VERSIONS.c.kind == CONTENT,  # a metadata version is the relabel step's
            free,
            VERSIONS.c.id.not_in(list(skip)),
        )
        .order_by(VERSIONS.c.updated_at)
    )
    if versions:
        return list(session.scalars(query.with_only_columns(VERSIONS.c.id).limit(versions)))
    taken, total = [], 0
    for version_id, count in session.execute(query.limit(2048)).all():
        if total >= chunks:
            break
        taken.append(version_id)
        total += count or 0
    return taken


def claim(
    session: Session,
    stage: Status,
    owner: str,
    lease: timedelta,
    version_ids: Sequence[uuid.UUID],
    *,
    take_waiting: int = 0,
    take_waiting_chunks: int = 0,
    handover_from: str | None = None,
) -> BatchClaim:
    """Take `version_ids` for `stage`: enter it from `received` (convert: with its event, one
    attempt more) or resume it when no live lease holds it (a dead task's ran out).
    `take_waiting` / `take_waiting_chunks`: also other versions waiting for the stage.
    `handover_from`: the previous stage's task kept its leases for this one.

    The rows are locked first, skipping those another task is locking (it takes them): two
    tasks taking each other's versions at once never wait on each other (no deadlock), and the
    UPDATEs touch only rows this transaction holds."""
    now = utcnow()
    free = _free(now, handover_from)
    entry = Status.RECEIVED if stage is Status.CONVERTING else None
    states = [stage] if entry is None else [entry, stage]
    extra = (
        _waiting(
            session, stage, free, version_ids, versions=take_waiting, chunks=take_waiting_chunks
        )
        if take_waiting or take_waiting_chunks
        else []
    )
    wanted = set(
        session.scalars(
            sa.select(VERSIONS.c.id)
            .where(
                VERSIONS.c.id.in_([*version_ids, *extra]),
                VERSIONS.c.status.in_(states),
                VERSIONS.c.kind == CONTENT,
                free,
            )
            .with_for_update(skip_locked=True, key_share=True)
        )
    )
    claimed: dict[uuid.UUID, uuid.UUID] = {}
    lease_values = {"lease_owner": owner, "lease_expires_at": now + lease, "updated_at": now}
    if wanted and entry is not None:
        entered = session.execute(
            sa.update(VERSIONS)
            .where(VERSIONS.c.id.in_(wanted), VERSIONS.c.status == entry, free)
            .values(
                status=stage,
                attempts=VERSIONS.c.attempts + 1,
                **{STAGE_TIMESTAMP[stage]: now},
                **lease_values,
            )
            .returning(VERSIONS.c.id, VERSIONS.c.document_id)
        ).all()
        add_move_events(session, entered, entry, stage, owner, now)
        claimed.update(entered)
    if wanted - claimed.keys():
        claimed.update(
            session.execute(
                sa.update(VERSIONS)
                .where(VERSIONS.c.id.in_(wanted - claimed.keys()), VERSIONS.c.status == stage, free)
                .values(**lease_values)
                .returning(VERSIONS.c.id, VERSIONS.c.document_id)
            ).all()
        )
    held, past, gone = _where_the_rest_stand(
        session, stage, owner, free, [v for v in version_ids if v not in claimed]
    )
    return BatchClaim(claimed, held, past, gone)


def _where_the_rest_stand(
    session: Session,
    stage: Status,
    owner: str,
    free: sa.ColumnElement[bool],
    rest: Sequence[uuid.UUID],
) -> tuple[set[uuid.UUID], set[uuid.UUID], set[uuid.UUID]]:
    """(held, past, gone) for the versions a claim did not take."""
    rows = (
        session.execute(
            sa.select(
                VERSIONS.c.id,
                VERSIONS.c.status,
                # under a live lease of another task (not ours from an earlier delivery)
                sa.and_(sa.not_(free), VERSIONS.c.lease_owner != owner),
            ).where(VERSIONS.c.id.in_(list(rest)))
        ).all()
        if rest
        else []
    )
    statuses = {version_id: (Status(status), leased) for version_id, status, leased in rows}
    held: set[uuid.UUID] = set()
    past: set[uuid.UUID] = set()
    gone: set[uuid.UUID] = set()
    for version_id in rest:
        status, leased = statuses.get(version_id, (None, False))
        if status is None or status in TERMINAL - {Status.INDEXED}:
            gone.add(version_id)
        elif status == stage or (stage is Status.CONVERTING and status is Status.RECEIVED):
            held.add(version_id)
        elif stage_order(status) > stage_order(stage):
            # Beyond the stage under another task's live lease: that task carries it on (the
            # one whose batch took it); if it dies, the reaper resumes it when the lease ends.
            (held if leased else past).add(version_id)
        else:
            gone.add(version_id)  # not yet at the stage: its own chain brings it here
    return held, past, gone


def finish(
    session: Session,
    stage: Status,
    owner: str,
    version_ids: Sequence[uuid.UUID],
    *,
    keep_lease: bool = False,
    each: Mapping[uuid.UUID, Mapping[str, Any]] | None = None,
) -> list[uuid.UUID]:
    """Move the versions this owner holds from `stage` to the next state, each with its event,
    and give the leases back (or keep them for the next stage's task: `keep_lease`); the ids
    that moved (a superseded one does not). `each`: the columns a version's move writes (its
    conversion, its chunk count), one UPDATE a version; without it one UPDATE for all."""
    target = next_stage(stage)
    if not version_ids or not can_move(stage, target):
        return []
    now = utcnow()
    values: dict[str, Any] = {"status": target, "updated_at": now}
    if not keep_lease:
        values.update(lease_owner=None, lease_expires_at=None)
    if target in STAGE_TIMESTAMP:
        values[STAGE_TIMESTAMP[target]] = now
    mine = sa.and_(VERSIONS.c.status == stage, VERSIONS.c.lease_owner == owner)
    moved: list[tuple[uuid.UUID, uuid.UUID]]
    if each is None:
        moved = [
            (row.id, row.document_id)
            for row in session.execute(
                sa.update(VERSIONS)
                .where(VERSIONS.c.id.in_(list(version_ids)), mine)
                .values(**values)
                .returning(VERSIONS.c.id, VERSIONS.c.document_id)
            )
        ]
    else:
        moved = []
        for version_id in version_ids:
            document_id = session.execute(
                sa.update(VERSIONS)
                .where(VERSIONS.c.id == version_id, mine)
                .values(**values, **each.get(version_id, {}))
                .returning(VERSIONS.c.document_id)
            ).scalar_one_or_none()
            if document_id is not None:
                moved.append((version_id, document_id))
    add_move_events(session, moved, stage, target, owner, now)
    return [version_id for version_id, _ in moved]


def add_move_events(
    session: Session,
    moved: Sequence[tuple[uuid.UUID, uuid.UUID]],
    source: Status,
    target: Status,
    owner: str,
    at: datetime,
) -> None:
    """One event per (version id, document id) that moved from `source` to `target`, in one
    INSERT."""
    if moved:
        session.execute(
            sa.insert(EVENTS),
            [
                {
                    "document_id": document_id,
                    "version_id": version_id,
                    "from_status": str(source),
                    "to_status": str(target),
                    "actor": owner,
                    "at": at,
                }
                for version_id, document_id in moved
            ],
        )


def release(session: Session, owner: str, version_ids: Sequence[uuid.UUID]) -> None:
    """Give the leases back without moving (the next claim takes the versions)."""
    if version_ids:
        session.execute(
            sa.update(VERSIONS)
            .where(VERSIONS.c.id.in_(list(version_ids)), VERSIONS.c.lease_owner == owner)
            .values(lease_owner=None, lease_expires_at=None)
        )


def release_owner(
    session: Session, owner: str, *, count_attempt: bool = False
) -> list[tuple[uuid.UUID, str, int]]:
    """Give back every lease `owner` still holds: the versions, their stage and attempts. With
    `count_attempt` each counts one attempt more (a process died working on them)."""
    values: dict[str, Any] = {"lease_owner": None, "lease_expires_at": None}
    if count_attempt:
        values["attempts"] = VERSIONS.c.attempts + 1
    rows = session.execute(
        sa.update(VERSIONS)
        .where(VERSIONS.c.lease_owner == owner)
        .values(**values)
        .returning(VERSIONS.c.id, VERSIONS.c.status, VERSIONS.c.attempts)
    )
    return [(row.id, row.status, row.attempts) for row in rows]


def heartbeat(
    session: Session, owner: str, version_ids: Sequence[uuid.UUID], lease: timedelta
) -> set[uuid.UUID]:
    """Extend the leases during long work; the ids still held by this owner."""
    if not version_ids:
        return set()
    now = utcnow()
    return set(
        session.scalars(
            sa.update(VERSIONS)
            .where(VERSIONS.c.id.in_(list(version_ids)), VERSIONS.c.lease_owner == owner)
            .values(lease_expires_at=now + lease, updated_at=now)
            .returning(VERSIONS.c.id)
        )
    )


def lock_documents_of(session: Session, version_ids: Sequence[uuid.UUID]) -> None:
    """Lock the documents of the versions, in id order, before any version row (LOCK_ORDER):
    a finalize that claims and makes current in one transaction takes them as registering
    does, so the two never deadlock."""
    if version_ids:
        session.execute(
            sa.select(Document.id)
            .where(
                Document.id.in_(
                    sa.select(DocumentVersion.document_id).where(
                        DocumentVersion.id.in_(list(version_ids))
                    )
                )
            )
            .order_by(Document.id)
            .with_for_update(key_share=True)
        ).all()


def held_elsewhere(session: Session, claimed: Mapping[uuid.UUID, uuid.UUID]) -> set[uuid.UUID]:
    """The versions (of `claimed`: version id -> document id) whose document has another
    version still held by a live lease: finalize waits for it."""
    if not claimed:
        return set()
    live = session.execute(
        sa.select(VERSIONS.c.id, VERSIONS.c.document_id).where(
            VERSIONS.c.document_id.in_(set(claimed.values())),
            VERSIONS.c.lease_owner.is_not(None),
            VERSIONS.c.lease_expires_at > utcnow(),
        )
    ).all()
    held: dict[uuid.UUID, set[uuid.UUID]] = {}
    for version_id, document_id in live:
        held.setdefault(document_id, set()).add(version_id)
    return {v for v, document_id in claimed.items() if held.get(document_id, set()) - {v}}
