"""The batch lease operations on the real Postgres, called directly: one holder per version,
however a batch is claimed; moves with their events; leases given back, renewed, handed on."""

from __future__ import annotations

import uuid
from datetime import timedelta

import sqlalchemy as sa

from shared import repository as repo
from shared.db import transaction
from shared.models import DocumentVersion, Event, utcnow
from shared.states import Status
from tests.support.versions import new_version

LEASE = timedelta(minutes=5)


def register(*names: str) -> list[uuid.UUID]:
    ids = []
    for name in names:
        with transaction() as session:
            new = new_version(f"# {name}\n\nText of {name}.".encode(), name)
            ids.append(repo.register_version(session, new).version_id)
    return ids


def put(version_id: uuid.UUID, **values: object) -> None:
    with transaction() as session:
        session.execute(
            sa.update(DocumentVersion).where(DocumentVersion.id == version_id).values(**values)
        )


def row(version_id: uuid.UUID) -> DocumentVersion:
    with transaction() as session:
        found = repo.load_version(session, version_id, "markdown")
        assert found is not None
        session.expunge(found)
        return found


def moves(version_id: uuid.UUID) -> list[tuple[str | None, str, str | None]]:
    with transaction() as session:
        return [
            (e.from_status, e.to_status, e.actor)
            for e in session.scalars(
                sa.select(Event).where(Event.version_id == version_id).order_by(Event.id)
            )
        ]


def test_a_convert_claim_enters_the_stage_with_an_event_and_an_attempt(pg: str) -> None:
    a, b = register("a", "b")
    with transaction() as session:
        claim = repo.claim(session, Status.CONVERTING, "task-1", LEASE, [a, b])
    assert set(claim.claimed) == {a, b}
    for version_id in (a, b):
        version = row(version_id)
        assert (version.status, version.lease_owner, version.attempts) == (
            Status.CONVERTING,
            "task-1",
            1,
        )
        assert version.converting_at is not None
        assert moves(version_id)[-1] == ("received", "converting", "task-1")


def test_a_second_claim_finds_them_held_until_the_lease_runs_out(pg: str) -> None:
    (a,) = register("a")
    with transaction() as session:
        repo.claim(session, Status.CONVERTING, "task-1", LEASE, [a])
    with transaction() as session:
        claim = repo.claim(session, Status.CONVERTING, "task-2", LEASE, [a])
    assert claim.claimed == {} and claim.held == {a}

    put(a, lease_expires_at=utcnow() - timedelta(seconds=1))  # task-1 died
    with transaction() as session:
        claim = repo.claim(session, Status.CONVERTING, "task-2", LEASE, [a])
    assert set(claim.claimed) == {a}
    assert row(a).lease_owner == "task-2"
    assert row(a).attempts == 1  # resumed, not entered again
    assert [m for m in moves(a) if m[1] == "converting"] == [("received", "converting", "task-1")]


def test_a_handover_lets_the_next_stage_take_the_previous_tasks_leases(pg: str) -> None:
    (a,) = register("a")
    with transaction() as session:
        repo.claim(session, Status.CONVERTING, "convert", LEASE, [a])
        conversion = {"markdown": "# a", "page_starts": [], "conversion": {}}
        moved = repo.finish(
            session, Status.CONVERTING, "convert", [a], keep_lease=True, each={a: conversion}
        )
    assert moved == [a] and row(a).lease_owner == "convert" and row(a).markdown == "# a"
    with transaction() as session:
        assert repo.claim(session, Status.CHUNKING, "chunk", LEASE, [a]).held == {a}
        claim = repo.claim(session, Status.CHUNKING, "chunk", LEASE, [a], handover_from="convert")
    assert set(claim.claimed) == {a} and row(a).lease_owner == "chunk"


def test_where_the_unclaimed_stand(pg: str) -> None:
    ahead, failed, early, held_ahead = register("ahead", "failed", "early", "held-ahead")
    put(ahead, status=Status.EMBEDDING)
    put(failed, status=Status.FAILED)
    put(held_ahead, status=Status.EMBEDDING, lease_owner="other", lease_expires_at=utcnow() + LEASE)
    missing = uuid.uuid4()
    with transaction() as session:
        claim = repo.claim(
            session, Status.CHUNKING, "chunk", LEASE, [ahead, failed, early, held_ahead, missing]
        )
    assert claim.claimed == {}
    assert claim.past == {ahead}  # an earlier delivery did it: go on
    assert claim.held == {held_ahead}  # another live task carries it on
    assert claim.gone == {failed, early, missing}  # left, not yet here, never existed


