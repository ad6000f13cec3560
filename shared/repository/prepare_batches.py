"""Convert and chunk over a batch of versions: the embedded default (`ingest run`) converts and
chunks a group of what it registered in one go, and the Celery `ingest.convert` task takes the
pages waiting in `received` with its own (`shared.pipeline.prepare`). Each version still enters
and leaves each stage with its own conditional UPDATE and event, under its own lease; the batch
shares the transactions and, where the values are the same for all, the statements."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session, joinedload, undefer

from shared.models import DocumentVersion, utcnow
from shared.repository.batches import VERSIONS, add_move_events
from shared.states import Status


def start_converting(
    session: Session,
    owner: str,
    lease: timedelta,
    version_ids: Sequence[uuid.UUID],
    *,
    take_waiting: int = 0,
) -> list[DocumentVersion]:
    """Move the versions still `received` and free to `converting` under `owner`'s lease, each
    with its event (the claim `claim_stage` makes, for many), and return them with their bytes
    and documents. The others are left as they are: the caller takes them one by one.

    `take_waiting`: also take up to that many other versions waiting in `received`, oldest
    first. Rows another transaction is claiming are skipped (it takes them), so two tasks
    claiming at once never wait on each other."""
    if not version_ids and not take_waiting:
        return []
    now = utcnow()
    free = sa.or_(DocumentVersion.lease_owner.is_(None), DocumentVersion.lease_expires_at < now)
    waiting = DocumentVersion.status == Status.RECEIVED
    by_bytes = DocumentVersion.content_url.is_(None)  # a page sent by URL is fetched alone
    wanted = set(
        session.scalars(
            sa.select(DocumentVersion.id)
            .where(DocumentVersion.id.in_(list(version_ids)), waiting, by_bytes, free)
            .with_for_update(skip_locked=True, key_share=True)
        )
    )
    if take_waiting:
        wanted.update(
            session.scalars(
                sa.select(DocumentVersion.id)
                .where(waiting, by_bytes, free, DocumentVersion.id.not_in(wanted))
                .order_by(DocumentVersion.updated_at)
                .limit(take_waiting)
                .with_for_update(skip_locked=True, key_share=True)
            )
        )
    if not wanted:
        return []
    moved = session.execute(
        sa.update(VERSIONS)
        .where(
            VERSIONS.c.id.in_(wanted),
            VERSIONS.c.status == Status.RECEIVED,
            VERSIONS.c.content_url.is_(None),
            sa.or_(VERSIONS.c.lease_owner.is_(None), VERSIONS.c.lease_expires_at < now),
        )
        .values(
            status=Status.CONVERTING,
            updated_at=now,
            converting_at=now,
            lease_owner=owner,
            lease_expires_at=now + lease,
            attempts=VERSIONS.c.attempts + 1,
        )
        .returning(VERSIONS.c.id, VERSIONS.c.document_id)
    ).all()
    add_move_events(session, moved, Status.RECEIVED, Status.CONVERTING, owner, now)
    if not moved:
        return []
    return list(
        session.scalars(
            sa.select(DocumentVersion)
            .options(undefer(DocumentVersion.content), joinedload(DocumentVersion.document))
            .where(DocumentVersion.id.in_([version_id for version_id, _ in moved]))
        ).unique()
    )


def waiting_by_url(session: Session, limit: int) -> list[uuid.UUID]:
    """Up to `limit` versions waiting in `received` whose bytes are still to be fetched (sent by
    URL, oldest first): a convert task takes them one by one, outside its batch."""
    if limit <= 0:
        return []
    now = utcnow()
    return list(
        session.scalars(
            sa.select(DocumentVersion.id)
            .where(
                DocumentVersion.status == Status.RECEIVED,
                DocumentVersion.content_url.is_not(None),
                sa.or_(
                    DocumentVersion.lease_owner.is_(None), DocumentVersion.lease_expires_at < now
                ),
            )
            .order_by(DocumentVersion.updated_at)
            .limit(limit)
        )
    )


def finish_converting(
    session: Session, owner: str, outputs: dict[uuid.UUID, dict[str, Any]]
) -> list[uuid.UUID]:
    """Store each version's conversion (and `chunk_count`: its chunks are ready too) with its
    move `converting -> chunking` (one UPDATE a version, its values being its own; the events
    together), keeping the lease: the same task chunks it. The ids that moved (one
    superseded meanwhile does not)."""
    now = utcnow()
    moved = []
    for version_id, values in outputs.items():
        document_id = session.execute(
            sa.update(VERSIONS)
            .where(
                VERSIONS.c.id == version_id,
                VERSIONS.c.status == Status.CONVERTING,
                VERSIONS.c.lease_owner == owner,
            )
            .values(status=Status.CHUNKING, updated_at=now, chunking_at=now, **values)
            .returning(VERSIONS.c.document_id)
        ).scalar_one_or_none()
        if document_id is not None:
            moved.append((version_id, document_id))
    add_move_events(session, moved, Status.CONVERTING, Status.CHUNKING, owner, now)
    return [version_id for version_id, _ in moved]


def conversions_of(session: Session, version_ids: Sequence[uuid.UUID]) -> list[DocumentVersion]:
    """The versions with their conversions (Markdown, page starts) and documents, for the
    chunk stage."""
    return list(
        session.scalars(
            sa.select(DocumentVersion)
            .options(undefer(DocumentVersion.markdown), joinedload(DocumentVersion.document))
            .where(DocumentVersion.id.in_(list(version_ids)))
            .order_by(DocumentVersion.updated_at)
        )
    )
