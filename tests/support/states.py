"""The version state machine walked as the workers walk it, on Postgres and on SQLite (the
`factory` fixture, registered for tests/integration/shared/ by its conftest)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy.orm import Session, sessionmaker

from shared import repository as repo
from shared.db import engine_for
from shared.states import WORK_STAGES, Status

LEASE = timedelta(minutes=5)


def advance(factory: sessionmaker[Session], version_id: uuid.UUID, until: Status) -> bool:
    """Walk a version through the stages with claims and finishes, as the workers do."""
    for stage in WORK_STAGES:
        owner = f"task-{stage}"
        with factory.begin() as session:
            if version_id not in repo.claim(session, stage, owner, LEASE, [version_id]).claimed:
                return False
        if stage == until:
            return True
        with factory.begin() as session:
            if not repo.finish(session, stage, owner, [version_id]):
                return False
    return True


@pytest.fixture(params=["postgres", "sqlite"])
def factory(request: pytest.FixtureRequest, tmp_path) -> sessionmaker[Session]:
    if request.param == "postgres":
        url = request.getfixturevalue("pg")
    else:
        from shared.migrate import upgrade

        url = f"sqlite:///{tmp_path}/ingest.db"
        upgrade(url)
    return sessionmaker(engine_for(url), expire_on_commit=False)
