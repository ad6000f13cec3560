"""The state machine on the real Postgres: one winner per transition, supersede, unchanged."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from shared import repository as repo
from shared.db import engine_for
from shared.models import DocumentVersion, Event, utcnow
from shared.states import Status
from tests.support.states import LEASE, advance
from tests.support.versions import new_version
from tests.support.workers import wait_for


def register(factory: sessionmaker[Session], content: bytes) -> repo.Registered:
    with factory.begin() as session:
        return repo.register_version(session, new_version(content, "page-1", filename="page.md"))


def status_of(factory: sessionmaker[Session], version_id: uuid.UUID) -> Status:
    with factory() as session:
        return Status(session.get(DocumentVersion, version_id).status)


def test_twenty_threads_race_one_transition_exactly_one_wins(pg: str) -> None:
    factory = sessionmaker(engine_for(pg), expire_on_commit=False)
    version_id = register(factory, b"# Knie\n\nTekst.").version_id
    assert advance(factory, version_id, until=Status.CHUNKING)
    with factory.begin() as session:
        session.execute(sa.update(DocumentVersion).values(lease_owner=None))

    barrier = threading.Barrier(20)
    wins: list[bool] = []
    lock = threading.Lock()

    def racer() -> None:
        with factory() as session:
            barrier.wait()
            won = repo.transition(session, version_id, Status.CHUNKING, Status.EMBEDDING)
            session.commit()
        with lock:
            wins.append(won)

    threads = [threading.Thread(target=racer) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert wins.count(True) == 1 and len(wins) == 20
    with factory() as session:
        moved = session.scalars(
            sa.select(Event).where(
                Event.version_id == version_id, Event.to_status == Status.EMBEDDING
            )
        ).all()
    assert len(moved) == 1
    assert status_of(factory, version_id) is Status.EMBEDDING


def test_same_bytes_twice_is_unchanged(factory: sessionmaker[Session]) -> None:
    first = register(factory, b"# Page\n\nBody")
    assert first.status is Status.RECEIVED
    assert advance(factory, first.version_id, until=Status.UPSERTING)
    with factory.begin() as session:
        repo.lock_documents_of(session, [first.version_id])
        assert repo.make_current(session, "task-upserting", [first.version_id])
    assert status_of(factory, first.version_id) is Status.INDEXED

    second = register(factory, b"# Page\n\nBody")
    assert second.status is Status.UNCHANGED
    assert second.document_id == first.document_id and second.number == 2
    assert status_of(factory, first.version_id) is Status.INDEXED


def test_newer_version_supersedes_the_one_in_flight(factory: sessionmaker[Session]) -> None:
    v1 = register(factory, b"version one")
    assert advance(factory, v1.version_id, until=Status.EMBEDDING)
    assert status_of(factory, v1.version_id) is Status.EMBEDDING

    v2 = register(factory, b"version two")
    assert v2.superseded == [v1.version_id]
    assert status_of(factory, v1.version_id) is Status.SUPERSEDED

    # v1's running task cannot move it any further, nor claim another stage.
    with factory.begin() as session:
        assert not repo.finish(session, Status.EMBEDDING, "task-embedding", [v1.version_id])
        claim = repo.claim(session, Status.UPSERTING, "other", LEASE, [v1.version_id])
        assert claim.gone == {v1.version_id}
    assert advance(factory, v2.version_id, until=Status.UPSERTING)
    with factory.begin() as session:
        assert repo.finish(session, Status.UPSERTING, "task-upserting", [v2.version_id])
    assert status_of(factory, v2.version_id) is Status.INDEXED
    assert status_of(factory, v1.version_id) is Status.SUPERSEDED


def test_a_live_lease_keeps_a_second_task_out_until_it_expires(
    factory: sessionmaker[Session],
) -> None:
    version_id = register(factory, b"lease me").version_id
    with factory.begin() as session:
        assert (
            version_id in repo.claim(session, Status.CONVERTING, "a", LEASE, [version_id]).claimed
        )
    with factory.begin() as session:
        assert repo.claim(session, Status.CONVERTING, "b", LEASE, [version_id]).held == {version_id}
        # The first owner died: its lease runs out and the next delivery resumes the stage.
        expired = utcnow() - timedelta(seconds=1)
        session.execute(sa.update(DocumentVersion).values(lease_expires_at=expired))
    with factory.begin() as session:
        assert (
            version_id in repo.claim(session, Status.CONVERTING, "b", LEASE, [version_id]).claimed
        )
        assert not repo.finish(session, Status.CONVERTING, "a", [version_id])
        assert repo.finish(session, Status.CONVERTING, "b", [version_id])
        # Past the stage (the next stage claims it): a late delivery of convert goes on.
        assert repo.claim(session, Status.CONVERTING, "c", LEASE, [version_id]).past == {version_id}


def test_disallowed_transition_is_refused(factory: sessionmaker[Session]) -> None:
    version_id = register(factory, b"x").version_id
    with factory.begin() as session, pytest.raises(ValueError):
        repo.transition(session, version_id, Status.RECEIVED, Status.UPSERTING)


def test_a_stage_finishing_while_a_newer_version_registers_is_still_superseded(pg: str) -> None:
    """v1 moves `converting -> chunking` in a transaction that commits only after v2's
    registration has read v1's status: v1 must still end superseded (last sent wins)."""
    factory = sessionmaker(engine_for(pg), expire_on_commit=False)
    v1 = register(factory, b"# Knie\n\nVersie een.").version_id
    assert advance(factory, v1, until=Status.CONVERTING)

    stage = factory()  # the worker's finish, left open: it holds v1's row lock
    assert repo.finish(stage, Status.CONVERTING, f"task-{Status.CONVERTING}", [v1])
    registered: list[repo.Registered] = []
    newer = threading.Thread(
        target=lambda: registered.append(register(factory, b"# Knie\n\nVersie twee."))
    )
    newer.start()
    try:
        wait_for(lambda: _waiting_on_a_lock(pg), timeout=10, what="v2's registration to wait")
    finally:
        stage.commit()
        stage.close()
    newer.join(timeout=10)

    assert registered and registered[0].superseded == [v1]
    assert status_of(factory, v1) == Status.SUPERSEDED


def _waiting_on_a_lock(pg: str) -> bool:
    with engine_for(pg).connect() as connection:
        return bool(
            connection.scalar(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            )
        )
