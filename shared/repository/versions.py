"""Versions: transitions with their events, registering new versions, failing one."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from shared.documents import (
    CONTENT,
    METADATA,
    NewVersion,
    changed_fields,
    fields_given,
    metadata_detail,
)
from shared.models import Document, DocumentVersion, Event, utcnow
from shared.states import IN_FLIGHT, Status, can_move

STAGE_TIMESTAMP = {
    Status.CONVERTING: "converting_at",
    Status.CHUNKING: "chunking_at",
    Status.EMBEDDING: "embedding_at",
    Status.UPSERTING: "upserting_at",
    Status.INDEXED: "finished_at",
    Status.FAILED: "finished_at",
    Status.UNCHANGED: "finished_at",
    Status.SUPERSEDED: "finished_at",
}


# --- events and transitions --------------------------------------------------------------


def add_event(
    session: Session,
    document_id: uuid.UUID,
    version_id: uuid.UUID | None,
    source: str | None,
    target: str,
    *,
    actor: str | None = None,
    detail: str | None = None,
) -> None:
    # A Core INSERT, sent now: the ORM's unit of work would also read the new id back.
    session.execute(
        sa.insert(Event).values(
            document_id=document_id,
            version_id=version_id,
            from_status=source,
            to_status=target,
            actor=actor,
            detail=detail,
            at=utcnow(),
        )
    )


def transition(
    session: Session,
    version_id: uuid.UUID,
    source: Status,
    target: Status,
    *,
    actor: str | None = None,
    detail: str | None = None,
    where: Sequence[sa.ColumnElement[bool]] = (),
    values: dict[str, Any] | None = None,
) -> bool:
    """Move a version `source -> target` if it is still in `source`; True for the one winner."""
    if not can_move(source, target):
        raise ValueError(f"transition {source} -> {target} is not allowed")
    now = utcnow()
    changes: dict[str, Any] = {"status": target, "updated_at": now, **(values or {})}
    if target in STAGE_TIMESTAMP:
        changes.setdefault(STAGE_TIMESTAMP[target], now)
    result = session.execute(
        sa.update(DocumentVersion)
        .where(DocumentVersion.id == version_id, DocumentVersion.status == source, *where)
        .values(**changes)
        .returning(DocumentVersion.document_id)
    )
    document_id = result.scalar_one_or_none()
    if document_id is None:
        return False
    add_event(session, document_id, version_id, source, target, actor=actor, detail=detail)
    return True


# --- registering versions ----------------------------------------------------------------


@dataclass(frozen=True)
class Registered:
    document_id: uuid.UUID
    version_id: uuid.UUID
    number: int
    status: Status
    superseded: list[uuid.UUID]
    kind: str = CONTENT
    changed: tuple[str, ...] = ()  # the payload fields it changed (a metadata version's)
    # A page sent by URL with other fields: a metadata version made with it, so the current
    # points get them whatever the fetch finds (the bytes may turn out unchanged).
    relabel_id: uuid.UUID | None = None


def dialect_insert(session: Session) -> Any:
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


def lock_document(session: Session, source: str, external_id: str) -> Document:
    """The document row for `(source, external_id)`, created if new, locked for this transaction.

    FOR NO KEY UPDATE, not FOR UPDATE: no path changes a document's keys, and the weaker lock
    lets a stage's foreign-key checks (FOR KEY SHARE on the document) pass while this
    transaction waits for that stage's version row. See LOCK_ORDER in shared.repository."""
    insert = dialect_insert(session)
    session.execute(
        insert(Document)
        .values(id=uuid.uuid4(), source=source, external_id=external_id, tags=[], extra={})
        .on_conflict_do_nothing(index_elements=["source", "external_id"])
    )
    return session.execute(
        sa.select(Document)
        .where(Document.source == source, Document.external_id == external_id)
        .with_for_update(key_share=True)
        .execution_options(populate_existing=True)
    ).scalar_one()


