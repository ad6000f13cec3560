"""Leases the in-process scheduler (`ingest run`, `ingest serve`) finds still held at a start
were left by a process that died working on those versions: each counts an attempt, and a
version that keeps killing the process ends `failed` instead of being taken up forever."""

from __future__ import annotations

import uuid
from datetime import timedelta

import sqlalchemy as sa

from shared import repository as repo
from shared.db import transaction
from shared.models import DocumentVersion, utcnow
from shared.pipeline.in_process import OWNER, give_back_leases
from shared.settings import get_settings
from shared.states import Status
from tests.support.versions import new_version


def held_version(name: str, attempts: int) -> uuid.UUID:
    """A version a dead process held in the convert stage, with `attempts` used."""
    with transaction() as session:
        new = new_version(f"# {name}\n\nText of {name}.".encode(), name)
        version_id = repo.register_version(session, new).version_id
        session.execute(
            sa.update(DocumentVersion)
            .where(DocumentVersion.id == version_id)
            .values(
                status=Status.CONVERTING.value,
                lease_owner=OWNER,
                lease_expires_at=utcnow() + timedelta(minutes=5),
                attempts=attempts,
            )
        )
    return version_id


def row(version_id: uuid.UUID) -> DocumentVersion:
    with transaction() as session:
        found = session.get(DocumentVersion, version_id)
        assert found is not None
        session.expunge(found)
        return found


def test_a_version_that_keeps_killing_the_process_ends_failed(pg: str) -> None:
    last_try = get_settings().max_attempts - 1
    poison, other = held_version("poison", last_try), held_version("other", 0)
    give_back_leases()
    failed = row(poison)
    assert (failed.status, failed.error_code, failed.retryable) == ("failed", "stuck", True)
    taken_up_again = row(other)
    assert (taken_up_again.status, taken_up_again.attempts) == ("converting", 1)
    assert taken_up_again.lease_owner is None


def test_a_clean_stop_uses_up_no_attempt(pg: str) -> None:
    version = held_version("stopped", get_settings().max_attempts - 1)
    give_back_leases(count_attempts=False)
    stopped = row(version)
    assert (stopped.status, stopped.attempts, stopped.lease_owner) == (
        "converting",
        get_settings().max_attempts - 1,
        None,
    )
