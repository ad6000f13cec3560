"""Ending a version in `failed`, in one place, so that every failure is both recorded for the
editors and written to the log: one warning line with the document id, version id, code and
message (operators read the log, not the database)."""

from __future__ import annotations

import uuid

from shared import repository as repo
from shared.db import transaction
from shared.log import get_logger

log = get_logger("shared.pipeline.failures")


def fail_version(
    version_id: uuid.UUID,
    *,
    code: str,
    message: str,
    retryable: bool = False,
    actor: str | None = None,
) -> bool:
    """Move an in-flight version to `failed` (its own transaction) and log it; False when it
    had already left the pipeline (nothing is logged then: it is not this call's failure)."""
    with transaction() as session:
        document_id = repo.fail_version(
            session, version_id, code=code, message=message, retryable=retryable, actor=actor
        )
    if document_id is None:
        return False
    log.warning(
        "version failed",
        document_id=str(document_id),
        version_id=str(version_id),
        code=code,
        error_message=message,
        retryable=retryable,
        actor=actor,
    )
    return True
