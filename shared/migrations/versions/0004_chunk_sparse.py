"""chunk sparse vector

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # The chunk's lexical vector, computed when it is chunked (NULL for older rows: the upsert
    # stage computes theirs as before).
    with op.batch_alter_table("chunks", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("sparse", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("chunks", schema=None) as batch_op:
        batch_op.drop_column("sparse")
