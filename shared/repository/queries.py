"""Read side: what the API, the CLI and the metrics show."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVarTuple

import sqlalchemy as sa
from sqlalchemy.orm import Session, joinedload, undefer

from shared.documents import CONTENT
from shared.models import Chunk, Document, DocumentVersion, Event
from shared.states import Status

# --- queries for the CLI ------------------------------------------------------------------


def current_point_ids(session: Session) -> set[uuid.UUID]:
    """Point ids of every chunk of every current version: what Qdrant should hold exactly."""
    return set(
        session.scalars(
            sa.select(Chunk.point_id)
            .join(Document, Document.current_version_id == Chunk.version_id)
            .where(Document.deleted_at.is_(None))
        )
    )


def status_counts(session: Session) -> dict[str, int]:
    """Documents by their status (`_document_status`: `deleted`, else their latest version's,
    `received` without one), as `overview.status_counts` counts them."""
    status = _document_status().label("status")
    rows = session.execute(
        _with_status(sa.select(status, sa.func.count()).select_from(Document)).group_by(status)
    ).all()
    return {str(name): count for name, count in rows}


def versions_by_id(
    session: Session, ids: Sequence[uuid.UUID], *, with_documents: bool = False
) -> list[DocumentVersion]:
    """The versions; `with_documents`: their documents read by the same query."""
    query = sa.select(DocumentVersion).where(DocumentVersion.id.in_(ids))
    if with_documents:
        query = query.options(joinedload(DocumentVersion.document))
    return list(session.scalars(query))


def find_document(session: Session, key: str) -> Document | None:
    """A document by id, or by external id (the file path for `ingest run`)."""
    try:
        found = session.get(Document, uuid.UUID(key))
    except ValueError:
        found = None
    return (
        found
        or session.scalars(sa.select(Document).where(Document.external_id == key).limit(1)).first()
    )


def document_events(session: Session, document_id: uuid.UUID) -> list[Event]:
    return list(
        session.scalars(sa.select(Event).where(Event.document_id == document_id).order_by(Event.id))
    )


def recent_documents(session: Session, limit: int = 20) -> list[Document]:
    return list(
        session.scalars(sa.select(Document).order_by(Document.updated_at.desc()).limit(limit))
    )


# --- queries for the API and the CLI (read side) -----------------------------------------


def latest_version(session: Session, document_id: uuid.UUID) -> DocumentVersion | None:
    """The newest version of a document with bytes (not a metadata version), loaded."""
    return session.scalars(
        sa.select(DocumentVersion)
        .options(undefer(DocumentVersion.content))
        .where(DocumentVersion.document_id == document_id, DocumentVersion.kind == CONTENT)
        .order_by(DocumentVersion.number.desc())
        .limit(1)
    ).first()


def _document_status() -> sa.ColumnElement[str]:
    """A document's status: `deleted`, else its latest version's (joined as DocumentVersion)."""
    return sa.case(
        (Document.deleted_at.is_not(None), sa.literal("deleted")),
        else_=sa.func.coalesce(DocumentVersion.status, sa.literal(Status.RECEIVED.value)),
    )


_Columns = TypeVarTuple("_Columns")


def _with_status(query: sa.Select[*_Columns]) -> sa.Select[*_Columns]:
    return query.outerjoin(DocumentVersion, DocumentVersion.id == Document.latest_version_id)


def list_documents(
    session: Session,
    *,
    status: str | None = None,
    source: str | None = None,
    updated_since: datetime | None = None,
    q: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[tuple[Document, str]], int]:
    """A page of documents (newest change first) with their status, and the total matching.

    Deleted documents are listed only when asked for with `status="deleted"`. `q` finds
    documents whose title or external id (an upload's file name) contains it, any case.
    """
    status_column = _document_status()
    conditions: list[sa.ColumnElement[bool]] = []
    if status == "deleted":
        conditions.append(Document.deleted_at.is_not(None))
    else:
        conditions.append(Document.deleted_at.is_(None))
        if status is not None:
            conditions.append(DocumentVersion.status == status)
    if source is not None:
        conditions.append(Document.source == source)
    if updated_since is not None:
        conditions.append(Document.updated_at >= updated_since)
    if q is not None and q.strip():
        pattern = f"%{_escape_like(q.strip())}%"
        conditions.append(
            sa.or_(
                Document.title.ilike(pattern, escape="\\"),
                Document.external_id.ilike(pattern, escape="\\"),
            )
        )
    total = session.execute(
        _with_status(sa.select(sa.func.count()).select_from(Document)).where(*conditions)
    ).scalar_one()
    rows = session.execute(
        _with_status(sa.select(Document, status_column))
        .where(*conditions)
        .order_by(Document.updated_at.desc(), Document.id.desc())
        .limit(limit)
        .offset(offset)
    ).all()
    return [(document, str(state)) for document, state in rows], int(total)


def _escape_like(text: str) -> str:
    """`50%_off` matches itself, not "50 anything off": LIKE wildcards taken literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass(frozen=True)
class DocumentTotals:
    """What a listing shows per document: the indexed version's chunks and their tokens, and
    the embedding tokens paid for over all versions."""

    chunk_count: int = 0
    token_count: int = 0
    tokens_spent: int = 0


def document_totals(
    session: Session, documents: Sequence[Document]
) -> dict[uuid.UUID, DocumentTotals]:
    """Totals for a page of documents in two grouped queries (not two per document)."""
    current = [d.current_version_id for d in documents if d.current_version_id is not None]
    chunks: dict[uuid.UUID, tuple[int, int]] = {}
    if current:
        rows = session.execute(
            sa.select(Chunk.version_id, sa.func.count(), sa.func.sum(Chunk.token_count))
            .where(Chunk.version_id.in_(current))
            .group_by(Chunk.version_id)
        ).all()
        chunks = {version_id: (int(n), int(tokens or 0)) for version_id, n, tokens in rows}
    spent: dict[uuid.UUID, int] = {}
    if documents:
        spent_rows = session.execute(
            sa.select(DocumentVersion.document_id, sa.func.sum(DocumentVersion.tokens_spent))
            .where(DocumentVersion.document_id.in_([d.id for d in documents]))
            .group_by(DocumentVersion.document_id)
        ).all()
        spent = {document_id: int(total or 0) for document_id, total in spent_rows}
    totals = {}
    for document in documents:
        current_id = document.current_version_id
        count, tokens = chunks.get(current_id, (0, 0)) if current_id is not None else (0, 0)
        totals[document.id] = DocumentTotals(count, tokens, spent.get(document.id, 0))
    return totals


def document_sources(session: Session) -> list[tuple[str, int]]:
    """Every source with its number of documents not deleted (for a listing's filter)."""
    rows = session.execute(
        sa.select(Document.source, sa.func.count())
        .where(Document.deleted_at.is_(None))
        .group_by(Document.source)
        .order_by(Document.source)
    ).all()
    return [(str(source), int(n)) for source, n in rows]


def get_document(session: Session, document_id: uuid.UUID) -> tuple[Document, str] | None:
    """One document and its status, or None."""
    row = session.execute(
        _with_status(sa.select(Document, _document_status())).where(Document.id == document_id)
    ).first()
    return (row[0], str(row[1])) if row else None


def document_by_identity(session: Session, source: str, external_id: str) -> Document | None:
    return session.scalars(
        sa.select(Document).where(Document.source == source, Document.external_id == external_id)
    ).first()


def document_versions(session: Session, document_id: uuid.UUID) -> list[DocumentVersion]:
    """Every version of a document, oldest first (bytes and Markdown not loaded)."""
    return list(
        session.scalars(
            sa.select(DocumentVersion)
            .where(DocumentVersion.document_id == document_id)
            .order_by(DocumentVersion.number)
        )
    )


@dataclass(frozen=True)
class StoredFile:
    """A version's original bytes as uploaded (or fetched from the CMS), with its name."""

    content: bytes
    media_type: str
    filename: str | None


def version_file(session: Session, document_id: uuid.UUID, number: int) -> StoredFile | None:
    """Version `number` of the document's stored bytes; None when there is no such version or
    its bytes are not there yet (a CMS page whose content_url the worker has not fetched)."""
    row = session.execute(
        sa.select(
            DocumentVersion.content, DocumentVersion.media_type, DocumentVersion.filename
        ).where(DocumentVersion.document_id == document_id, DocumentVersion.number == number)
    ).first()
    if row is None or not row.content:
        return None
    return StoredFile(bytes(row.content), row.media_type, row.filename)


def document_history(session: Session, document_id: uuid.UUID, limit: int = 1000) -> list[Event]:
    """The document's history in order (the last `limit` events)."""
    newest = list(
        session.scalars(
            sa.select(Event)
            .where(Event.document_id == document_id)
            .order_by(Event.at.desc(), Event.id.desc())
            .limit(limit)
        )
    )
    return newest[::-1]


def count_chunks(session: Session, version_id: uuid.UUID | None) -> int:
    if version_id is None:
        return 0
    return int(
        session.execute(
            sa.select(sa.func.count()).select_from(Chunk).where(Chunk.version_id == version_id)
        ).scalar_one()
    )


def version_chunks(
    session: Session, version_id: uuid.UUID, *, limit: int, offset: int
) -> tuple[list[Chunk], int]:
    """A page of a version's chunks in order (they mirror the version's Qdrant points)."""
    rows = session.scalars(
        sa.select(Chunk)
        .where(Chunk.version_id == version_id)
        .order_by(Chunk.index)
        .limit(limit)
        .offset(offset)
    )
    return list(rows), count_chunks(session, version_id)


def tokens_spent_total(session: Session) -> int:
    return int(
        session.execute(
            sa.select(sa.func.coalesce(sa.func.sum(DocumentVersion.tokens_spent), 0))
        ).scalar_one()
    )


def failures_by_code(session: Session) -> dict[str, int]:
    rows = session.execute(
        sa.select(DocumentVersion.error_code, sa.func.count())
        .where(DocumentVersion.status == Status.FAILED)
        .group_by(DocumentVersion.error_code)
    ).all()
    return {str(code or "unknown"): int(count) for code, count in rows}


def recent_stage_times(
    session: Session, limit: int = 500
) -> list[sa.Row[*tuple[datetime | None, ...]]]:
    """Stage timestamps of the last `limit` indexed versions (for average stage durations)."""
    return list(
        session.execute(
            sa.select(
                DocumentVersion.received_at,
                DocumentVersion.converting_at,
                DocumentVersion.chunking_at,
                DocumentVersion.embedding_at,
                DocumentVersion.upserting_at,
                DocumentVersion.finished_at,
            )
            .where(DocumentVersion.status.in_([Status.INDEXED, Status.SUPERSEDED]))
            .where(DocumentVersion.upserting_at.is_not(None))
            .order_by(DocumentVersion.finished_at.desc())
            .limit(limit)
        ).all()
    )


def documents_with_id_prefix(session: Session, prefix: str) -> list[Document]:
    """The documents whose id starts with `prefix` (as `ingest status` shows ids). Compared in
    Python so it reads the same on SQLite (ids stored without dashes) and Postgres."""
    wanted = prefix.lower()
    ids = [i for i in session.scalars(sa.select(Document.id)) if str(i).startswith(wanted)]
    return [doc for i in ids[:20] if (doc := session.get(Document, i)) is not None]


def indexed_version_number(session: Session, document_id: uuid.UUID) -> int | None:
    """The number of a document's indexed (current) version, or None."""
    return session.execute(
        sa.select(DocumentVersion.number)
        .join(Document, Document.current_version_id == DocumentVersion.id)
        .where(Document.id == document_id)
    ).scalar_one_or_none()


def previous_version(
    session: Session, document_id: uuid.UUID, number: int
) -> tuple[DocumentVersion, str | None] | None:
    """The version before version `number` of a document, and the document's title."""
    row = session.execute(
        sa.select(DocumentVersion, Document.title)
        .join(Document, Document.id == DocumentVersion.document_id)
        .where(DocumentVersion.document_id == document_id, DocumentVersion.number == number - 1)
    ).first()
    return (row[0], row[1]) if row else None
