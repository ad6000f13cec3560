"""hidden documents and chunks

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28 01:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A document an editor hid from search: who, why, when (NULL: shown).
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("hidden_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("hidden_by", sa.String(200), nullable=True))
        batch_op.add_column(sa.Column("hidden_reason", sa.Text(), nullable=True))
    # Single chunks hidden from search, by point id: the point id is made from the chunk's
    # text (and its occurrence), so a chunk stays hidden across versions while its text is
    # unchanged; a changed text is a new point, visible.
    op.create_table(
        "hidden_chunks",
        sa.Column("document_id", sa.Uuid(), nullable=False),
        sa.Column("point_id", sa.Uuid(), nullable=False),
        sa.Column("hidden_by", sa.String(200), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["document_id"],
            ["documents.id"],
            name=op.f("fk_hidden_chunks_document_id_documents"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("document_id", "point_id", name=op.f("pk_hidden_chunks")),
    )


def downgrade() -> None:
    op.drop_table("hidden_chunks")
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_column("hidden_reason")
        batch_op.drop_column("hidden_by")
        batch_op.drop_column("hidden_at")
