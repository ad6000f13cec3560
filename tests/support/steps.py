"""A version registered and taken through convert and chunk in-process, for the step tests."""

from __future__ import annotations

import uuid

from shared import repository as repo
from shared.db import transaction
from shared.pipeline import steps
from tests.support.versions import new_version


def register(content: bytes, external_id: str = "knee", title: str | None = None) -> uuid.UUID:
    new = new_version(content, external_id, filename=f"{external_id}.md", title=title)
    with transaction() as session:
        return repo.register_version(session, new).version_id


def to_embedding(version_id: uuid.UUID) -> None:
    converted = steps.convert_versions([version_id], "convert-task", then_chunk=True)
    assert converted.done == [version_id]
