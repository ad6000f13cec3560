"""The document-version state machine: the states and every allowed move, in one place."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Where a document version stands. Work stages run in the order listed first."""

    RECEIVED = "received"
    CONVERTING = "converting"
    CHUNKING = "chunking"
    EMBEDDING = "embedding"
    UPSERTING = "upserting"
    INDEXED = "indexed"
    FAILED = "failed"
    UNCHANGED = "unchanged"
    SUPERSEDED = "superseded"


#: The pipeline's stages, in order. A version in one of these has work to do (or under way).
WORK_STAGES: tuple[Status, ...] = (
    Status.CONVERTING,
    Status.CHUNKING,
    Status.EMBEDDING,
    Status.UPSERTING,
)

#: States a version can still leave by itself: the pipeline has not finished with it.
IN_FLIGHT: frozenset[Status] = frozenset({Status.RECEIVED, *WORK_STAGES})

#: States nothing moves out of, except a re-ingest of a failed version.
TERMINAL: frozenset[Status] = frozenset(
    {Status.INDEXED, Status.FAILED, Status.UNCHANGED, Status.SUPERSEDED}
)

ALLOWED: dict[Status, frozenset[Status]] = {
    # A metadata version (fields only, no bytes) goes straight to indexed: its one step
    # rewrites the current points' payloads (`shared.pipeline.steps.relabel`).
    Status.RECEIVED: frozenset(
        {Status.CONVERTING, Status.INDEXED, Status.FAILED, Status.SUPERSEDED}
    ),
    # A page sent by URL is compared with the indexed version once the worker has fetched it.
    Status.CONVERTING: frozenset(
        {Status.CHUNKING, Status.FAILED, Status.SUPERSEDED, Status.UNCHANGED}
    ),
    Status.CHUNKING: frozenset({Status.EMBEDDING, Status.FAILED, Status.SUPERSEDED}),
    Status.EMBEDDING: frozenset({Status.UPSERTING, Status.FAILED, Status.SUPERSEDED}),
    Status.UPSERTING: frozenset({Status.INDEXED, Status.FAILED, Status.SUPERSEDED}),
    # An indexed version leaves the index when a newer one replaces it or the page is removed.
    Status.INDEXED: frozenset({Status.SUPERSEDED}),
    # A failed version can be sent through the pipeline again (re-ingest, operator retry).
    Status.FAILED: frozenset({Status.RECEIVED, Status.SUPERSEDED}),
    Status.UNCHANGED: frozenset(),
    Status.SUPERSEDED: frozenset(),
}


def can_move(source: Status, target: Status) -> bool:
    """Whether `source -> target` is a transition the state machine allows."""
    return target in ALLOWED[source]


def next_stage(stage: Status) -> Status:
    """The state a version enters when `stage` finishes (upserting ends in indexed)."""
    if stage is Status.RECEIVED:
        return Status.CONVERTING
    position = WORK_STAGES.index(stage)
    return WORK_STAGES[position + 1] if position + 1 < len(WORK_STAGES) else Status.INDEXED


def stage_order(status: Status) -> int:
    """Position along the pipeline, used to tell whether a version is already past a stage."""
    order = (Status.RECEIVED, *WORK_STAGES, Status.INDEXED)
    return order.index(status) if status in order else len(order)
