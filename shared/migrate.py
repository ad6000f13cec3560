"""Run the Alembic migrations that ship inside the `shared` package."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from shared.db import normalise_url
from shared.settings import get_settings

MIGRATIONS = Path(__file__).with_name("migrations")
#: Postgres advisory lock held while migrating: every pod's init container may run
#: `ingest db upgrade` at once; one migrates, the others wait and find the schema at head.
MIGRATION_LOCK = 0x1265_0001


def alembic_config(url: str | None = None) -> Config:
    """The URL travels in `attributes`, not in a config option: options go through
    ConfigParser interpolation, where a URL-encoded password (`p%40ss`) is a syntax error
    (and the error printed the password)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = normalise_url(url or get_settings().database_url)
    return config


@lru_cache
def head_revision() -> str | None:
    """The migration head this code needs (read once from the shipped scripts)."""
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def current_revision(connection: sa.Connection) -> str | None:
    """The revision the database is at; None when it has no schema (never migrated)."""
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(url: str | None = None, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)


def ensure_embedded_schema() -> None:
    """The embedded default (SQLite) creates its schema on first use; a shared database is
    migrated by the operator (`ingest db upgrade`), never implicitly by a command."""
    if get_settings().database_url.startswith("sqlite"):
        upgrade()
