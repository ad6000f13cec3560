"""Row locks on the real Postgres: registering a version never deadlocks with a stage that is
finishing, making a version current, or a delete."""

from __future__ import annotations

import random
import threading
import uuid
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from shared import repository as repo
from shared.db import engine_for
from shared.models import Document, DocumentVersion
from shared.states import IN_FLIGHT, WORK_STAGES, Status
from tests.support.versions import new_version
from tests.support.workers import wait_for

LEASE = timedelta(minutes=5)


def claim(factory: sessionmaker[Session], version_id: uuid.UUID, stage: Status, owner: str) -> bool:
    with factory.begin() as session:
        return version_id in repo.claim(session, stage, owner, LEASE, [version_id]).claimed


def waiting_on_a_lock(pg: str) -> bool:
    with engine_for(pg).connect() as connection:
        return bool(
            connection.scalar(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            )
        )


def test_convert_writing_twice_while_a_version_registers_does_not_deadlock(pg: str) -> None:
    """A stage that updates its row twice in one transaction (a heartbeat, then the move with
    its conversion): the second update's foreign-key check takes FOR KEY SHARE on the
    document, which the registration holds locked while it waits for the version row. A FOR
    UPDATE there is a deadlock; FOR NO KEY UPDATE is not."""
    factory = sessionmaker(engine_for(pg), expire_on_commit=False)
    with factory.begin() as session:
        v1 = repo.register_version(session, new_version(b"# Knie\n\nEen.", source="cms")).version_id
    assert claim(factory, v1, Status.CONVERTING, "convert-task")

    stage = factory()
    stage.begin()
    assert repo.heartbeat(stage, "convert-task", [v1], LEASE) == {v1}
    outcome: list[object] = []

    def register_newer() -> None:
        try:
            with factory.begin() as session:
                outcome.append(
                    repo.register_version(session, new_version(b"# Knie\n\nTwee.", source="cms"))
                )
        except Exception as exc:
            outcome.append(exc)

    newer = threading.Thread(target=register_newer)
    newer.start()
    try:
        wait_for(lambda: waiting_on_a_lock(pg), timeout=10, what="the registration to wait")
        conversion = {"markdown": "# Knie", "page_starts": [], "conversion": {}}
        assert repo.finish(
            stage, Status.CONVERTING, "convert-task", [v1], each={v1: conversion}
        ) == [v1]
        stage.commit()
    finally:
        stage.close()
        newer.join(timeout=30)

    assert len(outcome) == 1 and isinstance(outcome[0], repo.Registered), outcome
    assert outcome[0].superseded == [v1]


def test_many_registrations_of_one_page_while_its_versions_move_never_deadlock(pg: str) -> None:
    """Registrations (webhook bursts), stage workers walking the newest versions through every
    stage with the repository's own writes, finalize and a delete, all at once on one page."""
    factory = sessionmaker(engine_for(pg), expire_on_commit=False)
    errors: list[BaseException] = []
    stop = threading.Event()

    def guarded(body):  # type: ignore[no-untyped-def]
        def run() -> None:
            try:
                body()
            except BaseException as exc:
                errors.append(exc)
                stop.set()

        return run

    def registrar(number: int) -> None:
        for n in range(15):
            if stop.is_set():
                return
            with factory.begin() as session:
                repo.register_version(
                    session, new_version(f"# Knie\n\n{number}-{n}".encode(), source="cms")
                )

    def deleter() -> None:
        for _ in range(3):
            if stop.is_set():
                return
            with factory() as session:
                document_id = session.scalar(sa.select(Document.id))
            if document_id:
                with factory.begin() as session:
                    repo.mark_document_deleted(session, document_id, "test")

    def stage_worker(number: int) -> None:
        owner = f"worker-{number}"
        rng = random.Random(number)
        while not stop.is_set():
            with factory() as session:
                candidates = session.scalars(
                    sa.select(DocumentVersion.id).where(
                        DocumentVersion.status.in_([s.value for s in IN_FLIGHT])
                    )
                ).all()
            if not candidates:
                if registrars_done.is_set():
                    return
                continue
            walk(rng.choice(candidates), owner)

    def walk(version_id: uuid.UUID, owner: str) -> None:
        for stage in WORK_STAGES:
            if not claim(factory, version_id, stage, owner):
                with factory() as session:
                    version = session.get(DocumentVersion, version_id)
                    if version is None or Status(version.status) != stage:
                        continue
                return
            with factory.begin() as session:
                version = session.get(DocumentVersion, version_id)
                assert version is not None
                values: dict[str, object] = {}
                if stage is Status.CONVERTING:
                    values = {"markdown": "# K", "page_starts": [], "conversion": {}}
                elif stage is Status.CHUNKING:
                    repo.describe_document(session, version.document_id, {"title": "Knie"})
                    rows = chunk_rows(version.document_id)
                    repo.replace_chunks_of(session, {version_id: rows})
                    values = {"chunk_count": len(rows)}
                elif stage is Status.EMBEDDING:
                    repo.add_usages(session, {version_id: 10}, {version_id: 1}, {version_id: 1})
                if stage is Status.UPSERTING:
                    repo.lock_documents_of(session, [version_id])
                    if not repo.make_current(session, owner, [version_id]):
                        repo.release(session, owner, [version_id])
                    return
                if not repo.finish(session, stage, owner, [version_id], each={version_id: values}):
                    return

    registrars_done = threading.Event()
    registrars = [threading.Thread(target=guarded(lambda n=n: registrar(n))) for n in range(4)]
    others = [threading.Thread(target=guarded(lambda n=n: stage_worker(n))) for n in range(3)]
    others.append(threading.Thread(target=guarded(deleter)))
    for thread in registrars + others:
        thread.start()
    for thread in registrars:
        thread.join(timeout=120)
    registrars_done.set()
    for thread in others:
        thread.join(timeout=120)

    assert errors == [], [repr(e)[:300] for e in errors]
    with factory() as session:
        document = session.scalars(sa.select(Document)).one()
        statuses = session.scalars(sa.select(DocumentVersion.status)).all()
    assert document.version_count == 60 == len(statuses)
    assert [s for s in statuses if Status(s) is Status.INDEXED] in ([], [Status.INDEXED])


def chunk_rows(document_id: uuid.UUID) -> list[dict[str, object]]:
    return [
        {
            "document_id": document_id,
            "index": index,
            "point_id": uuid.uuid4(),
            "content_hash": "0" * 64,
            "text": f"chunk {index}",
            "token_count": 3,
            "char_start": 0,
            "char_end": 7,
            "headings": [],
            "kinds": [],
        }
        for index in range(3)
    ]
