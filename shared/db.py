"""Engines and sessions. One engine per database URL per process."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection, DBAPICursor, ExecutionContext
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

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
        def _sqlite_pragmas(
            dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry
        ) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            # WAL with NORMAL: a commit is not fsynced (a power cut may lose the last ones, a
            # crash of the process loses nothing); the embedded default commits per stage.
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        _one_writer_at_a_time(engine)
        return engine
    # orjson reads the JSON columns (a chunk's headings, sections, kinds) several times faster
    # than the standard library: the upsert stage reads them for every point it writes.
    engine = sa.create_engine(url, pool_size=10, max_overflow=20, json_deserializer=orjson.loads)
    _ping_when_idle(engine)
    return engine


WRITER_WAIT_SECONDS = 30.0  # as SQLite's busy timeout; then SQLite's own wait takes over
#: The writers' lock of each SQLite engine, by engine (tests look at it).
WRITERS: dict[sa.Engine, threading.RLock] = {}


def _one_writer_at_a_time(engine: sa.Engine) -> None:
    """Threads of this process take SQLite's write lock in turn, waking as it is given back.

    SQLite allows one writer; a second one polls with sleeps of 1, 2, 5 ... 100 ms (its busy
    handler) until the first commits. `ingest run` writes from two threads (conversion and
    embedding), and those sleeps would be the largest part of its SQL time. So a transaction
    takes a process-wide lock at its first write (where SQLite takes its own) and gives it
    back when its connection returns to the pool: the same order of writers, without the
    polling. Reads take nothing (WAL lets them run beside the writer). Other processes still
    meet SQLite's busy wait."""
    writer = WRITERS[engine] = threading.RLock()  # a thread's 2nd connection: no self-wait

    @sa.event.listens_for(engine, "before_cursor_execute")
    def _first_write(
        conn: sa.Connection,
        _cursor: DBAPICursor,
        statement: str,
        _params: Any,
        _context: ExecutionContext | None,
        _many: bool,
    ) -> None:
        info = conn.info  # the pooled connection's, as the record's below
        if info.get("writing") or statement.lstrip()[:6].upper() in ("SELECT", "PRAGMA"):
            return
        info["writing"] = writer.acquire(timeout=WRITER_WAIT_SECONDS)

    # Given back when the connection goes back to the pool, after its COMMIT or ROLLBACK ran
    # (the `commit` event fires before it: the next writer would still meet SQLite's lock).
    @sa.event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection: DBAPIConnection | None, record: ConnectionPoolEntry) -> None:
        _give_back(record.info)

    @sa.event.listens_for(engine, "invalidate")
    def _invalidated(
        _dbapi_connection: DBAPIConnection,
        record: ConnectionPoolEntry,
        _exception: BaseException | None,
    ) -> None:
        _give_back(record.info)

    def _give_back(info: dict[str, Any]) -> None:
        if info.pop("writing", False):
            with contextlib.suppress(RuntimeError):  # released by another thread (GC): gone
                writer.release()


def _ping_when_idle(engine: sa.Engine) -> None:
    """Check a pooled connection before use only when it sat idle for a while.

    `pool_pre_ping` pings on every checkout, a round trip and a transaction of its own, which
    doubled the pipeline's transactions per page. A connection in steady use is checked by its
    own next statement: if the server went away, that statement fails, SQLAlchemy drops the
    whole pool, and the task is retried (stages are safe to run twice)."""

    @sa.event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection: DBAPIConnection | None, record: ConnectionPoolEntry) -> None:
        record.info["idle_since"] = time.monotonic()

    @sa.event.listens_for(engine, "checkout")
    def _checkout(
        dbapi_connection: DBAPIConnection,
        record: ConnectionPoolEntry,
        _proxy: PoolProxiedConnection,
    ) -> None:
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
def autocommit() -> Iterator[sa.Connection]:
    """A connection on which each statement is its own transaction: a read of one statement
    is one round trip to Postgres, not three (BEGIN, the statement, COMMIT). For reads on
    the request path (every search reads the hidden record)."""
    with engine().connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        yield connection


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