def test_take_waiting_adds_the_oldest_waiting_versions(pg: str) -> None:
    first, second, third, mine = register("first", "second", "third", "mine")
    with transaction() as session:
        claim = repo.claim(session, Status.CONVERTING, "task", LEASE, [mine], take_waiting=2)
    assert set(claim.claimed) == {mine, first, second}
    assert row(third).status == Status.RECEIVED and row(third).lease_owner is None


def test_take_waiting_chunks_fills_up_to_about_that_many_chunks(pg: str) -> None:
    a, b, c = register("a", "b", "c")
    for version_id in (a, b, c):
        put(version_id, status=Status.EMBEDDING, chunk_count=3)
    with transaction() as session:
        claim = repo.claim(session, Status.EMBEDDING, "embed", LEASE, [], take_waiting_chunks=5)
    assert set(claim.claimed) == {a, b}  # 3 chunks, then 6 >= 5: stop


def test_finish_moves_only_what_the_owner_holds_and_gives_the_lease_back(pg: str) -> None:
    a, b = register("a", "b")
    with transaction() as session:
        repo.claim(session, Status.CONVERTING, "mine", LEASE, [a])
        repo.claim(session, Status.CONVERTING, "theirs", LEASE, [b])
        moved = repo.finish(session, Status.CONVERTING, "mine", [a, b])
    assert moved == [a]
    assert (row(a).status, row(a).lease_owner) == (Status.CHUNKING, None)
    assert (row(b).status, row(b).lease_owner) == (Status.CONVERTING, "theirs")
    assert moves(a)[-1] == ("converting", "chunking", "mine")


def test_a_superseded_version_does_not_move_and_its_lease_can_be_given_back(pg: str) -> None:
    (a,) = register("a")
    with transaction() as session:
        repo.claim(session, Status.CONVERTING, "task", LEASE, [a])
    with transaction() as session:  # a newer version of the same page arrives
        repo.register_version(session, new_version(b"# a\n\nNewer text.", "a"))
    assert row(a).status == Status.SUPERSEDED
    with transaction() as session:
        assert repo.finish(session, Status.CONVERTING, "task", [a]) == []
        repo.release(session, "task", [a])
    assert row(a).lease_owner is None


def test_heartbeat_renews_only_the_owners_leases(pg: str) -> None:
    a, b = register("a", "b")
    with transaction() as session:
        repo.claim(session, Status.CONVERTING, "mine", timedelta(seconds=5), [a])
        repo.claim(session, Status.CONVERTING, "theirs", timedelta(seconds=5), [b])
    before = row(a).lease_expires_at
    with transaction() as session:
        assert repo.heartbeat(session, "mine", [a, b], LEASE) == {a}
    assert row(a).lease_expires_at > before
    assert row(b).lease_owner == "theirs"


def test_release_owner_gives_back_what_a_killed_run_left(pg: str) -> None:
    a, b, c = register("a", "b", "c")
    with transaction() as session:
        repo.claim(session, Status.CONVERTING, "cli", LEASE, [a, b])
        repo.claim(session, Status.CONVERTING, "other", LEASE, [c])
    claimed = row(a).attempts
    with transaction() as session:
        released = repo.release_owner(session, "cli")
    assert {version for version, _, _ in released} == {a, b}
    assert row(a).lease_owner is None and row(c).lease_owner == "other"
    assert row(a).attempts == claimed


def test_release_owner_can_count_the_attempt_the_dead_process_used(pg: str) -> None:
    (a,) = register("a")
    put(
        a, status=Status.EMBEDDING, lease_owner="cli", lease_expires_at=utcnow() + LEASE, attempts=2
    )
    with transaction() as session:
        released = repo.release_owner(session, "cli", count_attempt=True)
    assert released == [(a, "embedding", 3)]
    assert row(a).attempts == 3 and row(a).lease_owner is None


def test_held_elsewhere_names_versions_whose_document_has_another_live_holder(pg: str) -> None:
    (old,) = register("page")
    put(old, status=Status.EMBEDDING, lease_owner="embed", lease_expires_at=utcnow() + LEASE)
    with transaction() as session:
        registered = repo.register_version(session, new_version(b"# page\n\nNew.", "page"))
    new = registered.version_id
    (alone,) = register("alone")
    with transaction() as session:
        claimed = {new: registered.document_id, alone: row(alone).document_id}
        assert repo.held_elsewhere(session, claimed) == {new}
