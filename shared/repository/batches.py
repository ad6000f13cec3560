"""Stages over a batch of versions: each version is still claimed with its own lease, moved with
its own event and failed on its own; the batch only shares the round trips."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session, undefer

from shared.models import Chunk, Document, DocumentVersion, Event, utcnow
from shared.repository.versions import STAGE_TIMESTAMP
from shared.states import TERMINAL, Status, can_move, next_stage, stage_order

# The tables, for the statements every batch runs: ORM-enabled INSERT, UPDATE and DELETE cost
# several times the CPU of the same statement in Core (no ORM state to synchronise here).
VERSIONS = DocumentVersion.__table__
EVENTS = Event.__table__
CHUNKS = Chunk.__table__


@dataclass(frozen=True)
class BatchClaim:
    """What a batch claim found: the versions now held, and where the others stand."""

    claimed: dict[uuid.UUID, uuid.UUID]  # version id -> document id
    held: set[uuid.UUID]  # in the stage, under another live lease: that task carries them
    past: set[uuid.UUID]  # beyond the stage (an earlier delivery did it): go on
    gone: set[uuid.UUID]  # left the pipeline, or never existed: stop


def claim_batch(
    session: Session,
    stage: Status,
    owner: str,
    lease: timedelta,
    version_ids: Sequence[uuid.UUID],
    *,
    take_waiting_chunks: int = 0,
    handover_from: str | None = None,
) -> BatchClaim:
    """Take `version_ids` for `stage` (those in it with no live lease), and with
    `take_waiting_chunks` also other versions waiting in the stage, oldest first, until about
    that many chunks: the embed stage fills its requests across documents that way.

    One conditional UPDATE: a version already held by a live lease is not taken, so exactly
    one task holds each version, however many claim at once. `handover_from`: the previous
    stage's task kept its lease for this one (no release and re-claim in between)."""
    now = utcnow()
    free = sa.or_(DocumentVersion.lease_owner.is_(None), DocumentVersion.lease_expires_at < now)
    core_free = sa.or_(VERSIONS.c.lease_owner.is_(None), VERSIONS.c.lease_expires_at < now)
    if handover_from is not None:
        free = sa.or_(free, DocumentVersion.lease_owner == handover_from)
        core_free = sa.or_(core_free, VERSIONS.c.lease_owner == handover_from)
    extra: list[uuid.UUID] = []
    if take_waiting_chunks > 0:
        rows = session.execute(
            sa.select(DocumentVersion.id, DocumentVersion.chunk_count)
            .where(
                DocumentVersion.status == stage,
                free,
                DocumentVersion.id.not_in(list(version_ids)),
            )
            .order_by(DocumentVersion.updated_at)
            .limit(2048)
        ).all()
        chunks = 0
        for version_id, count in rows:
            if chunks >= take_waiting_chunks:
                break
            extra.append(version_id)
            chunks += count or 0
    # The rows are locked first, skipping those another task is locking (it takes them): two
    # tasks taking each other's versions at once never wait on each other (no deadlock), and
    # the UPDATE below touches only rows this transaction holds.
    wanted = set(
        session.scalars(
            sa.select(DocumentVersion.id)
            .where(
                DocumentVersion.id.in_([*version_ids, *extra]),
                DocumentVersion.status == stage,
                free,
            )
            .with_for_update(skip_locked=True, key_share=True)
        )
    )
    claimed = (
        dict(
            session.execute(
                sa.update(VERSIONS)
                .where(VERSIONS.c.id.in_(wanted), VERSIONS.c.status == stage, core_free)
                .values(lease_owner=owner, lease_expires_at=now + lease, updated_at=now)
                .returning(VERSIONS.c.id, VERSIONS.c.document_id)
            ).all()
        )
        if wanted
        else {}
    )
    rest = [v for v in version_ids if v not in claimed]
    rows = (
        session.execute(
            sa.select(
                DocumentVersion.id,
                DocumentVersion.status,
                # under a live lease of another task (not ours from an earlier delivery)
                sa.and_(sa.not_(free), DocumentVersion.lease_owner != owner),
            ).where(DocumentVersion.id.in_(rest))
        ).all()
        if rest
        else []
    )
    statuses = {version_id: (status, leased) for version_id, status, leased in rows}
    held, past, gone = set(), set(), set()
    for version_id in rest:
        status, leased = statuses.get(version_id, (None, False))
        if status is None or Status(status) in TERMINAL - {Status.INDEXED}:
            gone.add(version_id)
        elif Status(status) == stage:
            held.add(version_id)
        elif stage_order(Status(status)) > stage_order(stage):
            # Beyond the stage under another task's live lease: that task carries it on (the
            # one whose batch took it); if it dies, the reaper resumes it when the lease ends.
            (held if leased else past).add(version_id)
        else:
            gone.add(version_id)  # not yet in the stage: its own chain brings it here
    return BatchClaim(claimed, held, past, gone)


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