def register_version(session: Session, new: NewVersion) -> Registered:
    """Store a new version: `received`, superseding every older content version still in
    flight (the last one sent wins); with the indexed version's bytes, a `metadata` version
    (`received`, for the relabel step) when it changes the document's payload fields, else
    `unchanged`. The fields it gives are the document's either way (last write wins)."""
    document = lock_document(session, new.source, new.external_id)
    # Only the indexed version counts: a same-content version still in flight may be stuck,
    # and sending the bytes again must be able to replace it.
    same_as: DocumentVersion | None = None
    if not new.force and document.deleted_at is None and document.current_version_id:
        current = session.get(DocumentVersion, document.current_version_id)
        if current is not None and new.content and current.sha256 == new.sha256:
            same_as = current
    given = fields_given(new)
    changed = changed_fields(fields_of(document), given)
    now = utcnow()
    _set_fields(document, given, changed)
    if new.metadata:
        document.extra = {**(document.extra or {}), **new.metadata}
    document.updated_at = now
    if same_as and changed:  # the indexed bytes with other fields
        version = _metadata_version(session, document, changed, new.uploaded_by, new)
        return Registered(
            document.id, version.id, version.number, Status.RECEIVED, [], METADATA, tuple(changed)
        )

    new_document = document.version_count == 0  # no version of it exists to supersede
    document.version_count += 1
    unchanged = same_as is not None
    version = DocumentVersion(
        id=uuid.uuid4(),
        document_id=document.id,
        number=document.version_count,
        content=new.content,
        sha256=new.sha256,
        size_bytes=len(new.content),
        media_type=new.media_type,
        filename=new.filename,
        content_url=new.content_url,
        status=Status.UNCHANGED if unchanged else Status.RECEIVED,
        uploaded_by=new.uploaded_by,
        allow_empty=new.allow_empty,
        received_at=now,
        updated_at=now,
        finished_at=now if unchanged else None,
    )
    session.add(version)
    if not same_as:  # written by the same UPDATE as the fields above (no foreign key to wait on)
        document.latest_version_id = version.id
        document.deleted_at = None
    session.flush()

    add_event(session, document.id, version.id, None, Status.RECEIVED, actor=new.uploaded_by)
    superseded: list[uuid.UUID] = []
    if same_as is not None:
        add_event(
            session,
            document.id,
            version.id,
            Status.RECEIVED,
            Status.UNCHANGED,
            detail=f"same content as version {same_as.number}",
        )
    elif not new_document:
        superseded = supersede_in_flight(session, document.id, keep=version.id, newer=version)
    relabel = None
    if new.content_url and not new.content and changed and document.current_version_id:
        current = session.get(DocumentVersion, document.current_version_id)
        relabel = _metadata_version(session, document, changed, new.uploaded_by, current).id
    return Registered(
        document.id,
        version.id,
        version.number,
        Status(version.status),
        superseded,
        relabel_id=relabel,
    )


def _metadata_version(
    session: Session,
    document: Document,
    changed: list[str],
    actor: str | None,
    like: DocumentVersion | NewVersion | None,
) -> DocumentVersion:
    """A `metadata` version of the document (`received`, for the relabel step), with its
    event naming the fields; no bytes of its own (those of `like`, the indexed version or
    what was sent again: its checksum, type and name are shown)."""
    now = utcnow()
    document.version_count += 1
    version = DocumentVersion(
        id=uuid.uuid4(),
        document_id=document.id,
        number=document.version_count,
        kind=METADATA,
        content=b"",
        sha256=like.sha256 if like else "",
        size_bytes=0,
        media_type=like.media_type if like else "",
        filename=like.filename if like else None,
        status=Status.RECEIVED,
        uploaded_by=actor,
        received_at=now,
        updated_at=now,
    )
    session.add(version)
    session.flush()
    add_event(
        session,
        document.id,
        version.id,
        None,
        Status.RECEIVED,
        actor=actor,
        detail=metadata_detail(changed),
    )
    return version


def fields_of(document: Document) -> dict[str, Any]:
    """The document's payload fields as `changed_fields` compares them."""
    return {
        "title": document.title,
        "source_url": document.source_url,
        "language": document.language,
        "tags": list(document.tags or []),
    }


def _set_fields(document: Document, given: dict[str, Any], changed: list[str]) -> None:
    """Write the given fields (last write wins, field by field); a change of a payload field
    counts one more fields revision (the points carry it: see `relabel`)."""
    for name, value in given.items():
        setattr(document, name, list(value) if name == "tags" else (value or None))
    if changed:
        document.fields_revision = (document.fields_revision or 0) + 1


