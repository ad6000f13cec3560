"""embedding batches: re-index through OpenAI's Batch API

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28 03:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "reindex_jobs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("dimensions", sa.Integer(), nullable=False),
        sa.Column("previous", sa.String(length=200), nullable=False),
        sa.Column("collection", sa.String(length=200), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("inputs", sa.Integer(), nullable=False),
        sa.Column("reused", sa.Integer(), nullable=False),
        sa.Column("tokens_estimated", sa.Integer(), nullable=False),
        sa.Column("batch_tokens", sa.Integer(), nullable=False),
        sa.Column("sync_tokens", sa.Integer(), nullable=False),
        sa.Column("poll_owner", sa.String(length=64), nullable=True),
        sa.Column("poll_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reindex_jobs")),
    )
    op.create_index(op.f("ix_reindex_jobs_state"), "reindex_jobs", ["state"], unique=False)
    op.create_table(
        "embedding_batches",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("input_file_id", sa.String(length=100), nullable=True),
        sa.Column("batch_id", sa.String(length=100), nullable=True),
        sa.Column("output_file_id", sa.String(length=100), nullable=True),
        sa.Column("error_file_id", sa.String(length=100), nullable=True),
        sa.Column("inputs", sa.Integer(), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("completed_requests", sa.Integer(), nullable=False),
        sa.Column("failed_requests", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["reindex_jobs.id"],
            name=op.f("fk_embedding_batches_job_id_reindex_jobs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_embedding_batches")),
        sa.UniqueConstraint("job_id", "number", name="uq_embedding_batches_number"),
    )
    op.create_index(
        op.f("ix_embedding_batches_job_id"), "embedding_batches", ["job_id"], unique=False
    )
    op.create_table(
        "embedding_batch_requests",
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("custom_id", sa.String(length=64), nullable=False),
        sa.Column("batch", sa.Integer(), nullable=False),
        sa.Column("chunk_ids", JSON, nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["batch"],
            ["embedding_batches.id"],
            name=op.f("fk_embedding_batch_requests_batch_embedding_batches"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["reindex_jobs.id"],
            name=op.f("fk_embedding_batch_requests_job_id_reindex_jobs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("job_id", "custom_id", name=op.f("pk_embedding_batch_requests")),
    )
    op.create_index(
        op.f("ix_embedding_batch_requests_batch"),
        "embedding_batch_requests",
        ["batch"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_embedding_batch_requests_batch"), table_name="embedding_batch_requests")
    op.drop_table("embedding_batch_requests")
    op.drop_index(op.f("ix_embedding_batches_job_id"), table_name="embedding_batches")
    op.drop_table("embedding_batches")
    op.drop_index(op.f("ix_reindex_jobs_state"), table_name="reindex_jobs")
    op.drop_table("reindex_jobs")
