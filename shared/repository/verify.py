"""What `ingest verify` reads: the current chunks behind a page of points, with what their
payloads are made from, and which documents the pipeline is still working on."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session, undefer

from shared.models import Chunk, Document, DocumentVersion
from shared.states import IN_FLIGHT


def current_chunks_at(
    session: Session, point_ids: Sequence[uuid.UUID], *, with_vectors: bool = False
) -> list[tuple[Chunk, DocumentVersion, Document]]:
    """The chunks of current versions (of undeleted documents) among these point ids, each
    with its version and document: what `indexing.payload` makes the point's payload from.
    A point id is a current chunk's at most once (it names the document and the text).
    Versions and documents are read once each, not joined to every chunk: their JSON columns
    decoded per chunk row took half of a verify of 50,000 points."""
    if not point_ids:
        return []
    query = (
        sa.select(Chunk)
        .join(Document, Document.current_version_id == Chunk.version_id)
        .where(Document.deleted_at.is_(None), Chunk.point_id.in_(list(point_ids)))
    )
    if with_vectors:
        query = query.options(undefer(Chunk.vector), undefer(Chunk.sparse))
    chunks = list(session.scalars(query))
    version_ids = list({chunk.version_id for chunk in chunks})
    versions = {
        v.id: v
        for v in session.scalars(
            sa.select(DocumentVersion).where(DocumentVersion.id.in_(version_ids))
        )
    }
    documents = {
        d.id: d
        for d in session.scalars(
            sa.select(Document).where(Document.id.in_([v.document_id for v in versions.values()]))
        )
    }
    return [
        (chunk, versions[chunk.version_id], documents[versions[chunk.version_id].document_id])
        for chunk in chunks
    ]


def documents_in_flight(session: Session, document_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    """Those of these documents with a version the pipeline has not finished: their points
    are being rewritten (a repair leaves them to it)."""
    if not document_ids:
        return set()
    return set(
        session.scalars(
            sa.select(DocumentVersion.document_id)
            .where(
                DocumentVersion.document_id.in_(list(document_ids)),
                DocumentVersion.status.in_([s.value for s in IN_FLIGHT]),
            )
            .distinct()
        )
    )