def register_field_changes(
    session: Session, document_id: uuid.UUID, given: dict[str, Any], actor: str | None
) -> Registered | None:
    """`PATCH /v1/documents/{id}`: set the fields named (and only those). A change makes a
    `metadata` version (`received`, for the relabel step); the values already there change
    nothing and make no version (then the answer's `version_id` is the document's latest).
    None: no such document, or deleted."""
    document = session.get(
        Document, document_id, with_for_update={"key_share": True}, populate_existing=True
    )
    if document is None or document.deleted_at is not None:
        return None
    changed = changed_fields(fields_of(document), given)
    latest = (
        session.get(DocumentVersion, document.latest_version_id)
        if document.latest_version_id
        else None
    )
    if not changed:  # idempotent: nothing to write, no version
        return Registered(
            document.id,
            latest.id if latest else document.id,
            latest.number if latest else 0,
            Status.UNCHANGED,
            [],
        )
    _set_fields(document, given, changed)
    document.updated_at = utcnow()
    version = _metadata_version(session, document, changed, actor, latest)
    return Registered(
        document.id, version.id, version.number, Status.RECEIVED, [], METADATA, tuple(changed)
    )


def supersede_in_flight(
    session: Session, document_id: uuid.UUID, *, keep: uuid.UUID | None, newer: Any = None
) -> list[uuid.UUID]:
    """Mark every in-flight version of the document but `keep` superseded (last sent wins).
    A new version (`newer`) leaves metadata versions alone: their fields are the record's
    already, and the current points must still get them; a removal takes them too.

    The rows are locked as they are read: a task finishing a stage meanwhile would otherwise
    change the status between this read and the conditional UPDATE, and its version would
    escape (and could end indexed after the newer one). The task now waits, then finds its
    version superseded. (SQLite has one writer at a time, and this transaction writes first.)
    """
    rows = session.execute(
        sa.select(DocumentVersion.id, DocumentVersion.status)
        .where(
            DocumentVersion.document_id == document_id,
            DocumentVersion.status.in_([s.value for s in IN_FLIGHT]),
            DocumentVersion.id != keep if keep else sa.true(),
            DocumentVersion.kind == CONTENT if newer is not None else sa.true(),
        )
        .order_by(DocumentVersion.id)
        .with_for_update(key_share=True)
    ).all()
    detail = f"version {newer.number} arrived" if newer is not None else "document removed"
    done = []
    for version_id, status in rows:
        # The lease stays: a task still running on it must finish before finalize proceeds.
        if transition(
            session,
            version_id,
            Status(status),
            Status.SUPERSEDED,
            detail=detail,
            values={
                "lease_owner": sa.literal_column("lease_owner"),
                "lease_expires_at": sa.literal_column("lease_expires_at"),
            },
        ):
            done.append(version_id)
    return done


def fail_version(
    session: Session,
    version_id: uuid.UUID,
    *,
    code: str,
    message: str,
    retryable: bool = False,
    actor: str | None = None,
) -> uuid.UUID | None:
    """End an in-flight version in `failed` with a typed error a content editor can read;
    the document id when this call moved it (for the failure's log line), else None."""
    row = session.execute(
        sa.select(DocumentVersion.status, DocumentVersion.document_id).where(
            DocumentVersion.id == version_id
        )
    ).one_or_none()
    if row is None or Status(row.status) not in IN_FLIGHT:
        return None
    moved = transition(
        session,
        version_id,
        Status(row.status),
        Status.FAILED,
        actor=actor,
        detail=f"[{code}] {message}",
        values={
            "error_code": code,
            "error_message": message,
            "retryable": retryable,
            "lease_owner": None,
            "lease_expires_at": None,
        },
    )
    return row.document_id if moved else None


def mark_fetched_unchanged(
    session: Session, version_id: uuid.UUID, document_id: uuid.UUID, sha256: str, owner: str
) -> bool:
    """A fetched page turned out to be the indexed version's bytes: `unchanged`, no work."""
    current = session.scalar(
        sa.select(DocumentVersion)
        .join(Document, Document.current_version_id == DocumentVersion.id)
        .where(Document.id == document_id, Document.deleted_at.is_(None))
    )
    if current is None or current.id == version_id or current.sha256 != sha256:
        return False
    return transition(
        session,
        version_id,
        Status.CONVERTING,
        Status.UNCHANGED,
        actor=owner,
        detail=f"fetched page is the same as version {current.number}",
        where=[DocumentVersion.lease_owner == owner],
        values={"lease_owner": None, "lease_expires_at": None},
    )
