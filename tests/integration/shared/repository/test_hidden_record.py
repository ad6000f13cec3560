"""The hidden record every search reads (`search.hidden_record`): the hidden documents that are
not deleted and the hidden chunks, in one statement outside a transaction (one round trip to
Postgres per search instead of four), on Postgres and on SQLite."""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from shared import repository as repo
from shared.db import engine
from shared.retrieval.search import hidden_record
from shared.settings import get_settings
from tests.support.versions import new_version


def register(sessions: sessionmaker[Session], external_id: str) -> uuid.UUID:
    with sessions.begin() as session:
        registered = repo.register_version(
            session, new_version(f"# {external_id}\n\nTekst.".encode(), external_id)
        )
        return registered.document_id


def in_autocommit(dbapi_connection: Any) -> bool:
    """sqlite3 sends no implicit BEGIN when `isolation_level` is None; psycopg's flag."""
    if isinstance(dbapi_connection, sqlite3.Connection):
        return dbapi_connection.isolation_level is None
    return bool(dbapi_connection.autocommit)


def test_the_hidden_record_is_one_statement_outside_a_transaction(
    factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = factory.kw["bind"].url.render_as_string(hide_password=False)
    monkeypatch.setenv("DATABASE_URL", url)
    get_settings.cache_clear()
    hidden, shown, deleted = (register(factory, name) for name in ("verborgen", "zichtbaar", "weg"))
    chunk = repo.ChunkTarget(uuid.uuid4(), 0)
    with factory.begin() as session:
        for document in (hidden, deleted):
            assert repo.set_document_hidden(session, document, True, "redactie", "verouderd")
        repo.set_chunk_hidden(session, shown, chunk, True, "redactie", "fout")
        assert repo.mark_document_deleted(session, deleted)

    statements: list[tuple[str, bool]] = []

    def seen(conn: sa.Connection, cursor: Any, statement: str, *_: Any) -> None:
        statements.append((statement, in_autocommit(conn.connection.dbapi_connection)))

    sa.event.listen(engine(), "before_cursor_execute", seen)
    try:
        documents, points = hidden_record()
    finally:
        sa.event.remove(engine(), "before_cursor_execute", seen)
        get_settings.cache_clear()
    assert documents == {hidden} and points == {chunk.point_id}
    assert len(statements) == 1 and statements[0][1], statements
