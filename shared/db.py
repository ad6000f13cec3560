"""Engines and sessions. One engine per database URL per process."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.orm import Session, sessionmaker

from shared.settings import get_settings

IDLE_PING_SECONDS = 5.0  # a connection idle longer is checked before use


def normalise_url(url: str) -> str:
    """Use psycopg 3 for plain `postgresql://` URLs (operators copy them from anywhere)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


@lru_cache(maxsize=8)
def engine_for(url: str) -> sa.Engine:
    """A pooled engine; SQLite gets WAL, a busy timeout and foreign keys."""
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(url, connect_args={"timeout": 30})

        @sa.event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            # WAL with NORMAL: a commit is not fsynced (a power cut may lose the last ones, a
            # crash of the process loses nothing); the embedded default commits per stage.
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        return engine
    engine = sa.create_engine(url, pool_size=10, max_overflow=20)
    _ping_when_idle(engine)
    return engine


def _ping_when_idle(engine: sa.Engine) -> None:
    """Check a pooled connection before use only when it sat idle for a while.

    `pool_pre_ping` pings on every checkout, a round trip and a transaction of its own, which
    doubled the pipeline's transactions per page. A connection in steady use is checked by its
    own next statement: if the server went away, that statement fails, SQLAlchemy drops the
    whole pool, and the task is retried (stages are safe to run twice)."""

    @sa.event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection, record) -> None:  # type: ignore[no-untyped-def]
        record.info["idle_since"] = time.monotonic()

    @sa.event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection, record, _proxy) -> None:  # type: ignore[no-untyped-def]
        since = record.info.get("idle_since")
        if since is not None and time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            cursor = dbapi_connection.cursor()
            cursor.execute("SELECT 1")
            cursor.close()
            dbapi_connection.rollback()
        except Exception as exc:
            raise DisconnectionError("the pooled connection is gone") from exc


def engine() -> sa.Engine:
    return engine_for(get_settings().database_url)


def session_factory() -> sessionmaker[Session]:
    return sessionmaker(engine(), expire_on_commit=False)


@contextmanager
def transaction() -> Iterator[Session]:
    """A session inside one transaction: committed on success, rolled back on error."""
    with session_factory().begin() as session:
        yield session


def schema_missing(error: DBAPIError) -> bool:
    """A table is missing (no `ingest db upgrade` yet): SQLite says "no such table",
    Postgres raises UndefinedTable (psycopg imported here: the CLI on SQLite never needs it)."""
    from psycopg.errors import UndefinedTable

    return isinstance(error.orig, UndefinedTable) or "no such table" in str(error.orig)
