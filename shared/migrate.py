"""Run the Alembic migrations that ship inside the `shared` package."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from shared.db import normalise_url
from shared.settings import get_settings

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", normalise_url(url or get_settings().database_url))
    return config


def upgrade(url: str | None = None, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)


def ensure_embedded_schema() -> None:
    """The embedded default (SQLite) creates its schema on first use; a shared database is
    migrated by the operator (`ingest db upgrade`), never implicitly by a command."""
    if get_settings().database_url.startswith("sqlite"):
        upgrade()
