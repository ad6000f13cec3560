"""The step runner on the real Postgres: every lease a step holds is given back in one place on
any error, and one version's error stays its own (the rules in `Holding.each`)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from shared import repository as repo
from shared.db import transaction
from shared.errors import PermanentError
from shared.pipeline.convert import OcrNeeded
from shared.pipeline.steps.runner import Holding, Outcome
from shared.settings import get_settings
from shared.states import Status
from tests.support.versions import new_version

LEASE = timedelta(minutes=5)


def claimed(*names: str) -> dict[uuid.UUID, uuid.UUID]:
    ids = []
    for name in names:
        with transaction() as session:
            new = new_version(f"# {name}\n\nText.".encode(), name)
            ids.append(repo.register_version(session, new).version_id)
    with transaction() as session:
        return repo.claim(session, Status.CONVERTING, "step", LEASE, ids).claimed


def state(version_id: uuid.UUID) -> tuple[str, str | None, str | None]:
    with transaction() as session:
        version = repo.load_version(session, version_id)
        assert version is not None
        return version.status, version.lease_owner, version.error_code


def test_an_error_anywhere_in_the_step_gives_every_lease_back(pg: str) -> None:
    versions = claimed("a", "b", "c")
    outcome = Outcome()
    with pytest.raises(RuntimeError), Holding("step", get_settings(), versions, outcome):
        raise RuntimeError("the index went away")
    for version_id in versions:
        assert state(version_id) == (Status.CONVERTING, None, None)  # the next claim takes it


def test_a_failed_last_transaction_gives_back_the_leases_it_would_have_handed_on(
    pg: str,
) -> None:
    versions = claimed("a", "b")
    a, b = versions
    outcome = Outcome()
    held = Holding("step", get_settings(), versions, outcome)
    with pytest.raises(RuntimeError), held, held.finishing() as session:
        moved = repo.finish(session, Status.CONVERTING, "step", [a, b], keep_lease=True)
        held.close(session, handed_on=moved)
        raise RuntimeError("the commit failed")
    assert state(a) == state(b) == (Status.CONVERTING, None, None)  # rolled back, released


def test_each_versions_error_stays_its_own(pg: str) -> None:
    versions = claimed("wrong", "scanned", "flaky", "fine")
    wrong, scanned, flaky, fine = versions
    outcome = Outcome()
    with Holding("step", get_settings(), versions, outcome) as held:
        with held.each(wrong):
            raise PermanentError("PDF is beveiligd met een wachtwoord", code="pdf_encrypted")
        with held.each(scanned):
            raise OcrNeeded([1, 2])
        with held.each(flaky):
            raise ConnectionError("reset by peer")
        with held.each(fine):
            pass
        with held.finishing() as session:
            moved = repo.finish(session, Status.CONVERTING, "step", [fine], keep_lease=True)
            held.close(session, handed_on=moved)

    assert outcome.stopped == [wrong] and outcome.ocr == [scanned] and outcome.retry == [flaky]
    assert isinstance(outcome.error, ConnectionError)
    assert state(wrong) == (Status.FAILED, None, "pdf_encrypted")
    assert state(scanned) == state(flaky) == (Status.CONVERTING, None, None)  # given back
    assert state(fine) == (Status.CHUNKING, "step", None)  # handed on to the next stage
