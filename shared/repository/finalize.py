"""The finalize stage's reads and writes, over a batch of versions: a statement for the batch
instead of one per version."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared.models import Chunk, utcnow
from shared.repository.leases import CHUNKS, VERSIONS, add_move_events
from shared.repository.stages import DOCUMENTS
from shared.repository.versions import transition
from shared.states import Status


def stale_points_of(
    session: Session, versions: dict[uuid.UUID, uuid.UUID]
) -> dict[uuid.UUID, set[uuid.UUID]]:
    """For each version (version id -> document id): the points of its document's other
    versions that it does not use."""
    rows = (
        session.execute(
            sa.select(Chunk.document_id, Chunk.version_id, Chunk.point_id).where(
                Chunk.document_id.in_(set(versions.values()))
            )
        ).all()
        if versions
        else []
    )
    by_document: dict[uuid.UUID, list[tuple[uuid.UUID, uuid.UUID]]] = defaultdict(list)
    for document_id, version_id, point_id in rows:
        by_document[document_id].append((version_id, point_id))
    stale = {}
    for version_id, document_id in versions.items():
        points = by_document[document_id]
        own = {point for owner, point in points if owner == version_id}
        stale[version_id] = {p for owner, p in points if owner != version_id and p not in own}
    return stale


def make_current(
    session: Session, owner: str, version_ids: Sequence[uuid.UUID]
) -> list[sa.Row[Any]]:
    """`upserting -> indexed` for the versions this owner holds (at most one per document:
    finalize waits while another version of a document is held), each document pointed at
    its version, the versions made current before superseded, chunks no longer anybody's
    deleted. The rows made current (id, document id, number and what they cost)."""
    if not version_ids:
        return []
    now = utcnow()
    made = session.execute(
        sa.update(VERSIONS)
        .where(
            VERSIONS.c.id.in_(list(version_ids)),
            VERSIONS.c.status == Status.UPSERTING,
            VERSIONS.c.lease_owner == owner,
        )
        .values(
            status=Status.INDEXED,
            updated_at=now,
            finished_at=now,
            lease_owner=None,
            lease_expires_at=None,
        )
        .returning(
            VERSIONS.c.id,
            VERSIONS.c.document_id,
            VERSIONS.c.number,
            VERSIONS.c.chunk_count,
            VERSIONS.c.chunks_embedded,
            VERSIONS.c.tokens_spent,
        )
    ).all()
    if not made:
        return []
    add_move_events(
        session,
        [(row.id, row.document_id) for row in made],
        Status.UPSERTING,
        Status.INDEXED,
        owner,
        now,
    )
    by_document = {row.document_id: row for row in made}
    previous = session.execute(
        sa.select(DOCUMENTS.c.id, DOCUMENTS.c.current_version_id).where(
            DOCUMENTS.c.id.in_(by_document)
        )
    ).all()
    for document_id, current in previous:
        row = by_document[document_id]
        if current and current != row.id:
            transition(
                session,
                current,
                Status.INDEXED,
                Status.SUPERSEDED,
                detail=f"version {row.number} indexed",
            )
    session.execute(
        sa.update(DOCUMENTS)
        .where(DOCUMENTS.c.id.in_(by_document))
        .values(
            current_version_id=sa.case(
                {document_id: row.id for document_id, row in by_document.items()},
                value=DOCUMENTS.c.id,
            ),
            updated_at=now,
        )
    )
    made_ids = [row.id for row in made]
    # Vectors live in Qdrant now; older versions' chunks are no longer anybody's.
    session.execute(sa.update(CHUNKS).where(CHUNKS.c.version_id.in_(made_ids)).values(vector=None))
    session.execute(
        sa.delete(CHUNKS).where(
            CHUNKS.c.document_id.in_(by_document), CHUNKS.c.version_id.not_in(made_ids)
        )
    )
    return list(made)
