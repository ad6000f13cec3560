"""Documents as a whole: delete, describe, CMS deliveries, and the active Qdrant collection."""

from __future__ import annotations

import uuid
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared.models import ActiveIndex, Chunk, Document, DocumentVersion, WebhookDelivery, utcnow
from shared.repository.versions import add_event, dialect_insert, supersede_in_flight, transition
from shared.states import Status

# --- documents: delete -------------------------------------------------------------------


def mark_document_deleted(
    session: Session, document_id: uuid.UUID, actor: str | None = None
) -> bool:
    """Take the document out of the index's record; its points are removed by `ingest.delete`."""
    document = session.get(Document, document_id, with_for_update={"key_share": True})
    if document is None:
        return False
    if document.deleted_at is None:
        now = utcnow()
        supersede_in_flight(session, document.id, keep=None)
        if document.current_version_id:
            transition(
                session,
                document.current_version_id,
                Status.INDEXED,
                Status.SUPERSEDED,
                detail="document deleted",
            )
        document.deleted_at = now
        document.purged_at = None
        document.current_version_id = None
        document.updated_at = now
        add_event(session, document.id, None, None, "deleted", actor=actor)
    return True


def document_still_deleted(session: Session, document_id: uuid.UUID) -> bool:
    """Whether the document is (still) marked deleted: a publish after the delete clears it."""
    return (
        session.scalar(
            sa.select(Document.id).where(
                Document.id == document_id, Document.deleted_at.is_not(None)
            )
        )
        is not None
    )


def mark_purged(session: Session, document_id: uuid.UUID) -> None:
    session.execute(sa.delete(Chunk).where(Chunk.document_id == document_id))
    session.execute(
        sa.update(Document)
        .where(Document.id == document_id, Document.deleted_at.is_not(None))
        .values(purged_at=utcnow())
    )


# --- the active Qdrant collection (reindex) ---------------------------------------------


def active_collection(session: Session, model: str, dimensions: int) -> str | None:
    return session.scalar(
        sa.select(ActiveIndex.collection).where(
            ActiveIndex.model == model, ActiveIndex.dimensions == dimensions
        )
    )


def set_active_collection(session: Session, model: str, dimensions: int, collection: str) -> None:
    row = session.get(ActiveIndex, (model, dimensions))
    if row is None:
        session.add(ActiveIndex(model=model, dimensions=dimensions, collection=collection))
    else:
        row.collection = collection
        row.switched_at = utcnow()


def current_version_ids(
    session: Session, finished_since: datetime | None = None
) -> list[uuid.UUID]:
    """Every document's current version (optionally only those indexed since a moment)."""
    query = (
        sa.select(DocumentVersion.id)
        .join(Document, Document.current_version_id == DocumentVersion.id)
        .where(Document.deleted_at.is_(None))
        .order_by(DocumentVersion.finished_at)
    )
    if finished_since is not None:
        query = query.where(DocumentVersion.finished_at >= finished_since)
    return list(session.scalars(query))


# --- CMS deliveries: each handled once -------------------------------------------------


def record_delivery(session: Session, delivery_id: str, event: str) -> bool:
    """Claim a CMS delivery id for the webhook. False if it was already seen.

    Concurrent duplicates wait on the primary key; exactly one of them gets True.
    """
    insert = dialect_insert(session)
    result = session.execute(
        insert(WebhookDelivery)
        .values(delivery_id=delivery_id, event=event, received_at=utcnow())
        .on_conflict_do_nothing(index_elements=["delivery_id"])
        .returning(WebhookDelivery.delivery_id)
    )
    return result.first() is not None


def complete_delivery(
    session: Session,
    delivery_id: str,
    document_id: uuid.UUID | None,
    version_id: uuid.UUID | None,
) -> None:
    """Note what a claimed delivery did."""
    session.execute(
        sa.update(WebhookDelivery)
        .where(WebhookDelivery.delivery_id == delivery_id)
        .values(document_id=document_id, version_id=version_id)
    )
