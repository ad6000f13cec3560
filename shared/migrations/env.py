"""Alembic environment: the database URL comes from the settings (or `-x url=...`)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

from shared.db import engine_for, normalise_url
from shared.migrate import MIGRATION_LOCK
from shared.models import Base
from shared.settings import get_settings

config = context.config
# `attributes`, not a config option: options are interpolated, and `%` in an URL-encoded
# password would break them (see shared.migrate.alembic_config).
url = context.get_x_argument(as_dictionary=True).get("url") or config.attributes.get("url")
url = normalise_url(url or get_settings().database_url)


def run_migrations_offline() -> None:
    context.configure(url=url, target_metadata=Base.metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    with engine_for(url).connect() as connection:
        postgres = connection.dialect.name == "postgresql"
        if postgres:  # one migration at a time; the others then find the schema at head
            connection.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
            connection.commit()
        try:
            context.configure(
                connection=connection,
                target_metadata=Base.metadata,
                render_as_batch=connection.dialect.name == "sqlite",
            )
            with context.begin_transaction():
                context.run_migrations()
        finally:
            if postgres:
                connection.execute(
                    sa.text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK}
                )
                connection.commit()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
