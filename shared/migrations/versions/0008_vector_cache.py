"""vector cache: one vector per embedding input and model

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28 03:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The same text under two documents is embedded once: the vector is kept by
    # sha256(provider, model, dimensions, embedding input), apart from any document, so it
    # outlives deletes (a re-upload costs nothing) and another model never reuses it.
    op.create_table(
        "vector_cache",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("dimensions", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_vector_cache")),
    )


def downgrade() -> None:
    op.drop_table("vector_cache")
