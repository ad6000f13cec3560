"""The relabel step: a metadata version (a document's title, URL, language or tags changed
without new bytes) rewrites those payload fields on the current version's points, by id, in
batches. Nothing is converted or embedded: 0 tokens.

Races with content versions (issue 29): every change of a payload field counts one more
`documents.fields_revision`; the upsert step records on each content version the revision
its points were built with, and finalize, under the document lock, rewrites the fields of a
version that fell behind before it makes it current (`catch_up`). A relabel works under the
same lock and on the version current at that moment, so whichever runs last writes the
record's newest fields (last write wins, field by field: the record holds them).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.db import transaction
from shared.log import bind, get_logger
from shared.pipeline import indexing, wiring
from shared.pipeline.steps.runner import Outcome
from shared.settings import Settings, get_settings
from shared.states import Status

log = get_logger(__name__)


def relabel_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    handover_from: str | None = None,
) -> Outcome:
    """Each metadata version in its own transaction, holding its document's lock while the
    index is written (a registration or finalize of the document waits that long): `received
    -> indexed`, or nothing when it is no longer waiting (done by an earlier delivery,
    superseded by a removal). One version's error stays its own (`outcome.retry`)."""
    settings = settings or get_settings()
    embedder = wiring.embedder(settings)
    outcome = Outcome()
    for version_id in version_ids:
        try:
            with transaction() as session:
                found = repo.lock_for_relabel(session, version_id)
                if found is None:
                    outcome.stopped.append(version_id)
                    continue
                version, document = found
                current, points = repo.current_points_of(session, document)
                if current is not None and points:
                    collection = wiring.collection_for(session, settings, embedder)
                    fields = indexing.document_fields(document, current)
                    wiring.index_for(settings, embedder, collection).set_fields(points, fields)
                repo.transition(
                    session,
                    version_id,
                    Status.RECEIVED,
                    Status.INDEXED,
                    actor=owner,
                    detail=f"fields written on {len(points)} points, nothing embedded",
                )
            outcome.moved([version_id])
            with bind(version_id=str(version_id), document_id=str(version.document_id)):
                log.info("metadata updated", points=len(points), tokens_spent=0)
        except Exception as exc:  # the index could not be reached: tried again
            outcome.retry.append(version_id)
            outcome.error = exc
    return outcome


def catch_up(session: Session, settings: Settings, version_ids: Sequence[uuid.UUID]) -> None:
    """Before finalize makes these content versions current (their documents locked): the
    ones whose document's fields changed after their upsert get the newest fields written
    on their points, and the revision they now carry noted."""
    behind = repo.fields_behind(session, version_ids)
    if not behind:
        return
    versions = repo.versions_by_id(session, behind, with_documents=True)
    points = repo.point_ids_by_version(session, behind)
    embedder = wiring.embedder(settings)
    index = wiring.index_for(settings, embedder, wiring.collection_for(session, settings, embedder))
    for version in versions:
        index.set_fields(points[version.id], indexing.document_fields(version.document, version))
    repo.record_fields_revision(session, versions)
    log.info("newer fields written before finalize", versions=[str(v) for v in behind])
