"""`ingest status`'s overview reads through the plain driver (start-up); it must answer what
the ORM queries the API uses answer, on Postgres and on SQLite."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session, sessionmaker

from shared import repository as repo
from shared.db import engine_for
from shared.errors import IngestError
from shared.repository import overview
from shared.states import Status
from tests.support.states import advance
from tests.support.versions import new_version


def register(sessions: sessionmaker[Session], external_id: str) -> repo.Registered:
    with sessions.begin() as session:
        return repo.register_version(
            session, new_version(f"# {external_id}\n\nTekst.".encode(), external_id)
        )


def test_the_overview_matches_the_orm_queries(factory: sessionmaker[Session]) -> None:
    indexed = register(factory, "knie")
    assert advance(factory, indexed.version_id, until=Status.CHUNKING)
    register(factory, "heup")  # stays received
    gone = register(factory, "weg")
    with factory.begin() as session:
        assert repo.mark_document_deleted(session, gone.document_id)
        repo.lock_document(session, "upload", "leeg")  # a document row without a version yet

    url = factory.kw["bind"].url.render_as_string(hide_password=False)
    with overview.connect(url) as connection:
        counts = overview.status_counts(connection)
        recent = overview.recent_documents(connection)
    with factory() as session:
        assert counts == repo.status_counts(session)
        expected = repo.recent_documents(session)
    assert counts == {"chunking": 1, "received": 2, "deleted": 1}
    assert [(d.id, d.updated_at, d.title, d.external_id) for d in recent] == [
        (d.id, d.updated_at, d.title, d.external_id) for d in expected
    ]


def test_a_database_without_schema_says_so(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/leeg.db"
    engine_for(url).connect().close()  # the file exists, no tables
    with pytest.raises(IngestError) as refused, overview.connect(url) as connection:
        overview.status_counts(connection)
    assert refused.value.code == "no_schema"


def test_an_unreachable_postgres_is_one_line() -> None:
    with (
        pytest.raises(IngestError) as refused,
        overview.connect("postgresql+psycopg://127.0.0.1:9/nothing"),
    ):
        pass
    assert refused.value.code == "database"
    assert refused.value.message.startswith("OperationalError: ")
