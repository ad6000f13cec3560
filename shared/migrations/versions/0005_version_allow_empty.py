"""version allow_empty

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27 21:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Whether the request that made the version said it may leave the document without chunks
    # (an upload with `allow_empty=true` and the `delete` scope, or such a CMS event); else a
    # version that yields none fails `empty_document` and the current version stays indexed.
    with op.batch_alter_table("document_versions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("allow_empty", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("document_versions", schema=None) as batch_op:
        batch_op.drop_column("allow_empty")
