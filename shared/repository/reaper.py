"""What the reaper looks for: versions waiting or stuck, deletes not yet purged."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared.documents import CONTENT
from shared.models import Document, DocumentVersion, utcnow
from shared.states import IN_FLIGHT, WORK_STAGES, Status

# --- the reaper ----------------------------------------------------------------------------


def waiting_in_received(session: Session, older_than: datetime) -> list[uuid.UUID]:
    """Versions whose chain was probably never sent (enqueue failed after the commit);
    metadata versions are `waiting_relabels`."""
    return list(
        session.scalars(
            sa.select(DocumentVersion.id).where(
                DocumentVersion.status == Status.RECEIVED,
                DocumentVersion.kind == CONTENT,
                DocumentVersion.updated_at < older_than,
                DocumentVersion.lease_owner.is_(None),
            )
        )
    )


def oldest_waiting_since(session: Session) -> datetime | None:
    """When the longest-waiting version that no task holds last moved (received, or between
    two stages); None when nothing waits. Old means nothing is taking work."""
    return session.scalar(
        sa.select(sa.func.min(DocumentVersion.updated_at)).where(
            DocumentVersion.status.in_([s.value for s in IN_FLIGHT]),
            DocumentVersion.lease_owner.is_(None),
        )
    )


def stuck_in_stage(session: Session, older_than: datetime) -> list[DocumentVersion]:
    """Versions in a work stage with no live task and no progress since `older_than`."""
    now = utcnow()
    return list(
        session.scalars(
            sa.select(DocumentVersion).where(
                DocumentVersion.status.in_([s.value for s in WORK_STAGES]),
                DocumentVersion.updated_at < older_than,
                sa.or_(
                    DocumentVersion.lease_owner.is_(None),
                    DocumentVersion.lease_expires_at < now,
                ),
            )
        )
    )


def waiting_for_work(session: Session) -> list[uuid.UUID]:
    """Every version waiting for `ingest serve`'s runner, oldest first: received (content or
    metadata), or left in a work stage with no live lease (given back at a shutdown, or a
    killed process's lease run out)."""
    now = utcnow()
    return list(
        session.scalars(
            sa.select(DocumentVersion.id)
            .where(
                DocumentVersion.status.in_([s.value for s in IN_FLIGHT]),
                sa.or_(
                    DocumentVersion.lease_owner.is_(None),
                    DocumentVersion.lease_expires_at < now,
                ),
            )
            .order_by(DocumentVersion.updated_at)
        )
    )


def touch_for_retry(session: Session, version: DocumentVersion, *, bump_attempts: bool) -> bool:
    """Claim a waiting version for one re-send (two reapers never both send it)."""
    values: dict[str, Any] = {"updated_at": utcnow()}
    if bump_attempts:
        values["attempts"] = DocumentVersion.attempts + 1
    result = session.execute(
        sa.update(DocumentVersion)
        .where(
            DocumentVersion.id == version.id,
            DocumentVersion.updated_at == version.updated_at,
            DocumentVersion.status == version.status,
        )
        .values(**values)
    )
    # An UPDATE gives a CursorResult (with rowcount); Session.execute is typed as Result.
    return bool(cast("sa.CursorResult[Any]", result).rowcount)


def unpurged_documents(session: Session, older_than: datetime) -> list[uuid.UUID]:
    return list(
        session.scalars(
            sa.select(Document.id).where(
                Document.deleted_at.is_not(None),
                Document.purged_at.is_(None),
                Document.deleted_at < older_than,
            )
        )
    )
