"""Metadata versions: the relabel step's reads and writes, and the fields revision a content
version's points carry (recorded at upsert, compared at finalize)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared.documents import METADATA
from shared.models import Chunk, Document, DocumentVersion
from shared.repository.leases import VERSIONS
from shared.states import Status


def lock_for_relabel(
    session: Session, version_id: uuid.UUID
) -> tuple[DocumentVersion, Document] | None:
    """The metadata version still waiting (`received`) and its document, both locked (the
    document first: LOCK_ORDER), so no registration, finalize or other relabel of the
    document runs until this transaction ends; None when there is nothing (left) to do."""
    document_id = session.scalar(
        sa.select(DocumentVersion.document_id).where(
            DocumentVersion.id == version_id, DocumentVersion.kind == METADATA
        )
    )
    if document_id is None:
        return None
    document = session.get(
        Document, document_id, with_for_update={"key_share": True}, populate_existing=True
    )
    version = session.get(
        DocumentVersion, version_id, with_for_update={"key_share": True}, populate_existing=True
    )
    if document is None or version is None or version.status != Status.RECEIVED:
        return None
    return version, document


def current_points_of(
    session: Session, document: Document
) -> tuple[DocumentVersion | None, list[uuid.UUID]]:
    """The document's current version and its points (what a relabel rewrites)."""
    if document.current_version_id is None or document.deleted_at is not None:
        return None, []
    current = session.get(DocumentVersion, document.current_version_id)
    points = list(
        session.scalars(
            sa.select(Chunk.point_id).where(Chunk.version_id == document.current_version_id)
        )
    )
    return current, points


def record_fields_revision(session: Session, versions: Sequence[DocumentVersion]) -> None:
    """Note on each content version the fields revision of the document its points were just
    built from (the upsert step), for finalize to compare."""
    if versions:
        session.execute(
            sa.update(VERSIONS)
            .where(VERSIONS.c.id == sa.bindparam("version_id"))
            .values(fields_revision=sa.bindparam("revision")),
            [{"version_id": v.id, "revision": v.document.fields_revision or 0} for v in versions],
        )


def fields_behind(session: Session, version_ids: Sequence[uuid.UUID]) -> list[uuid.UUID]:
    """The versions whose points carry older fields than their document has now (a field
    changed after their upsert): finalize rewrites them before making them current."""
    if not version_ids:
        return []
    return list(
        session.scalars(
            sa.select(DocumentVersion.id)
            .join(Document, Document.id == DocumentVersion.document_id)
            .where(
                DocumentVersion.id.in_(list(version_ids)),
                DocumentVersion.fields_revision.is_distinct_from(Document.fields_revision),
            )
        )
    )


def metadata_versions_among(session: Session, version_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these versions are metadata versions (the relabel step's, not the stages')."""
    if not version_ids:
        return set()
    return set(
        session.scalars(
            sa.select(DocumentVersion.id).where(
                DocumentVersion.id.in_(list(version_ids)), DocumentVersion.kind == METADATA
            )
        )
    )


def waiting_relabels(session: Session, older_than: datetime) -> list[uuid.UUID]:
    """Metadata versions still `received` (their task was never sent, or was lost)."""
    return list(
        session.scalars(
            sa.select(DocumentVersion.id).where(
                DocumentVersion.kind == METADATA,
                DocumentVersion.status == Status.RECEIVED,
                DocumentVersion.updated_at < older_than,
            )
        )
    )


def point_ids_by_version(
    session: Session, version_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[uuid.UUID]]:
    """Each version's point ids (its chunk rows)."""
    found: dict[uuid.UUID, list[uuid.UUID]] = {v: [] for v in version_ids}
    if version_ids:
        rows = session.execute(
            sa.select(Chunk.version_id, Chunk.point_id).where(
                Chunk.version_id.in_(list(version_ids))
            )
        )
        for version_id, point in rows:
            found[version_id].append(point)
    return found
