"""hidden index: the hidden documents found without reading every document

Every search reads the hidden documents (`repository.hiding.hidden_everywhere`); without an
index that was a scan of the documents table on each request (16-23 ms at 31,000 documents,
100,000 chunks of the bench corpus; 1.5 ms with it). A partial index holds only the hidden ones.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28 07:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HIDDEN = sa.text("hidden_at IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "ix_documents_hidden",
        "documents",
        ["hidden_at"],
        postgresql_where=HIDDEN,
        sqlite_where=HIDDEN,
    )


def downgrade() -> None:
    op.drop_index("ix_documents_hidden", table_name="documents")
