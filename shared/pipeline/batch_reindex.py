"""`ingest reindex --batch`: re-embed every current chunk through OpenAI's Batch API (half the
price of the embeddings API, a rate-limit pool of its own, done within 24 hours).

`start` writes the inputs as request files, uploads them, creates the batches and records
every file and batch id in Postgres (`reindex_jobs`, `embedding_batches`); from then on a
periodic poll (`shared.pipeline.batch_poll`: Celery beat's `ingest.reindex_poll`, or `ingest
reindex --resume`) carries the job on from those rows, so a killed worker loses nothing.
`cancel` stops it: the old collection keeps serving. Costs: `plan` counts the tokens and
prices both routes before anything is sent (`--dry-run`); the job counts what was billed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from shared import repository as repo
from shared.adapters.index import VectorIndex, collection_name
from shared.db import transaction
from shared.models import utcnow
from shared.pipeline import indexing, wiring
from shared.pipeline.embed import Embedder, make_embedder
from shared.pipeline.embed.batch_files import Input, RequestFile, request_files
from shared.pipeline.vector_cache import VectorCache
from shared.settings import Settings, get_settings
from shared.tokens import encoding


@dataclass(frozen=True)
class Plan:
    """What a batch re-index sends, and what either route would cost."""

    chunks: int  # current chunks
    reused: int  # their vectors known already: not sent
    inputs: int  # distinct texts sent
    tokens: int
    files: list[RequestFile]
    prices: tuple[float, float]  # US dollars per 1M tokens: (embeddings API, Batch API)

    @property
    def requests(self) -> int:
        return sum(len(f.requests) for f in self.files)

    @property
    def sync_cost(self) -> float:
        return self.tokens * self.prices[0] / 1e6

    @property
    def batch_cost(self) -> float:
        return self.tokens * self.prices[1] / 1e6


@dataclass(frozen=True)
class BatchLine:
    number: int
    batch_id: str | None
    state: str
    inputs: int
    completed: int
    failed: int
    read: bool
    error: str | None


@dataclass(frozen=True)
class JobReport:
    """Where a batch re-index stands (`ingest reindex --resume`, `--cancel`, the task)."""

    id: uuid.UUID
    state: str  # running, switched (then done), cancelled, failed
    model: str
    previous: str
    collection: str
    inputs: int
    reused: int
    tokens_estimated: int
    batch_tokens: int
    sync_tokens: int
    prices: tuple[float, float]
    started_at: datetime
    finished_at: datetime | None
    error: str | None
    batches: list[BatchLine]
    verified: object | None = None  # the VerifyReport after the switch

    @property
    def cost(self) -> float:
        """What was billed, in US dollars: batch tokens at the batch price, the rest sync."""
        return (self.batch_tokens * self.prices[1] + self.sync_tokens * self.prices[0]) / 1e6

    @property
    def sync_cost_estimate(self) -> float:
        """What the same tokens would have cost through the embeddings API."""
        return (self.batch_tokens + self.sync_tokens) * self.prices[0] / 1e6


def job_settings(settings: Settings, model: str, dimensions: int) -> Settings:
    """The settings of the job's model: a worker that polls may still run the old one."""
    if (settings.embedding_model, settings.embedding_dimensions) == (model, dimensions):
        return settings
    return settings.model_copy(
        update={"embedding_model": model, "embedding_dimensions": dimensions}
    )


def job_embedder(settings: Settings, model: str, dimensions: int) -> Embedder:
    """The synchronous embedder of the job's model (the error lines, the rest, the late)."""
    own = job_settings(settings, model, dimensions)
    return wiring.embedder(settings) if own is settings else make_embedder(own)


def destination(settings: Settings, name: str, dimensions: int) -> VectorIndex:
    """The job's new collection, on the store of the process's index."""
    current = wiring.index_for(settings, wiring.embedder(settings))
    return current.sibling(name, dimensions)


def known_vectors(
    embedder: Embedder, index: VectorIndex | None, pending: list[indexing.PendingChunk]
) -> dict[int, tuple[bytes, bool]]:
    """The chunks whose vector for this model and input is known already, so not sent: the
    points already in the new collection (a job started again on the same collection), and
    the inputs the vector cache holds for this model (the finish takes them from there)."""
    known = indexing.reuse_vectors(index, pending) if index is not None else {}
    cache = VectorCache(embedder)
    cache.add(chunk for chunk in pending if chunk.chunk_id not in known)
    with transaction() as session:
        return known | cache.lookup(session, cache.keys)


