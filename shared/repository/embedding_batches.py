"""A re-index through the Batch API: its job row, its request files and batches, and which
chunks each request line embeds (`shared.pipeline.batch_reindex`)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session, undefer

from shared.models import (
    Chunk,
    Document,
    EmbeddingBatch,
    EmbeddingBatchRequest,
    ReindexJob,
    utcnow,
)

RUNNING = "running"
SWITCHED = "switched"  # then `done`, once a process of the new model has caught up


def current_chunks(session: Session) -> list[Chunk]:
    """Every chunk of every current version (what a re-index embeds)."""
    return list(
        session.scalars(
            sa.select(Chunk)
            .join(Document, Document.current_version_id == Chunk.version_id)
            .where(Document.deleted_at.is_(None))
            .order_by(Chunk.version_id, Chunk.index)
        )
    )


def current_chunks_by_id(session: Session, chunk_ids: Sequence[int]) -> list[Chunk]:
    """These chunks, with their lexical vectors, those of a current version only (a chunk of
    a version replaced meanwhile is no longer wanted)."""
    if not chunk_ids:
        return []
    return list(
        session.scalars(
            sa.select(Chunk)
            .options(undefer(Chunk.sparse))
            .join(Document, Document.current_version_id == Chunk.version_id)
            .where(Document.deleted_at.is_(None), Chunk.id.in_(list(chunk_ids)))
            .order_by(Chunk.version_id, Chunk.index)
        )
    )


def running_job(session: Session) -> ReindexJob | None:
    return session.scalar(sa.select(ReindexJob).where(ReindexJob.state == RUNNING))


def switched_job(session: Session, model: str, dimensions: int) -> ReindexJob | None:
    """The job of this model that switched the fleet and has not caught up yet."""
    return session.scalar(
        sa.select(ReindexJob).where(
            ReindexJob.state == SWITCHED,
            ReindexJob.model == model,
            ReindexJob.dimensions == dimensions,
        )
    )


def latest_job(session: Session) -> ReindexJob | None:
    return session.scalar(sa.select(ReindexJob).order_by(ReindexJob.started_at.desc()).limit(1))


def add_job(session: Session, **values: Any) -> ReindexJob:
    job = ReindexJob(**values)
    session.add(job)
    session.flush()
    return job


def add_batch(
    session: Session,
    job_id: uuid.UUID,
    number: int,
    requests: Sequence[tuple[str, list[list[int]], int]],
) -> int:
    """A request file to upload (state `pending`) and its lines: (custom_id, the chunk ids of
    each input, tokens). Returns the batch row's id."""
    batch = EmbeddingBatch(
        job_id=job_id,
        number=number,
        state="pending",
        inputs=sum(len(groups) for _, groups, _ in requests),
        requests=len(requests),
        tokens=sum(tokens for _, _, tokens in requests),
    )
    session.add(batch)
    session.flush()
    session.execute(
        sa.insert(EmbeddingBatchRequest),
        [
            {
                "job_id": job_id,
                "custom_id": custom_id,
                "batch": batch.id,
                "chunk_ids": groups,
                "tokens": tokens,
                "done": False,
            }
            for custom_id, groups, tokens in requests
        ],
    )
    return batch.id


def batches_of(session: Session, job_id: uuid.UUID) -> list[EmbeddingBatch]:
    return list(
        session.scalars(
            sa.select(EmbeddingBatch)
            .where(EmbeddingBatch.job_id == job_id)
            .order_by(EmbeddingBatch.number)
        )
    )


def update_batch(session: Session, row: int, **values: Any) -> None:
    session.execute(
        sa.update(EmbeddingBatch)
        .where(EmbeddingBatch.id == row)
        .values(updated_at=utcnow(), **values)
    )


def update_job(session: Session, job_id: uuid.UUID, **values: Any) -> None:
    session.execute(
        sa.update(ReindexJob).where(ReindexJob.id == job_id).values(updated_at=utcnow(), **values)
    )


def add_job_tokens(session: Session, job_id: uuid.UUID, *, batch: int = 0, sync: int = 0) -> None:
    session.execute(
        sa.update(ReindexJob)
        .where(ReindexJob.id == job_id)
        .values(
            batch_tokens=ReindexJob.batch_tokens + batch,
            sync_tokens=ReindexJob.sync_tokens + sync,
            updated_at=utcnow(),
        )
    )


def requests_of_batch(session: Session, batch_id: int) -> list[EmbeddingBatchRequest]:
    return list(
        session.scalars(
            sa.select(EmbeddingBatchRequest)
            .where(EmbeddingBatchRequest.batch == batch_id)
            .order_by(EmbeddingBatchRequest.custom_id)
        )
    )


def open_requests(
    session: Session, job_id: uuid.UUID, custom_ids: Sequence[str]
) -> dict[str, list[list[int]]]:
    """The chunk ids of each input of these lines, those not applied yet."""
    rows = session.execute(
        sa.select(EmbeddingBatchRequest.custom_id, EmbeddingBatchRequest.chunk_ids).where(
            EmbeddingBatchRequest.job_id == job_id,
            EmbeddingBatchRequest.custom_id.in_(list(custom_ids)),
            EmbeddingBatchRequest.done.is_(False),
        )
    )
    return {custom_id: list(groups) for custom_id, groups in rows}


def mark_requests_done(session: Session, job_id: uuid.UUID, custom_ids: Sequence[str]) -> None:
    if custom_ids:
        session.execute(
            sa.update(EmbeddingBatchRequest)
            .where(
                EmbeddingBatchRequest.job_id == job_id,
                EmbeddingBatchRequest.custom_id.in_(list(custom_ids)),
            )
            .values(done=True)
        )


def claim_poll(session: Session, job_id: uuid.UUID, owner: str, until: datetime) -> bool:
    """Take the job for one poll unless another poll holds it (its claim not run out): exactly
    one caller wins. A killed poll's claim runs out at `poll_until`."""
    now = utcnow()
    result = session.execute(
        sa.update(ReindexJob)
        .where(
            ReindexJob.id == job_id,
            ReindexJob.state.in_([RUNNING, SWITCHED]),
            sa.or_(
                ReindexJob.poll_until.is_(None),
                ReindexJob.poll_until < now,
                ReindexJob.poll_owner == owner,
            ),
        )
        .values(poll_owner=owner, poll_until=until)
    )
    return bool(getattr(result, "rowcount", 0) == 1)


def release_poll(session: Session, job_id: uuid.UUID, owner: str) -> None:
    session.execute(
        sa.update(ReindexJob)
        .where(ReindexJob.id == job_id, ReindexJob.poll_owner == owner)
        .values(poll_owner=None, poll_until=None)
    )
