"""Fill embedding requests with the inputs of many versions, several requests in flight.

One version's page gives a few chunks; a request takes up to 2048 inputs and 300k tokens. The
caller hands in the pending inputs of every version it holds; they are packed greedily into
full requests (identical texts sent once), sent with up to `in_flight` requests at a time (the
shared rate limiter inside the embedder keeps the fleet under its budget), and each answered
request is handed to `on_answer` at once, in the caller's thread, so its vectors are stored
before the next answer: a retry never sends again what was already stored.

A permanent error concerns its own version only: inputs the API would refuse are found before
sending, and a request the API refuses is sent again split by version, so only the version
whose input is refused fails. A transient error (the API down after its retries) is raised
after the other requests have been answered and stored.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from shared.errors import PermanentError, TransientError
from shared.pipeline.embed.base import Embedder, EmbedResult, check_inputs, pack_batches

QUOTA_CODE = "embedding_quota"


@dataclass(frozen=True)
class Pending:
    """One chunk waiting for its vector: whose it is, what is sent, about how many tokens."""

    chunk_id: int
    version_id: uuid.UUID
    text: str
    tokens: int


@dataclass(frozen=True)
class Answer:
    """One answered request: its chunks with their vectors, and what the request cost."""

    vectors: dict[int, list[float]]  # chunk id -> vector
    tokens: dict[uuid.UUID, int]  # billed tokens, attributed to the versions by their inputs
    chunks: dict[uuid.UUID, int]  # chunks embedded per version
    requests: int
    versions: frozenset[uuid.UUID]
    final: bool = False  # no other request is waiting or in flight: nothing else to store


@dataclass(frozen=True)
class Limits:
    max_inputs: int = 2048
    max_tokens: int = 300_000
    max_input_tokens: int = 8192
    in_flight: int = 4


def embed_pending(
    embedder: Embedder,
    pending: Sequence[Pending],
    limits: Limits,
    on_answer: Callable[[Answer], None],
) -> dict[uuid.UUID, PermanentError]:
    """Embed every input in full requests; the versions that failed permanently, with why."""
    failed: dict[uuid.UUID, PermanentError] = {}
    for item in pending:
        if item.version_id in failed:
            continue
        try:
            check_inputs([item.text], [item.tokens], limits.max_input_tokens)
        except PermanentError as exc:
            failed[item.version_id] = exc
    todo = [item for item in pending if item.version_id not in failed]
    requests = _pack(todo, limits)
    transient: TransientError | None = None
    with ThreadPoolExecutor(max_workers=max(1, limits.in_flight)) as pool:
        running: dict[Future[EmbedResult], list[list[Pending]]] = {}
        queue = list(requests)
        while queue or running:
            while queue and len(running) < limits.in_flight:
                group = queue.pop(0)
                texts = list(dict.fromkeys(item.text for item in group))
                running[pool.submit(embedder.embed, texts)] = [group]
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                group = running.pop(future)[0]
                try:
                    result = future.result()
                except PermanentError as exc:
                    _refused(embedder, group, exc, failed, on_answer)
                except TransientError as exc:
                    transient = transient or exc
                else:
                    answer = _answer(group, result)
                    if not queue and not running:
                        answer = dataclasses.replace(answer, final=True)
                    on_answer(answer)
    if transient is not None:
        raise transient
    return failed


def _pack(items: Sequence[Pending], limits: Limits) -> list[list[Pending]]:
    """Requests in input order, each full on inputs or (estimated) tokens; a text repeated
    across versions travels once."""
    first: dict[str, int] = {}
    unique: list[Pending] = []
    for item in items:
        if item.text not in first:
            first[item.text] = len(unique)
            unique.append(item)
    # The estimate leaves a margin; the embedder counts exactly and splits if it must.
    budget = max(1, int(limits.max_tokens * 0.95))
    counts = [min(item.tokens, budget) for item in unique]
    groups = pack_batches(counts, limits.max_inputs, budget)
    slot_of = {i: n for n, batch in enumerate(groups) for i in batch}
    requests: list[list[Pending]] = [[] for _ in groups]
    for item in items:
        requests[slot_of[first[item.text]]].append(item)
    return requests


def _answer(group: Sequence[Pending], result: EmbedResult) -> Answer:
    tokens_of: dict[str, int] = {}
    for item in group:
        tokens_of.setdefault(item.text, item.tokens)
    vector_of = dict(zip(tokens_of, result.vectors, strict=True))
    estimate = sum(tokens_of.values()) or 1
    tokens: dict[uuid.UUID, int] = {}
    chunks: dict[uuid.UUID, int] = {}
    seen: set[str] = set()
    for item in group:
        chunks[item.version_id] = chunks.get(item.version_id, 0) + 1
        if item.text in seen:
            continue
        seen.add(item.text)
        share = result.tokens * item.tokens // estimate
        tokens[item.version_id] = tokens.get(item.version_id, 0) + share
    if tokens:  # what the integer shares left over, so the versions' sum is what was billed
        first = next(iter(tokens))
        tokens[first] += result.tokens - sum(tokens.values())
    return Answer(
        vectors={item.chunk_id: vector_of[item.text] for item in group},
        tokens=tokens,
        chunks=chunks,
        requests=result.requests,
        versions=frozenset(chunks),
    )


def _refused(
    embedder: Embedder,
    group: Sequence[Pending],
    error: PermanentError,
    failed: dict[uuid.UUID, PermanentError],
    on_answer: Callable[[Answer], None],
) -> None:
    """A refused request: one version alone fails; several are sent again one by one, so only
    the version the API refuses fails. No credit left fails them all (it concerns everyone)."""
    versions = list(dict.fromkeys(item.version_id for item in group))
    if len(versions) == 1 or error.code == QUOTA_CODE:
        for version_id in versions:
            failed.setdefault(version_id, error)
        return
    for version_id in versions:
        own = [item for item in group if item.version_id == version_id]
        try:
            result = embedder.embed(list(dict.fromkeys(item.text for item in own)))
        except PermanentError as exc:
            failed.setdefault(version_id, exc)
        else:
            on_answer(_answer(own, result))