def plan(settings: Settings, index: VectorIndex | None = None) -> Plan:
    """Every current chunk's embedding input, those known already left out, identical texts
    sent once, packed into requests and files within the API's limits."""
    with transaction() as session:
        rows = repo.current_chunks(session)
    pending = [
        indexing.PendingChunk(r.id, r.point_id, list(r.headings), r.text, r.sections or [])
        for r in rows
    ]
    known = known_vectors(wiring.embedder(settings), index, pending)
    by_text: dict[str, list[int]] = {}
    for chunk in pending:
        if chunk.chunk_id not in known:
            by_text.setdefault(indexing.embedding_text(chunk), []).append(chunk.chunk_id)
    texts = list(by_text)
    counts = [len(ids) for ids in encoding().encode_batch(texts, disallowed_special=())]
    inputs = [Input(t, by_text[t], n) for t, n in zip(texts, counts, strict=True)]
    model = settings.embedding_model
    files = request_files(
        inputs,
        model,
        settings.embedding_dimensions if model.startswith("text-embedding-3") else None,
        max_request_inputs=settings.embedding_batch_size,
        max_request_tokens=settings.embedding_max_request_tokens,
        max_file_inputs=settings.embedding_batch_file_inputs,
    )
    return Plan(
        len(pending), len(known), len(inputs), sum(counts), files, settings.embedding_prices
    )


def start(
    target: str | None = None, *, dry_run: bool = False, settings: Settings | None = None
) -> Plan | JobReport:
    """Plan (and with `dry_run`, only that); else create the new collection, record the job
    and its request files, upload them and create the batches."""
    settings = settings or get_settings()
    if settings.qdrant_collection:
        raise ValueError(
            "QDRANT_COLLECTION is set, so the fleet cannot be switched to a new collection. "
            "Unset it (the active collection is then kept in the database) and run again."
        )
    if not settings.use_openai:
        raise ValueError(
            "The Batch API is OpenAI's: set OPENAI_API_KEY (and EMBEDDING_PROVIDER=openai), "
            "or re-index without --batch."
        )
    with transaction() as session:
        running = repo.running_job(session)
    if running is not None:
        raise ValueError(
            f"A batch re-index into {running.collection} is running (started "
            f"{running.started_at:%Y-%m-%d %H:%M} UTC): `ingest reindex --resume` carries it "
            "on, `ingest reindex --cancel` stops it."
        )
    model, dimensions = settings.embedding_model, settings.embedding_dimensions
    source = wiring.index_for(settings, wiring.embedder(settings))
    name = target or f"{collection_name(model, dimensions)}_{utcnow():%Y%m%d%H%M%S}"
    if name == source.collection:
        raise ValueError(f"{name} is the collection in use; name a new one")
    if dry_run:
        return plan(settings)
    index = destination(settings, name, dimensions)
    index.ensure_collection()
    planned = plan(settings, index)
    with transaction() as session:
        job = repo.add_job(
            session,
            model=model,
            dimensions=dimensions,
            # The collection this model used; "-": none (a new model: the fleet still
            # searches the old model's, until it runs this one).
            previous=source.collection if source.exists() else "-",
            collection=name,
            state="running",
            inputs=planned.inputs,
            reused=planned.reused,
            tokens_estimated=planned.tokens,
        )
        job_id = job.id
        rows = [
            repo.add_batch(
                session,
                job_id,
                f.number,
                [(r.custom_id, [i.chunk_ids for i in r.inputs], r.tokens) for r in f.requests],
            )
            for f in planned.files
        ]
    from shared.pipeline.batch_poll import batch_client, submit

    client = batch_client(settings)
    for row, request_file in zip(rows, planned.files, strict=True):
        submit(client, job_id, row, request_file.number, request_file.content())
    report = status(settings)
    assert report is not None
    return report


def status(settings: Settings | None = None) -> JobReport | None:
    """The running job, else the latest one (None: never a batch re-index)."""
    settings = settings or get_settings()
    with transaction() as session:
        job = repo.running_job(session) or repo.latest_job(session)
        if job is None:
            return None
        batches = repo.batches_of(session, job.id)
    own = job_settings(settings, job.model, job.dimensions)
    lines = [
        BatchLine(
            b.number,
            b.batch_id,
            b.state,
            b.inputs,
            b.completed_requests,
            b.failed_requests,
            b.read_at is not None,
            b.error,
        )
        for b in batches
    ]
    return JobReport(
        job.id,
        job.state,
        job.model,
        job.previous,
        job.collection,
        job.inputs,
        job.reused,
        job.tokens_estimated,
        job.batch_tokens,
        job.sync_tokens,
        own.embedding_prices,
        job.started_at,
        job.finished_at,
        job.error,
        lines,
    )


def cancel(settings: Settings | None = None) -> JobReport | None:
    """Stop the running job: its batches are cancelled (work they finished is billed), the
    fleet stays on the collection it uses. None: no job was running."""
    settings = settings or get_settings()
    with transaction() as session:
        job = repo.running_job(session)
        if job is None:
            return None
        job_id = job.id
        repo.update_job(session, job_id, state="cancelled", finished_at=utcnow())
        batches = repo.batches_of(session, job_id)
    from shared.pipeline.batch_poll import cancel_batches

    cancel_batches(settings, batches)
    return status(settings)
