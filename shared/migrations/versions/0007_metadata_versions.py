"""metadata versions: a version's kind, and which fields revision its points carry

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28 03:15:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Counts changes of the fields every point of the document carries (title, URL, ...).
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("fields_revision", sa.Integer(), nullable=False, server_default="0")
        )
    # `metadata`: a version that changed only the document's fields (no bytes, 0 tokens).
    with op.batch_alter_table("document_versions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(16), nullable=False, server_default="content")
        )
        batch_op.add_column(sa.Column("fields_revision", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("document_versions", schema=None) as batch_op:
        batch_op.drop_column("fields_revision")
        batch_op.drop_column("kind")
    with op.batch_alter_table("documents", schema=None) as batch_op:
        batch_op.drop_column("fields_revision")
