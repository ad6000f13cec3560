"""The embed, upsert and finalize stages over a batch of versions.

A page gives a few chunks; the embeddings API takes 2048 inputs a request. So the embed stage
takes, besides the versions it was sent for, the other versions waiting in `embedding` (each
with its own lease, so no two tasks hold one version), fills full requests with their inputs
and sends several at once (`shared.pipeline.embed.coalesce`). Upsert and finalize then go on
with the same batch. Each version still moves through its own states with its own event and
fails on its own; the batch only shares requests and round trips.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.db import transaction
from shared.errors import PermanentError
from shared.log import bind, get_logger
from shared.models import Chunk
from shared.pipeline import indexing
from shared.pipeline.embed.coalesce import Answer, Limits, Pending, embed_pending
from shared.pipeline.failures import fail_version
from shared.repository import finalize_batches
from shared.settings import Settings, get_settings
from shared.states import Status
from shared.tokens import count_tokens

log = get_logger(__name__)


@dataclass
class BatchOutcome:
    """Where a batch's versions go next: on to the next stage, again later, or nowhere."""

    go_on: list[uuid.UUID] = field(default_factory=list)
    busy: list[uuid.UUID] = field(default_factory=list)
    stopped: list[uuid.UUID] = field(default_factory=list)
    handover: str | None = None  # the task whose lease the next stage takes over
    ocr: list[uuid.UUID] = field(default_factory=list)  # scanned PDFs, for the `ocr` queue
    retry: list[uuid.UUID] = field(default_factory=list)  # met `error`: tried again on their own
    error: Exception | None = None

    def __str__(self) -> str:
        """The task's result in Flower: it names the versions it moved on (searchable there)."""
        done = ", ".join(str(v) for v in self.go_on)
        return f"done {len(self.go_on)}: {done}; busy {len(self.busy)}, stopped {len(self.stopped)}"


def lease_for(settings: Settings) -> timedelta:
    """How long a stage's claim holds its versions (`LEASE_SECONDS`)."""
    return timedelta(seconds=settings.lease_seconds)


def limits_for(settings: Settings) -> Limits:
    return Limits(
        max_inputs=settings.embedding_batch_size,
        max_tokens=settings.embedding_request_tokens,
        max_input_tokens=settings.embedding_max_input_tokens,
        in_flight=settings.embedding_concurrent_requests,
    )


def log_done(
    stage: Status, documents: dict[uuid.UUID, uuid.UUID], ids: Sequence[uuid.UUID]
) -> None:
    for version_id in ids:
        with bind(version_id=str(version_id), document_id=str(documents.get(version_id))):
            log.info("stage done", state=str(stage))


# --- embed ----------------------------------------------------------------------------------


def embed_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    take_waiting: bool = True,
    handover_from: str | None = None,
) -> BatchOutcome:
    """Vectors for the chunks of the versions (and, with `take_waiting`, of the others waiting
    in `embedding`): reused from Qdrant when the point exists, else from the API in full
    requests. Each answered request is stored at once, so a retry never pays twice."""
    settings = settings or get_settings()
    embedder = indexing.embedder(settings)
    waiting = settings.embedding_batch_size if take_waiting else 0
    with transaction() as session:
        claim = repo.claim_batch(
            session,
            Status.EMBEDDING,
            owner,
            lease_for(settings),
            version_ids,
            take_waiting_chunks=waiting,
            handover_from=handover_from,
        )
        outcome = BatchOutcome(go_on=sorted(claim.past), stopped=sorted(claim.held | claim.gone))
        if not claim.claimed:
            return outcome
        collection = indexing.collection_for(session, settings, embedder)
        rows = repo.chunks_without_vectors_of(session, list(claim.claimed))
        chunks = [
            (
                row.version_id,
                indexing.PendingChunk(
                    row.id, row.point_id, list(row.headings), row.text, row.sections or []
                ),
                row.token_count,
            )
            for row in rows
        ]
    held = list(claim.claimed)
    last: list[Answer] = []  # the last answer is stored with the finish: one commit less
    try:
        failed = _embed(settings, embedder, collection, owner, held, chunks, last)
    except BaseException:
        with transaction() as session:
            _store(session, last)
            repo.release_batch(session, owner, held)
        raise
    for version_id, error in failed.items():
        fail_version(version_id, code=error.code, message=error.message, actor=owner)
    with transaction() as session:
        _store(session, last)
        moved = repo.finish_batch(
            session, Status.EMBEDDING, owner, [v for v in held if v not in failed], keep_lease=True
        )
        repo.release_batch(session, owner, [v for v in held if v not in moved])
    log_done(Status.EMBEDDING, claim.claimed, moved)
    outcome.handover = owner
    outcome.go_on += moved
    outcome.stopped += [v for v in held if v not in moved]
    return outcome


