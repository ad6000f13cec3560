"""The reaper on the real Postgres, with the queues' ends played by recording callables."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from shared import repository as repo
from shared.db import transaction
from shared.models import DocumentVersion, utcnow
from shared.pipeline.reaper import reap
from shared.settings import Settings
from shared.states import Status
from tests.support.versions import new_version

SETTINGS = Settings(received_grace_seconds=30, stuck_after_seconds=600, max_attempts=3)


class Queues:
    """Records what the reaper sends; `depth` plays the queues' backlog."""

    def __init__(self) -> None:
        self.sent: list[tuple[uuid.UUID, Status]] = []
        self.deleted: list[uuid.UUID] = []
        self.depth: dict[Status, int] = {}
        self.broken = False

    def enqueue(self, version_id: uuid.UUID, stage: Status) -> None:
        if self.broken:
            raise ConnectionError("broker down")
        self.sent.append((version_id, stage))
        self.depth[stage] = self.depth.get(stage, 0) + 1  # a real queue holds it now

    def delete(self, document_id: uuid.UUID) -> None:
        self.deleted.append(document_id)

    def backlog(self, stage: Status) -> int:
        return self.depth.get(stage, 0)

    def round(self) -> object:
        return reap(self.enqueue, self.delete, SETTINGS, backlog=self.backlog)


def version_in(status: Status, *, lease: str | None = None, attempts: int = 1) -> uuid.UUID:
    """A version left in `status` long ago, with an expired lease held by `lease` (or none)."""
    content = uuid.uuid4().bytes
    with transaction() as session:
        registered = repo.register_version(
            session,
            new_version(content, str(uuid.uuid4())),
        )
        long_ago = utcnow() - timedelta(hours=2)
        session.execute(
            sa.update(DocumentVersion)
            .where(DocumentVersion.id == registered.version_id)
            .values(
                status=status,
                updated_at=long_ago,
                attempts=attempts,
                lease_owner=lease,
                lease_expires_at=long_ago if lease else None,
            )
        )
    return registered.version_id


def version(version_id: uuid.UUID) -> DocumentVersion:
    with transaction() as session:
        found = repo.load_version(session, version_id)
        assert found is not None
        return found


@pytest.fixture
def queues(pg: str) -> Queues:
    return Queues()


def test_received_versions_are_sent_again_only_when_their_queue_is_empty(queues: Queues) -> None:
    waiting = version_in(Status.RECEIVED, attempts=0)
    queues.depth[Status.RECEIVED] = 40  # a big import is still queued: its message is there
    queues.round()
    assert queues.sent == []

    queues.depth[Status.RECEIVED] = 0
    queues.round()
    assert queues.sent == [(waiting, Status.RECEIVED)]
    queues.round()  # the grace period starts again: not sent twice in a row
    assert len(queues.sent) == 1


def test_a_version_without_a_task_waits_for_its_queue_then_goes_without_an_attempt(
    queues: Queues,
) -> None:
    lost = version_in(Status.CHUNKING)
    queues.depth[Status.CHUNKING] = 5
    queues.round()
    assert queues.sent == []
    queues.depth[Status.CHUNKING] = 0
    queues.round()
    assert queues.sent == [(lost, Status.CHUNKING)]
    assert version(lost).attempts == 1


def test_a_task_that_died_counts_as_an_attempt_and_is_sent_despite_a_backlog(
    queues: Queues,
) -> None:
    crashed = version_in(Status.EMBEDDING, lease="dead-task", attempts=1)
    queues.depth[Status.EMBEDDING] = 100
    queues.round()
    assert queues.sent == [(crashed, Status.EMBEDDING)]
    assert version(crashed).attempts == 2


def test_after_max_attempts_a_crashing_version_fails_as_stuck(queues: Queues) -> None:
    poison = version_in(Status.CONVERTING, lease="dead-task", attempts=3)
    queues.round()
    found = version(poison)
    assert queues.sent == []
    assert found.status == Status.FAILED and found.error_code == "stuck"
    assert found.retryable is True and "converting stage 3 times" in (found.error_message or "")


def test_a_live_task_and_a_broken_broker_are_left_alone(queues: Queues) -> None:
    working = version_in(Status.UPSERTING, lease="alive")
    with transaction() as session:
        session.execute(
            sa.update(DocumentVersion)
            .where(DocumentVersion.id == working)
            .values(lease_expires_at=utcnow() + timedelta(minutes=5))
        )
    queues.round()
    assert queues.sent == []

    version_in(Status.RECEIVED, attempts=0)
    queues.broken = True
    report = queues.round()
    assert report.resent == []  # type: ignore[attr-defined]


def test_after_a_broker_loss_every_lost_version_is_sent_again_in_one_round(
    queues: Queues,
) -> None:
    """The queues are empty (Redis lost them): one round sends every version once, though
    each send makes its queue longer; the next round sends none of them again."""
    lost = {version_in(stage) for stage in (Status.CHUNKING, Status.EMBEDDING) for _ in range(4)}
    waiting = {version_in(Status.RECEIVED, attempts=0) for _ in range(3)}
    queues.round()
    assert sorted(v for v, _ in queues.sent) == sorted(lost | waiting)
    queues.depth.clear()  # the workers took them
    queues.round()
    assert len(queues.sent) == len(lost | waiting)


def test_a_waiting_metadata_version_is_sent_to_relabel_again_and_a_broken_broker_waits(
    queues: Queues,
) -> None:
    content = version_in(Status.INDEXED)
    with transaction() as session:
        document_id = version(content).document_id
        change = repo.register_field_changes(session, document_id, {"title": "Nieuw"}, "editors")
        assert change is not None
    relabels: list[uuid.UUID] = []

    def lost_long_ago() -> None:  # its message lost, past the grace
        with transaction() as session:
            session.execute(
                sa.update(DocumentVersion)
                .where(DocumentVersion.id == change.version_id)
                .values(updated_at=utcnow() - timedelta(hours=1))
            )

    def relabel(version_id: uuid.UUID) -> None:
        if queues.broken:
            raise ConnectionError("broker down")
        relabels.append(version_id)

    queues.broken = True
    lost_long_ago()
    broken = reap(queues.enqueue, queues.delete, SETTINGS, queues.backlog, relabel)
    assert broken.resent == [] and relabels == []  # tried again next round
    queues.broken = False
    lost_long_ago()
    report = reap(queues.enqueue, queues.delete, SETTINGS, queues.backlog, relabel)
    assert relabels == [change.version_id] and change.version_id in report.resent
    assert queues.sent == []  # not sent down the content chain
