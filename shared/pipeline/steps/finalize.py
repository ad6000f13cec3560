"""The finalize step: make each version current and delete its document's points no current
chunk owns."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from shared import repository as repo
from shared.db import transaction
from shared.log import bind, get_logger
from shared.pipeline import wiring
from shared.pipeline.steps.relabel import catch_up
from shared.pipeline.steps.runner import Holding, Outcome, lease_for, log_done
from shared.settings import Settings, get_settings
from shared.states import Status

log = get_logger(__name__)


def finalize_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    handover_from: str | None = None,
) -> Outcome:
    """A version whose document has another version still held by a running task waits
    (busy). One with no stale points (a new document, or an edit that kept every point) is
    made current in the claim's own transaction; the others after their stale points are gone
    from Qdrant, in a second one (a crash in between leaves them to a retry, points still
    named: every point ever written has its chunk row until a finalize like this one).
    Either way, under the document lock, a version whose document's fields changed after its
    upsert gets the newest ones written on its points first (`relabel.catch_up`)."""
    settings = settings or get_settings()
    with transaction() as session:
        repo.lock_documents_of(session, version_ids)  # documents before versions: LOCK_ORDER
        claim = repo.claim(
            session,
            Status.UPSERTING,
            owner,
            lease_for(settings),
            version_ids,
            handover_from=handover_from,
        )
        outcome = Outcome(stopped=sorted(claim.gone | claim.past), busy=sorted(claim.held))
        waiting = repo.held_elsewhere(session, claim.claimed)
        repo.release(session, owner, list(waiting))
        outcome.busy += sorted(waiting)
        ours = {v: d for v, d in claim.claimed.items() if v not in waiting}
        stale_of = repo.stale_points_of(session, ours)
        catch_up(session, settings, [v for v in ours if not stale_of[v]])
        made = repo.make_current(session, owner, [v for v in ours if not stale_of[v]])
        later = {v: d for v, d in ours.items() if stale_of[v]}
        stale = set().union(*(stale_of[v] for v in later))
        embedder = wiring.embedder(settings)
        collection = wiring.collection_for(session, settings, embedder) if later else ""
        repo.release(session, owner, [v for v in ours if v not in later])
    if later:
        with Holding(owner, settings, later, outcome) as held:
            wiring.index_for(settings, embedder, collection).delete(stale)
            with held.finishing() as session:
                repo.lock_documents_of(session, list(later))
                catch_up(session, settings, list(later))
                made += repo.make_current(session, owner, list(later))
                held.close(session)
    done = [row.id for row in made]
    log_done(Status.INDEXED, claim.claimed, done)
    for version in made:
        with bind(version_id=str(version.id), document_id=str(version.document_id)):
            log.info(
                "ingest finished",
                status=str(Status.INDEXED),
                chunk_count=version.chunk_count,
                chunks_embedded=version.chunks_embedded,
                tokens_spent=version.tokens_spent,
            )
    outcome.moved(done)
    outcome.stopped += [v for v in ours if v not in done]
    return outcome