def _embed(
    settings: Settings,
    embedder: indexing.Embedder,
    collection: str,
    owner: str,
    held: list[uuid.UUID],
    chunks: list[tuple[uuid.UUID, indexing.PendingChunk, int]],
    last: list[Answer],
) -> dict[uuid.UUID, PermanentError]:
    index = indexing.index_for(settings, embedder, collection)
    reused = indexing.reuse_vectors(index, [chunk for _, chunk, _ in chunks])
    if reused:
        with transaction() as session:
            repo.store_vectors(session, reused)
    heading_lines: dict[str, int] = {}  # tokens the heading line adds, by line
    pending = []
    for version_id, chunk, tokens in chunks:
        if chunk.chunk_id in reused:
            continue
        text = indexing.embedding_text(chunk)
        line = text[: len(text) - len(chunk.text)]  # the heading line and its newline, or ""
        if line not in heading_lines:
            heading_lines[line] = count_tokens(line) + 1 if line else 0
        estimate = (tokens or 0) + heading_lines[line]
        pending.append(Pending(chunk.chunk_id, version_id, text, estimate))

    def store(answer: Answer) -> None:
        """Store an answer at once; the final one is stored with the finish (a commit less)."""
        if answer.final:
            last.append(answer)
            return
        with transaction() as session:
            _store(session, [answer])
            repo.heartbeat_batch(session, owner, held, lease_for(settings))

    return embed_pending(embedder, pending, limits_for(settings), store)


def _store(session: Session, answers: list[Answer]) -> None:
    """Save answered vectors and what they cost (and forget them: stored once)."""
    while answers:
        answer = answers.pop()
        vectors = {cid: (indexing.to_bytes(v), True) for cid, v in answer.vectors.items()}
        requests = {version_id: answer.requests for version_id in answer.versions}
        repo.store_vectors(session, vectors)
        repo.add_usages(session, answer.tokens, requests, answer.chunks)


# --- upsert ---------------------------------------------------------------------------------


def upsert_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    handover_from: str | None = None,
) -> BatchOutcome:
    """Write the versions' points to Qdrant in one go (deterministic ids: a re-run overwrites)
    and keep the leases for finalize."""
    settings = settings or get_settings()
    embedder = indexing.embedder(settings)
    with transaction() as session:
        claim = repo.claim_batch(
            session,
            Status.UPSERTING,
            owner,
            lease_for(settings),
            version_ids,
            handover_from=handover_from,
        )
        outcome = BatchOutcome(go_on=sorted(claim.past), stopped=sorted(claim.gone))
        outcome.busy = sorted(claim.held)
        if not claim.claimed:
            return outcome
        collection = indexing.collection_for(session, settings, embedder)
        versions = repo.versions_by_id(session, list(claim.claimed), with_documents=True)
        rows = repo.chunks_with_vectors_of(session, list(claim.claimed))
        by_version: dict[uuid.UUID, list[Chunk]] = defaultdict(list)
        for row in rows:
            by_version[row.version_id].append(row)
        points = []
        for version in versions:
            points += indexing.points_for(version.document, version, by_version[version.id])
    held = list(claim.claimed)
    try:
        indexing.index_for(settings, embedder, collection).upsert(
            points, batch_size=settings.qdrant_upsert_batch_size
        )
    except BaseException:
        with transaction() as session:
            repo.release_batch(session, owner, held)
        raise
    log_done(Status.UPSERTING, claim.claimed, held)
    outcome.handover = owner  # finalize takes the leases over
    outcome.go_on += held
    return outcome


# --- finalize -------------------------------------------------------------------------------


def finalize_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    handover_from: str | None = None,
) -> BatchOutcome:
    """Make each version current and delete its document's points no current chunk owns. A
    version whose document has another version still held by a running task waits (busy).

    A version with no stale points (a new document, or an edit that kept every point) is made
    current in the claim's own transaction; the others after their stale points are gone from
    Qdrant, in a second one (a crash in between leaves them to a retry, points still named)."""
    settings = settings or get_settings()
    embedder = indexing.embedder(settings)
    with transaction() as session:
        repo.lock_documents_of(session, version_ids)  # documents before versions: LOCK_ORDER
        claim = repo.claim_batch(
            session,
            Status.UPSERTING,
            owner,
            lease_for(settings),
            version_ids,
            handover_from=handover_from,
        )
        outcome = BatchOutcome(stopped=sorted(claim.gone | claim.past))
        outcome.busy = sorted(claim.held)
        waiting = finalize_batches.waiting_on_other_versions(session, claim.claimed)
        repo.release_batch(session, owner, list(waiting))
        outcome.busy += sorted(waiting)
        held = {v: d for v, d in claim.claimed.items() if v not in waiting}
        # Every point ever written has its chunk row until a finalize like this one: the rows
        # of the document's other versions name exactly the points that may be stale.
        stale_of = finalize_batches.stale_points_of(session, held)
        made = finalize_batches.make_current_many(
            session, owner, [v for v in held if not stale_of[v]]
        )
        later = [v for v in held if stale_of[v]]
        stale = set().union(*(stale_of[v] for v in later))
        collection = indexing.collection_for(session, settings, embedder) if later else ""
        repo.release_batch(session, owner, [v for v in held if v not in later])
    if later:
        try:
            indexing.index_for(settings, embedder, collection).delete(stale)
        except BaseException:
            with transaction() as session:
                repo.release_batch(session, owner, later)
            raise
        with transaction() as session:
            repo.lock_documents_of(session, later)
            made += finalize_batches.make_current_many(session, owner, later)
            repo.release_batch(session, owner, later)
    done = {v.id for v in made}
    log_done(Status.INDEXED, claim.claimed, [v.id for v in made])
    for version in made:
        with bind(version_id=str(version.id), document_id=str(version.document_id)):
            log.info(
                "ingest finished",
                status=str(Status.INDEXED),
                chunk_count=version.chunk_count,
                chunks_embedded=version.chunks_embedded,
                tokens_spent=version.tokens_spent,
            )
    outcome.go_on += [v.id for v in made]
    outcome.stopped += [v for v in held if v not in done]
    return outcome
