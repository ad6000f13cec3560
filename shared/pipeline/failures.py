"""Ending a version in `failed`, in one place, so that every failure is both recorded for the
editors and written to the log: one warning line with the document id, version id, code and
message (operators read the log, not the database)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from shared import repository as repo
from shared.db import transaction
from shared.errors import IngestError, PermanentError
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


def give_up(version_ids: Sequence[uuid.UUID], error: BaseException, actor: str, hint: str) -> None:
    """End versions whose stage met `error` with no attempt left: `failed`, retryable unless
    the error says the input itself is wrong. An error nobody foresaw is named by `hint` (where
    operators find the traceback), never shown raw to an editor."""
    if isinstance(error, IngestError):
        code, message = error.code, error.message
    else:
        log.error("unexpected error in a stage", exc_info=error, actor=actor)
        code, message = "internal_error", f"Unexpected error in {actor}; operators: {hint}."
    retryable = not isinstance(error, PermanentError)
    for version_id in version_ids:
        fail_version(version_id, code=code, message=message, retryable=retryable, actor=actor)
