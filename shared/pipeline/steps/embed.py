"""The embed step: vectors for the chunks of a batch of versions, in full API requests.

A page gives a few chunks; the embeddings API takes 2048 inputs a request. So the step takes,
besides the versions it was sent for, others waiting in `embedding` (`take_waiting`), fills
full requests with their inputs and sends several at once (`shared.pipeline.embed.coalesce`).
Each answered request is stored at once, so a retry never pays twice.

An input embedded before, in any document, is not sent again: its vector comes from the
vector cache (`repository.vector_cache`, keyed by `indexing.cache_key`), so a copied page
costs no tokens and its version reports 0 `tokens_spent` and 0 `chunks_embedded`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.db import transaction
from shared.errors import PermanentError
from shared.pipeline import indexing, wiring
from shared.pipeline.embed import Embedder
from shared.pipeline.embed.coalesce import Answer, Limits, Pending, embed_pending
from shared.pipeline.failures import fail_version
from shared.pipeline.steps.runner import Holding, Outcome, lease_for, log_done
from shared.pipeline.vector_cache import VectorCache
from shared.settings import Settings, get_settings
from shared.states import Status
from shared.tokens import count_tokens

#: A chunk to embed: its version, what to embed, and its token count (for the request sizes).
Waiting = tuple[uuid.UUID, indexing.PendingChunk, int]


def limits_for(settings: Settings) -> Limits:
    return Limits(
        max_inputs=settings.embedding_batch_size,
        max_tokens=settings.embedding_request_tokens,
        max_input_tokens=settings.embedding_max_input_tokens,
        in_flight=settings.embedding_concurrent_requests,
    )


def embed_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    take_waiting: bool = True,
    handover_from: str | None = None,
) -> Outcome:
    """Vectors for the chunks of the versions (and, with `take_waiting`, of the others waiting
    in `embedding`): from the vector cache when the input was embedded before, else reused
    from Qdrant when the point exists (written before the cache), else from the API. Those
    embedded go on to upsert under this owner's leases."""
    settings = settings or get_settings()
    embedder = wiring.embedder(settings)
    with transaction() as session:
        claim = repo.claim(
            session,
            Status.EMBEDDING,
            owner,
            lease_for(settings),
            version_ids,
            take_waiting_chunks=settings.embedding_batch_size if take_waiting else 0,
            handover_from=handover_from,
        )
        outcome = Outcome(go_on=sorted(claim.past), stopped=sorted(claim.held | claim.gone))
        if not claim.claimed:
            return outcome
        collection = wiring.collection_for(session, settings, embedder)
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
        cache = VectorCache(embedder)
        cache.add(chunk for _, chunk, _ in chunks)
        cached = cache.lookup(session, cache.keys)  # in the claim's transaction: no commit more
    last: list[Answer] = []  # the last answer is stored with the finish: one commit less
    with Holding(
        owner, settings, claim.claimed, outcome, before_release=lambda s: _store(s, last, cache)
    ) as held:
        failed = _embed(settings, embedder, collection, held, chunks, last, cache, cached)
        for version_id, error in failed.items():
            fail_version(version_id, code=error.code, message=error.message, actor=owner)
            held.drop(version_id)
        with held.finishing() as session:
            _store(session, last, cache)
            moved = repo.finish(session, Status.EMBEDDING, owner, held.held, keep_lease=True)
            held.close(session, handed_on=moved)
    log_done(Status.EMBEDDING, claim.claimed, moved)
    outcome.handover = owner
    outcome.moved(moved)
    outcome.stopped += [v for v in claim.claimed if v not in moved and v not in failed]
    return outcome


def _embed(
    settings: Settings,
    embedder: Embedder,
    collection: str,
    held: Holding,
    chunks: list[Waiting],
    last: list[Answer],
    cache: VectorCache,
    cached: dict[int, tuple[bytes, bool]],
) -> dict[uuid.UUID, PermanentError]:
    """`cached`: the vectors the cache held for these chunks; the others' points may exist
    with this model already (an edit that kept them), else they are sent to the API."""
    index = wiring.index_for(settings, embedder, collection)
    reused = indexing.reuse_vectors(index, [c for _, c, _ in chunks if c.chunk_id not in cached])
    reused |= cached
    if reused:
        with transaction() as session:
            repo.store_vectors(session, reused)
    texts = cache.texts
    heading_lines: dict[str, int] = {}  # tokens the heading line adds, by line
    pending = []
    for version_id, chunk, tokens in chunks:
        if chunk.chunk_id in reused:
            continue
        text = texts[chunk.chunk_id]
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
            _store(session, [answer], cache)
            repo.heartbeat(session, held.owner, held.held, lease_for(settings))

    return embed_pending(embedder, pending, limits_for(settings), store)


def _store(session: Session, answers: list[Answer], cache: VectorCache) -> None:
    """Save answered vectors, in the chunks and the vector cache, and what they cost (and
    forget them: stored once)."""
    while answers:
        answer = answers.pop()
        vectors = {cid: (indexing.to_bytes(v), True) for cid, v in answer.vectors.items()}
        requests = {version_id: answer.requests for version_id in answer.versions}
        repo.store_vectors(session, vectors)
        cache.remember(session, vectors)
        repo.add_usages(session, answer.tokens, requests, answer.chunks)
