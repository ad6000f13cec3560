"""Alembic: upgrade, downgrade to base, upgrade again, on an empty Postgres and on SQLite."""

from __future__ import annotations

import sqlalchemy as sa

from shared.migrate import downgrade, upgrade
from shared.models import Base
from tests.services import temporary_postgres_database


def tables(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def round_trip(url: str) -> None:
    expected = set(Base.metadata.tables)
    upgrade(url)
    assert tables(url) == expected
    downgrade(url, "base")
    assert tables(url) == set()
    upgrade(url)
    assert tables(url) == expected


def test_round_trip_on_an_empty_postgres_database() -> None:
    with temporary_postgres_database() as url:
        round_trip(url)


def test_round_trip_on_sqlite(tmp_path) -> None:
    round_trip(f"sqlite:///{tmp_path}/ingest.db")
