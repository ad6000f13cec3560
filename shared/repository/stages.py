"""What the pipeline's stages read and write: conversions, chunks, vectors, usage."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session, joinedload, undefer

from shared.documents import described_fields, described_tags
from shared.models import Chunk, Document, DocumentVersion, utcnow
from shared.repository.leases import CHUNKS, VERSIONS

DOCUMENTS = cast(sa.Table, Document.__table__)

# --- stage inputs and outputs -------------------------------------------------------------


def load_version(session: Session, version_id: uuid.UUID, *columns: str) -> DocumentVersion | None:
    """The version row, with the deferred columns named loaded (see `versions_with`)."""
    found = versions_with(session, [version_id], *columns)
    return found[0] if found else None


def versions_with(
    session: Session, version_ids: Sequence[uuid.UUID], *columns: str
) -> list[DocumentVersion]:
    """The version rows (oldest first), with the deferred columns named (`content`,
    `markdown`) loaded, and their documents when `document` is named (a stage reads them after
    the session closed)."""
    if not version_ids:
        return []
    options = [
        joinedload(DocumentVersion.document)
        if name == "document"
        else undefer(getattr(DocumentVersion, name))
        for name in columns
    ]
    return list(
        session.scalars(
            sa.select(DocumentVersion)
            .options(*options)
            .where(DocumentVersion.id.in_(list(version_ids)))
            .order_by(DocumentVersion.updated_at)
        ).unique()
    )


def save_fetched(
    session: Session,
    version_id: uuid.UUID,
    owner: str,
    content: bytes,
    sha256: str,
    media_type: str,
) -> None:
    """Store the bytes the worker downloaded for a page sent by URL."""
    session.execute(
        sa.update(DocumentVersion)
        .where(DocumentVersion.id == version_id, DocumentVersion.lease_owner == owner)
        .values(content=content, sha256=sha256, size_bytes=len(content), media_type=media_type)
    )


def replace_chunks_of(session: Session, rows: dict[uuid.UUID, Sequence[dict[str, Any]]]) -> None:
    """The versions' chunks, replacing any left by an earlier run (one DELETE, one INSERT)."""
    if not rows:
        return
    session.execute(sa.delete(CHUNKS).where(CHUNKS.c.version_id.in_(list(rows))))
    new = [
        {**_column_names(row), "version_id": version_id}
        for version_id, some in rows.items()
        for row in some
    ]
    if new:
        session.execute(sa.insert(CHUNKS), new)


def _column_names(row: dict[str, Any]) -> dict[str, Any]:
    """A chunk row keyed by column (the attribute `extra` is the column `metadata`)."""
    if "extra" not in row:
        return row
    named = dict(row)
    named["metadata"] = named.pop("extra")
    return named


def indexed_chunk_count(session: Session, document_id: uuid.UUID) -> int:
    """How many chunks the document's indexed (current) version has: 0 without one."""
    count = session.execute(
        sa.select(DocumentVersion.chunk_count)
        .join(Document, Document.current_version_id == DocumentVersion.id)
        .where(Document.id == document_id, Document.deleted_at.is_(None))
    ).scalar()
    return int(count or 0)


def describe_document(session: Session, document_id: uuid.UUID, found: dict[str, Any]) -> None:
    """Fill the document's title, URL, language and tags from its front matter or PDF
    metadata, where the uploader or the CMS did not give them.

    One UPDATE that keeps what is set (no read first: a round trip less per page); tags, rare
    in front matter, are compared in Python."""
    given = described_fields(found)
    if given:
        session.execute(
            sa.update(DOCUMENTS)
            .where(
                DOCUMENTS.c.id == document_id,
                sa.or_(*(DOCUMENTS.c[name].is_(None) for name in given)),
            )
            .values(
                {name: sa.func.coalesce(DOCUMENTS.c[name], value) for name, value in given.items()}
            )
        )
    tags = described_tags(found)
    if tags is not None:
        document = session.get(Document, document_id)
        if document is not None and not document.tags:
            document.tags = tags


def store_vectors(session: Session, vectors: dict[int, tuple[bytes, bool]]) -> None:
    """Save `{chunk id: (float32 bytes, embedded by the API?)}`."""
    if vectors:
        session.execute(
            sa.update(CHUNKS)
            .where(CHUNKS.c.id == sa.bindparam("chunk_id"))
            .values(vector=sa.bindparam("vector"), embedded=sa.bindparam("sent")),
            [
                {"chunk_id": cid, "vector": data, "sent": sent}
                for cid, (data, sent) in vectors.items()
            ],
        )


def other_live_lease(session: Session, document_id: uuid.UUID, version_id: uuid.UUID) -> bool:
    """Whether another version of the document is still held by a running task."""
    return (
        session.execute(
            sa.select(DocumentVersion.id)
            .where(
                DocumentVersion.document_id == document_id,
                DocumentVersion.id != version_id,
                DocumentVersion.lease_owner.is_not(None),
                DocumentVersion.lease_expires_at > utcnow(),
            )
            .limit(1)
        ).first()
        is not None
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
