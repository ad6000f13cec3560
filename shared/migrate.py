"""Run the Alembic migrations that ship inside the `shared` package.

Alembic is imported only to migrate: an embedded database already at `HEAD` (every command
after the first) is recognised by one query, without Alembic's ~0.25 s import."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

from shared.db import engine_for, normalise_url
from shared.settings import get_settings

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).with_name("migrations")
#: The newest migration's revision: `head_revision()` read from the scripts, written down so
#: the check below needs no Alembic (a test holds the two equal).
HEAD = "0010"
#: Postgres advisory lock held while migrating: every pod's init container may run
#: `ingest db upgrade` at once; one migrates, the others wait and find the schema at head.
MIGRATION_LOCK = 0x1265_0001


def alembic_config(url: str | None = None) -> Config:
    """The URL travels in `attributes`, not in a config option: options go through
    ConfigParser interpolation, where a URL-encoded password (`p%40ss`) is a syntax error
    (and the error printed the password)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = normalise_url(url or get_settings().database_url)
    return config


@lru_cache
def head_revision() -> str | None:
    """The migration head this code needs (read once from the shipped scripts)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def current_revision(connection: sa.Connection) -> str | None:
    """The revision the database is at; None when it has no schema (never migrated)."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def upgrade(url: str | None = None, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    from alembic import command

    command.downgrade(alembic_config(url), revision)


def ensure_embedded_schema() -> None:
    """The embedded default (SQLite) creates its schema on first use; a shared database is
    migrated by the operator (`ingest db upgrade`), never implicitly by a command."""
    url = get_settings().database_url
    if url.startswith("sqlite") and not _at_head(url):
        upgrade()


def _at_head(url: str) -> bool:
    """Whether the database's recorded revision is `HEAD` (no table yet, or another
    revision: not at head, and Alembic decides what to do)."""
    try:
        with engine_for(url).connect() as connection:
            found = connection.execute(sa.text("SELECT version_num FROM alembic_version"))
            return [row[0] for row in found] == [HEAD]
    except sa.exc.OperationalError:  # no alembic_version table: never migrated
        return False