def finish_batch(
    session: Session,
    stage: Status,
    owner: str,
    version_ids: Sequence[uuid.UUID],
    *,
    keep_lease: bool = False,
    each: dict[str, dict[uuid.UUID, object]] | None = None,
) -> list[uuid.UUID]:
    """Move the versions this owner holds from `stage` to the next state, each with its event,
    and give the leases back (or keep them for the next stage's task: `keep_lease`); the ids
    that moved (a superseded one does not). `each`: columns whose value differs by version
    (column -> version id -> value), written by the same UPDATE."""
    target = next_stage(stage)
    if not version_ids or not can_move(stage, target):
        return []
    now = utcnow()
    values: dict[str, object] = {"status": target, "updated_at": now}
    for column, by_version in (each or {}).items():
        values[column] = sa.case(by_version, value=VERSIONS.c.id)
    if not keep_lease:
        values.update(lease_owner=None, lease_expires_at=None)
    if target in STAGE_TIMESTAMP:
        values[STAGE_TIMESTAMP[target]] = now
    moved = session.execute(
        sa.update(VERSIONS)
        .where(
            VERSIONS.c.id.in_(list(version_ids)),
            VERSIONS.c.status == stage,
            VERSIONS.c.lease_owner == owner,
        )
        .values(**values)
        .returning(VERSIONS.c.id, VERSIONS.c.document_id)
    ).all()
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


def release_batch(session: Session, owner: str, version_ids: Sequence[uuid.UUID]) -> None:
    """Give the leases back without moving (the next stage claims them)."""
    if version_ids:
        session.execute(
            sa.update(VERSIONS)
            .where(VERSIONS.c.id.in_(list(version_ids)), VERSIONS.c.lease_owner == owner)
            .values(lease_owner=None, lease_expires_at=None)
        )


def release_owner(session: Session, owner: str) -> int:
    """Give back every lease `owner` still holds (a run that was killed left them); how many."""
    return session.execute(
        sa.update(VERSIONS)
        .where(VERSIONS.c.lease_owner == owner)
        .values(lease_owner=None, lease_expires_at=None)
    ).rowcount


def heartbeat_batch(
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


def chunks_without_vectors_of(session: Session, version_ids: Sequence[uuid.UUID]) -> list[Any]:
    """What the embed stage needs of the chunks still to embed (id, version id, point id,
    headings, text, token count, sections): only those columns, not whole rows."""
    return list(
        session.execute(
            sa.select(
                CHUNKS.c.id,
                CHUNKS.c.version_id,
                CHUNKS.c.point_id,
                CHUNKS.c.headings,
                CHUNKS.c.text,
                CHUNKS.c.token_count,
                CHUNKS.c.metadata["sections"].label("sections"),
            )
            .where(CHUNKS.c.version_id.in_(list(version_ids)), CHUNKS.c.vector.is_(None))
            .order_by(CHUNKS.c.version_id, CHUNKS.c.index)
        )
    )


def chunks_with_vectors_of(session: Session, version_ids: Sequence[uuid.UUID]) -> list[Chunk]:
    return list(
        session.scalars(
            sa.select(Chunk)
            .options(undefer(Chunk.vector), undefer(Chunk.sparse))
            .where(Chunk.version_id.in_(list(version_ids)))
            .order_by(Chunk.version_id, Chunk.index)
        )
    )


def add_usages(
    session: Session,
    tokens: dict[uuid.UUID, int],
    requests: dict[uuid.UUID, int],
    chunks: dict[uuid.UUID, int],
) -> None:
    """Add what answered requests cost to each version they served."""
    for version_id, count in chunks.items():
        session.execute(
            sa.update(VERSIONS)
            .where(VERSIONS.c.id == version_id)
            .values(
                tokens_spent=VERSIONS.c.tokens_spent + tokens.get(version_id, 0),
                embedding_requests=VERSIONS.c.embedding_requests + requests.get(version_id, 0),
                chunks_embedded=VERSIONS.c.chunks_embedded + count,
            )
        )
