"""Alembic: upgrade, downgrade to base, upgrade again, on an empty Postgres and on SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from shared.migrate import HEAD, downgrade, ensure_embedded_schema, head_revision, upgrade
from shared.models import Base
from shared.settings import get_settings
from tests.support.services import temporary_postgres_database


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


def test_round_trip_on_an_empty_postgres_database(postgres_admin_url: str) -> None:
    with temporary_postgres_database(postgres_admin_url) as url:
        round_trip(url)


def test_round_trip_on_sqlite(tmp_path) -> None:
    round_trip(f"sqlite:///{tmp_path}/ingest.db")


def test_an_upgrade_waits_while_another_holds_the_migration_lock(postgres_admin_url: str) -> None:
    """Init containers of several pods run `ingest db upgrade` at once: one at a time."""
    import os
    import subprocess
    import sys

    from shared.migrate import MIGRATION_LOCK
    from tests.support.paths import ROOT
    from tests.support.workers import wait_for

    with temporary_postgres_database(postgres_admin_url) as url:
        engine = sa.create_engine(url)
        holder = engine.connect()
        holder.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        holder.commit()
        process = subprocess.Popen(
            [sys.executable, "-c", "from worker.cli.main import main; main()", "db", "upgrade"],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": url},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def waiting_on_the_lock() -> bool:
            with engine.connect() as probe:
                return bool(
                    probe.scalar(
                        sa.text(
                            "SELECT count(*) FROM pg_stat_activity WHERE "
                            "datname = current_database() AND wait_event = 'advisory'"
                        )
                    )
                )

        try:
            wait_for(
                lambda: process.poll() is not None or waiting_on_the_lock(),
                timeout=60,
                what="the upgrade to start",
            )
            assert process.poll() is None, "the upgrade ran while another held the lock"
            assert tables(url) == set()
        finally:
            holder.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
            holder.close()
            assert process.wait(timeout=60) == 0
        assert tables(url) == set(Base.metadata.tables)
        engine.dispose()


def _hidden_plan(url: str) -> str:
    """How the database finds the hidden documents every search reads."""
    from shared.repository.hiding import hidden_documents_query

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            query = hidden_documents_query().compile(conn, compile_kwargs={"literal_binds": True})
            explain = "EXPLAIN QUERY PLAN" if url.startswith("sqlite") else "EXPLAIN"
            if not url.startswith("sqlite"):
                conn.execute(sa.text("SET enable_seqscan = off"))  # a tiny table: a scan is cheaper
            return " ".join(str(row) for row in conn.execute(sa.text(f"{explain} {query}")))
    finally:
        engine.dispose()


def test_the_hidden_documents_are_read_through_their_index(
    postgres_admin_url: str, tmp_path
) -> None:
    """A search reads the hidden documents on every request: through the partial index, not
    a scan of every document (which grows with the collection)."""
    sqlite = f"sqlite:///{tmp_path}/ingest.db"
    upgrade(sqlite)
    assert "ix_documents_hidden" in _hidden_plan(sqlite)
    with temporary_postgres_database(postgres_admin_url) as url:
        upgrade(url)
        assert "ix_documents_hidden" in _hidden_plan(url)


def test_the_head_written_down_is_the_scripts_head() -> None:
    """`HEAD` spares an up-to-date embedded database Alembic's import: a new migration must
    move it too, or every command would skip migrating."""
    assert head_revision() == HEAD


def test_an_embedded_database_is_migrated_once_and_then_recognised_at_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path}/ingest.db"
    monkeypatch.setenv("DATABASE_URL", url)
    get_settings.cache_clear()
    try:
        ensure_embedded_schema()
        assert tables(url) == set(Base.metadata.tables)
        downgrade(url, "0009")  # an older schema is brought to head again
        ensure_embedded_schema()
        engine = sa.create_engine(url)
        with engine.connect() as connection:
            found = connection.execute(sa.text("SELECT version_num FROM alembic_version"))
            assert [row[0] for row in found] == [HEAD]
        engine.dispose()
    finally:
        get_settings.cache_clear()
