"""The delete step: remove the points of a document marked deleted (safe to repeat)."""

from __future__ import annotations

import uuid

from shared import repository as repo
from shared.db import transaction
from shared.log import get_logger
from shared.pipeline import wiring
from shared.pipeline.steps.runner import Outcome
from shared.settings import get_settings

log = get_logger(__name__)


def delete_document(document_id: uuid.UUID, actor: str | None = None) -> Outcome:
    """The delete was recorded when it was sent (`ingest.remove`); this step only purges. When
    a newer publish has registered the document again in between (`deleted_at` cleared), that
    publish was sent last and wins: the late step changes nothing, and the new version's
    finalize removes the old points. While a version of the document is held by a running task
    the document waits (`busy`)."""
    settings = get_settings()
    with transaction() as session:
        if not repo.document_still_deleted(session, document_id):
            log.info("delete skipped: the document was published again after it", actor=actor)
            return Outcome(stopped=[document_id])
        if repo.other_live_lease(session, document_id, uuid.UUID(int=0)):
            return Outcome(busy=[document_id])
    wiring.index_for(settings, wiring.embedder(settings)).delete_document(document_id)
    with transaction() as session:
        repo.mark_purged(session, document_id)
    return Outcome(go_on=[document_id], done=[document_id])
