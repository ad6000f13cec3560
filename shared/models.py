"""Database tables: documents, their versions (with raw bytes), chunks, events, webhook deliveries.

Postgres (psycopg 3) in production and tests, SQLite for the embedded default; the same
Alembic migrations create both.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, deferred, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from shared.states import Status


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC timestamps on every backend (SQLite stores them naive)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


JSONType = sa.JSON().with_variant(JSONB(), "postgresql")
StatusType = sa.String(16)


class Base(DeclarativeBase):
    metadata = sa.MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )


class Document(Base):
    """One page or brochure, identified by `(source, external_id)` across its versions."""

    __tablename__ = "documents"
    __table_args__ = (
        sa.UniqueConstraint("source", "external_id", name="uq_documents_identity"),
        # Only the hidden ones: every search reads them (`repository.hiding`), never a scan.
        sa.Index(
            "ix_documents_hidden",
            "hidden_at",
            postgresql_where=sa.text("hidden_at IS NOT NULL"),
            sqlite_where=sa.text("hidden_at IS NOT NULL"),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=uuid.uuid4)
    source: Mapped[str] = mapped_column(sa.String(64))
    external_id: Mapped[str] = mapped_column(sa.String(512))
    title: Mapped[str | None] = mapped_column(sa.String(1000))
    source_url: Mapped[str | None] = mapped_column(sa.String(2000))
    language: Mapped[str | None] = mapped_column(sa.String(35))
    tags: Mapped[list[str]] = mapped_column(JSONType, default=list)
    extra: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType, default=dict)
    # The version in the index now, and the newest one registered (plain ids: no FK cycle).
    current_version_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid)
    latest_version_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid)
    version_count: Mapped[int] = mapped_column(default=0)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Set once a deleted document's points are gone from Qdrant (the reaper retries until then).
    purged_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Hidden from search by an editor (NULL: shown); kept across new versions.
    hidden_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    hidden_by: Mapped[str | None] = mapped_column(sa.String(200))
    hidden_reason: Mapped[str | None] = mapped_column(sa.Text)
    # Counts changes of the fields the points carry (title, URL, language, tags): a content
    # version records the one its points were written with, and finalize rewrites them when
    # the document's moved on meanwhile (`shared.pipeline.steps.relabel`).
    fields_revision: Mapped[int] = mapped_column(default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)

    versions: Mapped[list[DocumentVersion]] = relationship(
        back_populates="document",
        foreign_keys="DocumentVersion.document_id",
        order_by="DocumentVersion.number",
    )


class DocumentVersion(Base):
    """One submission of a document's bytes, and its way through the pipeline."""

    __tablename__ = "document_versions"
    __table_args__ = (
        sa.UniqueConstraint("document_id", "number", name="uq_document_versions_number"),
        sa.Index("ix_document_versions_status_updated", "status", "updated_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=uuid.uuid4)
    document_id: Mapped[uuid.UUID] = mapped_column(
        sa.Uuid, sa.ForeignKey("documents.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int]
    # `content`: bytes through the pipeline; `metadata`: only the document's fields changed
    # (no bytes of its own; its points' payloads are rewritten, nothing is embedded).
    kind: Mapped[str] = mapped_column(sa.String(16), default="content", server_default="content")
    content: Mapped[bytes] = deferred(mapped_column(sa.LargeBinary, nullable=False))
    sha256: Mapped[str] = mapped_column(sa.String(64))
    size_bytes: Mapped[int]
    media_type: Mapped[str] = mapped_column(sa.String(100))
    filename: Mapped[str | None] = mapped_column(sa.String(1000))
    # Where the worker downloads the bytes from (a CMS page sent by URL); empty content until then.
    content_url: Mapped[str | None] = mapped_column(sa.String(2000))
    status: Mapped[Status] = mapped_column(StatusType, default=Status.RECEIVED)
    error_code: Mapped[str | None] = mapped_column(sa.String(64))
    error_message: Mapped[str | None] = mapped_column(sa.Text)
    retryable: Mapped[bool | None]
    attempts: Mapped[int] = mapped_column(default=0)
    tokens_spent: Mapped[int] = mapped_column(default=0)
    embedding_requests: Mapped[int] = mapped_column(default=0)
    chunks_embedded: Mapped[int] = mapped_column(default=0)
    chunk_count: Mapped[int | None]
    uploaded_by: Mapped[str | None] = mapped_column(sa.String(200))
    # The request said this version may leave the document without chunks (else a version
    # that yields none fails `empty_document`; see shared.pipeline.steps.chunk.chunk_conversion).
    allow_empty: Mapped[bool] = mapped_column(default=False, server_default=sa.false())
    # The document's `fields_revision` its points were upserted with (NULL: not upserted yet).
    fields_revision: Mapped[int | None]
    # Stage outputs: the converted Markdown and where its pages start.
    markdown: Mapped[str | None] = deferred(mapped_column(sa.Text))
    page_starts: Mapped[list[list[int]] | None] = mapped_column(JSONType)
    conversion: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # The lease: which task runs this version now, and until when (never two at once).
    lease_owner: Mapped[str | None] = mapped_column(sa.String(64))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Stage timestamps: when the version entered each state.
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    converting_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    chunking_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    embedding_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    upserting_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    document: Mapped[Document] = relationship(back_populates="versions", foreign_keys=[document_id])


class Chunk(Base):
    """A chunk of a version as stored in Qdrant; `point_id` is its Qdrant point."""

    __tablename__ = "chunks"
    __table_args__ = (sa.UniqueConstraint("version_id", "index", name="uq_chunks_position"),)

    id: Mapped[int] = mapped_column(
        sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True
    )
    version_id: Mapped[uuid.UUID] = mapped_column(
        sa.Uuid, sa.ForeignKey("document_versions.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    index: Mapped[int]
    point_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    content_hash: Mapped[str] = mapped_column(sa.String(64))
    text: Mapped[str] = mapped_column(sa.Text)
    token_count: Mapped[int]
    headings: Mapped[list[str]] = mapped_column(JSONType, default=list)
    kinds: Mapped[list[str]] = mapped_column(JSONType, default=list)
    char_start: Mapped[int]
    char_end: Mapped[int]
    page_start: Mapped[int | None]
    page_end: Mapped[int | None]
    extra: Mapped[dict[str, Any]] = mapped_column("metadata", JSONType, default=dict)
    # The lexical vector ({"indices": [...], "values": [...]}), computed where the chunk is
    # made (the cpu workers), so the upsert stage, in the one process that holds local Qdrant,
    # does not stem; NULL for rows from before (computed at upsert then).
    sparse: Mapped[dict[str, list[Any]] | None] = deferred(mapped_column(JSONType, default=None))
    # float32 bytes between the embed and upsert stages; cleared once the point is indexed.
    vector: Mapped[bytes | None] = deferred(mapped_column(sa.LargeBinary))
    # True when this chunk was sent to the embeddings API, False when its point was reused.
    embedded: Mapped[bool] = mapped_column(default=False)

    @property
    def sections(self) -> list[dict[str, Any]]:
        """Every section the text covers, with its range in `text` (kept in `metadata`)."""
        return list((self.extra or {}).get("sections") or [])


class CachedVector(Base):
    """A vector the API returned, by what was embedded: the same input (text and heading
    line) in any other document, or a re-upload after a delete, reuses it instead of paying
    again. Keyed by `indexing.cache_key` (provider, model, dimensions and input), so another
    model never reuses it. Not tied to a document: it outlives deletes on purpose."""

    __tablename__ = "vector_cache"

    key: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    model: Mapped[str] = mapped_column(sa.String(200))
    dimensions: Mapped[int]
    vector: Mapped[bytes] = mapped_column(sa.LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Event(Base):
    """Append-only history: every state transition of a version or a document."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(
        sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True
    )
    document_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, index=True)
    version_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid, index=True)
    from_status: Mapped[str | None] = mapped_column(StatusType)
    to_status: Mapped[str] = mapped_column(StatusType)
    actor: Mapped[str | None] = mapped_column(sa.String(200))
    detail: Mapped[str | None] = mapped_column(sa.Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class HiddenChunk(Base):
    """One chunk hidden from search, by its point id: the id is made from the chunk's text
    (`indexing.point_id`), so it stays hidden in new versions while that text is unchanged."""

    __tablename__ = "hidden_chunks"

    document_id: Mapped[uuid.UUID] = mapped_column(
        sa.Uuid, sa.ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
    )
    point_id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True)
    hidden_by: Mapped[str | None] = mapped_column(sa.String(200))
    reason: Mapped[str | None] = mapped_column(sa.Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WebhookDelivery(Base):
    """A CMS delivery id seen once; a retried delivery finds its row and does nothing."""

    __tablename__ = "webhook_deliveries"

    delivery_id: Mapped[str] = mapped_column(sa.String(200), primary_key=True)
    event: Mapped[str] = mapped_column(sa.String(32))
    document_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid)
    version_id: Mapped[uuid.UUID | None] = mapped_column(sa.Uuid)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ActiveIndex(Base):
    """Which Qdrant collection the fleet writes and searches, per embedding model and size.

    `ingest reindex` fills a new collection, then switches this row; every process reads it,
    so no redeploy is needed. `QDRANT_COLLECTION` in the settings overrides it.
    """

    __tablename__ = "active_index"

    model: Mapped[str] = mapped_column(sa.String(200), primary_key=True)
    dimensions: Mapped[int] = mapped_column(primary_key=True)
    collection: Mapped[str] = mapped_column(sa.String(200))
    switched_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ReindexJob(Base):
    """A re-index through OpenAI's Batch API (`ingest reindex --batch`): what it fills, where
    it stands, and what it cost. One runs at a time; a periodic poll carries it on from this
    row (`poll_owner` / `poll_until`: which poll works on it now, so two never overlap and a
    killed one's claim runs out)."""

    __tablename__ = "reindex_jobs"

    id: Mapped[uuid.UUID] = mapped_column(sa.Uuid, primary_key=True, default=uuid.uuid4)
    model: Mapped[str] = mapped_column(sa.String(200))
    dimensions: Mapped[int]
    previous: Mapped[str] = mapped_column(sa.String(200))
    collection: Mapped[str] = mapped_column(sa.String(200))
    # running -> switched -> done (caught up by a process of the new model), or cancelled /
    # failed (the old collection keeps serving)
    state: Mapped[str] = mapped_column(sa.String(16), default="running", index=True)
    error: Mapped[str | None] = mapped_column(sa.Text)
    inputs: Mapped[int] = mapped_column(default=0)
    reused: Mapped[int] = mapped_column(default=0)
    tokens_estimated: Mapped[int] = mapped_column(default=0)
    batch_tokens: Mapped[int] = mapped_column(default=0)
    sync_tokens: Mapped[int] = mapped_column(default=0)
    poll_owner: Mapped[str | None] = mapped_column(sa.String(64))
    poll_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class EmbeddingBatch(Base):
    """One request file of a batch re-index and the OpenAI batch that runs it: the file and
    batch ids and the batch's state as last seen (`pending`: not uploaded yet); `read_at`: its
    output and error files have been applied."""

    __tablename__ = "embedding_batches"
    __table_args__ = (sa.UniqueConstraint("job_id", "number", name="uq_embedding_batches_number"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    job_id: Mapped[uuid.UUID] = mapped_column(
        sa.Uuid, sa.ForeignKey("reindex_jobs.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int]
    state: Mapped[str] = mapped_column(sa.String(32), default="pending")
    input_file_id: Mapped[str | None] = mapped_column(sa.String(100))
    batch_id: Mapped[str | None] = mapped_column(sa.String(100))
    output_file_id: Mapped[str | None] = mapped_column(sa.String(100))
    error_file_id: Mapped[str | None] = mapped_column(sa.String(100))
    inputs: Mapped[int] = mapped_column(default=0)
    requests: Mapped[int] = mapped_column(default=0)
    tokens: Mapped[int] = mapped_column(default=0)
    completed_requests: Mapped[int] = mapped_column(default=0)
    failed_requests: Mapped[int] = mapped_column(default=0)
    error: Mapped[str | None] = mapped_column(sa.Text)
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class EmbeddingBatchRequest(Base):
    """One line of a request file: its `custom_id` and, for each of its inputs in order, the
    chunks that input is the embedding of (identical texts are sent once)."""

    __tablename__ = "embedding_batch_requests"

    job_id: Mapped[uuid.UUID] = mapped_column(
        sa.Uuid, sa.ForeignKey("reindex_jobs.id", ondelete="CASCADE"), primary_key=True
    )
    custom_id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    batch: Mapped[int] = mapped_column(
        sa.ForeignKey("embedding_batches.id", ondelete="CASCADE"), index=True
    )
    chunk_ids: Mapped[list[list[int]]] = mapped_column(JSONType)
    tokens: Mapped[int] = mapped_column(default=0)
    done: Mapped[bool] = mapped_column(default=False)
