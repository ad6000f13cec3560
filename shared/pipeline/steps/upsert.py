"""The upsert step: write a batch's points to Qdrant in one go (deterministic ids: a re-run
overwrites), keeping the leases for finalize."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence

from shared import repository as repo
from shared.db import transaction
from shared.models import Chunk
from shared.pipeline import indexing, wiring
from shared.pipeline.steps.runner import Holding, Outcome, lease_for, log_done
from shared.settings import Settings, get_settings
from shared.states import Status


def upsert_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    handover_from: str | None = None,
) -> Outcome:
    """The versions' points into the index; every version goes on to finalize under this
    owner's lease (upserting is one state: finalize moves it)."""
    settings = settings or get_settings()
    embedder = wiring.embedder(settings)
    with transaction() as session:
        claim = repo.claim(
            session,
            Status.UPSERTING,
            owner,
            lease_for(settings),
            version_ids,
            handover_from=handover_from,
        )
        outcome = Outcome(go_on=sorted(claim.past), busy=sorted(claim.held))
        outcome.stopped = sorted(claim.gone)
        if not claim.claimed:
            return outcome
        collection = wiring.collection_for(session, settings, embedder)
        versions = repo.versions_by_id(session, list(claim.claimed), with_documents=True)
        by_version: dict[uuid.UUID, list[Chunk]] = defaultdict(list)
        for row in repo.chunks_with_vectors_of(session, list(claim.claimed)):
            by_version[row.version_id].append(row)
        hidden = repo.hidden_points_of(session, [v.document_id for v in versions])
        points = []
        for version in versions:
            points += indexing.points_for(version.document, version, by_version[version.id], hidden)
        repo.record_fields_revision(session, versions)  # the fields these points carry
    with Holding(owner, settings, claim.claimed, outcome) as held:
        wiring.index_for(settings, embedder, collection).upsert(
            points, batch_size=settings.qdrant_upsert_batch_size
        )
        handed_on = held.hand_on()
    log_done(Status.UPSERTING, claim.claimed, handed_on)
    outcome.handover = owner  # finalize takes the leases over
    outcome.moved(handed_on)
    return outcome
