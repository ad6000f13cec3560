"""Hidden from search: a whole document (its columns) or single chunks (`hidden_chunks`, by
point id, so a chunk stays hidden across versions while its text is unchanged). Each hide or
show writes an event with who did it and why."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared.models import Chunk, Document, HiddenChunk, utcnow
from shared.repository.versions import add_event, dialect_insert

#: Event `to_status` of a hide or show (the history shows them with the actor and reason).
HIDDEN = "hidden"
SHOWN = "shown"
CHUNK_HIDDEN = "chunk_hidden"
CHUNK_SHOWN = "chunk_shown"


@dataclass(frozen=True)
class ChunkTarget:
    """A chunk of the document's current version, as hide/show found it."""

    point_id: uuid.UUID
    index: int


def set_document_hidden(
    session: Session,
    document_id: uuid.UUID,
    hidden: bool,
    actor: str | None,
    reason: str | None,
) -> Document | None:
    """Hide or show a document (None: no such document, or deleted). Hiding an already hidden
    document keeps its first moment and writes another event (a new reason is kept)."""
    document = session.get(Document, document_id, with_for_update={"key_share": True})
    if document is None or document.deleted_at is not None:
        return None
    if hidden:
        document.hidden_at = document.hidden_at or utcnow()
        document.hidden_by = actor
        document.hidden_reason = reason
    else:
        document.hidden_at = document.hidden_by = document.hidden_reason = None
    add_event(
        session, document_id, None, None, HIDDEN if hidden else SHOWN, actor=actor, detail=reason
    )
    return document


def find_current_chunk(session: Session, document: Document, ref: str) -> ChunkTarget | None:
    """A chunk of the document's current version by its index (`3`) or its point id."""
    if document.current_version_id is None:
        return None
    query = sa.select(Chunk.point_id, Chunk.index).where(
        Chunk.version_id == document.current_version_id
    )
    if ref.isdigit():
        query = query.where(Chunk.index == int(ref))
    else:
        try:
            query = query.where(Chunk.point_id == uuid.UUID(ref))
        except ValueError:
            return None
    row = session.execute(query).first()
    return ChunkTarget(row[0], row[1]) if row else None


def set_chunk_hidden(
    session: Session,
    document_id: uuid.UUID,
    chunk: ChunkTarget,
    hidden: bool,
    actor: str | None,
    reason: str | None,
) -> None:
    """Hide or show one chunk (by its point id) with its event."""
    if hidden:
        insert = dialect_insert(session)
        values = {"hidden_by": actor, "reason": reason, "at": utcnow()}
        session.execute(
            insert(HiddenChunk)
            .values(document_id=document_id, point_id=chunk.point_id, **values)
            .on_conflict_do_update(index_elements=["document_id", "point_id"], set_=values)
        )
    else:
        session.execute(
            sa.delete(HiddenChunk).where(
                HiddenChunk.document_id == document_id, HiddenChunk.point_id == chunk.point_id
            )
        )
    detail = f"chunk {chunk.index}" + (f": {reason}" if reason else "")
    add_event(
        session,
        document_id,
        None,
        None,
        CHUNK_HIDDEN if hidden else CHUNK_SHOWN,
        actor=actor,
        detail=detail,
    )


def hidden_points_of(session: Session, document_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    """The hidden chunks' point ids of these documents."""
    if not document_ids:
        return set()
    return set(
        session.scalars(
            sa.select(HiddenChunk.point_id).where(HiddenChunk.document_id.in_(document_ids))
        )
    )


def hidden_chunks_of(session: Session, document_id: uuid.UUID) -> dict[uuid.UUID, HiddenChunk]:
    """The document's hidden chunks by point id, with who hid them and why."""
    rows = session.scalars(sa.select(HiddenChunk).where(HiddenChunk.document_id == document_id))
    return {row.point_id: row for row in rows}


def hidden_documents_query() -> sa.Select[uuid.UUID]:
    """The hidden documents not deleted (read through the partial index `ix_documents_hidden`:
    every search runs this)."""
    return sa.select(Document.id).where(
        Document.hidden_at.is_not(None), Document.deleted_at.is_(None)
    )


def hidden_everywhere(
    connection: Session | sa.Connection,
) -> tuple[set[uuid.UUID], set[uuid.UUID]]:
    """Every hidden document id and every hidden chunk's point id (search leaves them out
    even where the index's `hidden` payload was not updated yet), read in one statement:
    every search runs it, on an autocommit connection one round trip (`db.autocommit`)."""
    both = sa.union_all(
        hidden_documents_query().add_columns(sa.literal(False).label("chunk")),
        sa.select(HiddenChunk.point_id, sa.literal(True).label("chunk")),
    )
    documents: set[uuid.UUID] = set()
    points: set[uuid.UUID] = set()
    for found, chunk in connection.execute(both):
        (points if chunk else documents).add(found)
    return documents, points


def current_point_ids_of(session: Session, document_id: uuid.UUID) -> list[uuid.UUID]:
    """The point ids of the document's current version (what its hide/show updates in Qdrant)."""
    return list(
        session.scalars(
            sa.select(Chunk.point_id)
            .join(Document, Document.current_version_id == Chunk.version_id)
            .where(Document.id == document_id)
        )
    )
