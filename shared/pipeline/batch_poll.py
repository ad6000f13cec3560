"""The poll of a batch re-index: periodic and idempotent, everything it knows is in Postgres.

Each poll takes the running job (one poll at a time: a claim that runs out, so a killed
worker's is taken over), asks the API where each batch stands and records it, applies the
output file of each batch that ended (lines in any order, joined on `custom_id`; each line's
vectors upserted into the new collection at once, the line marked applied) and embeds the
lines of the error file through the embeddings API. A batch that expired or was cancelled
elsewhere is used as far as it got; the rest is embedded the same way. A batch the API
refused fails the job with its reason (the fleet keeps its collection).

When every batch has been read, the finish: each current version's points are written again
with the vectors the new collection holds (their payloads as they are now) and whatever it
lacks embedded through the embeddings API (documents updated or added while the batches ran),
then, only when every current chunk has its point, the fleet is switched to the new
collection (the switch of `ingest reindex`); versions indexed meanwhile are copied after it
and points no current chunk owns removed.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from shared import repository as repo
from shared.adapters.index import VectorIndex
from shared.adapters.openai_batches import ENDED, BatchClient
from shared.db import transaction
from shared.log import get_logger
from shared.metrics import EMBEDDING_BATCH_LINES, EMBEDDING_BATCH_TOKENS
from shared.models import Chunk, EmbeddingBatch, ReindexJob, utcnow
from shared.pipeline import indexing
from shared.pipeline.batch_reindex import (
    JobReport,
    destination,
    job_embedder,
    status,
)
from shared.pipeline.embed import Embedder
from shared.pipeline.embed.batch_files import Answer, read_line, request_line
from shared.pipeline.reindex import _Copier
from shared.pipeline.vector_cache import VectorCache
from shared.settings import Settings, get_settings

log = get_logger("shared.batch_reindex")
#: Output lines applied per transaction: each holds up to 2,048 vectors, and a line applied
#: is one a poll killed later does not read again.
LINES_AT_ONCE = 1


def batch_client(settings: Settings) -> BatchClient:
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return BatchClient(
        api_key=key, base_url=settings.openai_base_url, timeout=settings.embedding_timeout_seconds
    )


def submit(client: BatchClient, job_id: uuid.UUID, row: int, number: int, content: bytes) -> None:
    """Upload one request file and create its batch, each id recorded as soon as it exists."""
    file_id = client.upload(f"reindex-{job_id}-{number:04d}.jsonl", content)
    with transaction() as session:
        repo.update_batch(session, row, input_file_id=file_id, state="uploaded")
    created = client.create(file_id, {"reindex_job": str(job_id), "file": str(number)})
    with transaction() as session:
        repo.update_batch(session, row, batch_id=created.id, state=created.status)


def cancel_batches(settings: Settings, batches: Sequence[EmbeddingBatch]) -> None:
    client = batch_client(settings)
    for batch in batches:
        if batch.batch_id and batch.state not in ENDED and batch.state != "cancelling":
            state = client.cancel(batch.batch_id)
            with transaction() as session:
                repo.update_batch(session, batch.id, state=state.status)


def poll(settings: Settings | None = None, owner: str | None = None) -> JobReport | None:
    """Carry the running job on as far as it goes now; or, in a process of the new model,
    catch a switched job up. None when there is nothing to do. A poll that finds another one
    working on the job returns at once."""
    settings = settings or get_settings()
    owner = owner or f"poll-{uuid.uuid4().hex[:12]}"
    with transaction() as session:
        job = repo.running_job(session) or repo.switched_job(
            session, settings.embedding_model, settings.embedding_dimensions
        )
        if job is None:
            return None
        if not repo.claim_poll(session, job.id, owner, _claim_until(settings)):
            log.info("another poll is working on the batch re-index", job=str(job.id))
            return status(settings)
    try:
        if job.state == "running":
            _Poll(settings, job, owner).run()
        else:
            _Poll(settings, job, owner).catch_up()
    finally:
        with transaction() as session:
            repo.release_poll(session, job.id, owner)
    return status(settings)


def _claim_until(settings: Settings) -> datetime:
    return utcnow() + timedelta(seconds=settings.lease_seconds)


class _Poll:
    def __init__(self, settings: Settings, job: ReindexJob, owner: str) -> None:
        self.settings, self.job, self.owner = settings, job, owner
        self.client = batch_client(settings)
        self.embedder: Embedder = job_embedder(settings, job.model, job.dimensions)
        self.index = destination(settings, job.collection, job.dimensions)

    def run(self) -> None:
        with transaction() as session:
            batches = repo.batches_of(session, self.job.id)
        for batch in batches:
            if batch.read_at is None and not self._carry_on(batch):
                return
        with transaction() as session:
            unread = [b for b in repo.batches_of(session, self.job.id) if b.read_at is None]
        if not unread:
            self._finish()

    def _carry_on(self, batch: EmbeddingBatch) -> bool:
        """One batch as far as it goes; False when the job failed."""
        if batch.batch_id is None:
            self._submit_again(batch)
            return True
        state = self.client.retrieve(batch.batch_id)
        with transaction() as session:
            repo.update_batch(
                session,
                batch.id,
                state=state.status,
                output_file_id=state.output_file_id,
                error_file_id=state.error_file_id,
                completed_requests=state.completed,
                failed_requests=state.failed,
                error=state.errors,
            )
        if state.status == "failed":
            message = f"batch {batch.number} ({batch.batch_id}) was refused: {state.errors}"
            log.error("a batch of the re-index failed", job=str(self.job.id), reason=message)
            with transaction() as session:
                repo.update_job(
                    session, self.job.id, state="failed", error=message, finished_at=utcnow()
                )
                others = repo.batches_of(session, self.job.id)
            cancel_batches(self.settings, [b for b in others if b.id != batch.id])
            return False
        if state.status in ENDED:  # completed, expired, cancelled: use what it answered
            for file_id in (state.output_file_id, state.error_file_id):
                if file_id:
                    self._apply(self.client.lines(file_id))
            with transaction() as session:
                repo.update_batch(session, batch.id, read_at=utcnow())
            log.info(
                "a batch of the re-index was read",
                job=str(self.job.id),
                batch=batch.batch_id,
                state=state.status,
                completed=state.completed,
                failed=state.failed,
            )
        return True

    def _submit_again(self, batch: EmbeddingBatch) -> None:
        """A batch whose start was cut short: its file uploaded (and the batch created) now.
        Lines whose chunks are gone meanwhile are left out (the finish embeds the rest)."""
        if batch.input_file_id:
            created = self.client.create(
                batch.input_file_id, {"reindex_job": str(self.job.id), "file": str(batch.number)}
            )
            with transaction() as session:
                repo.update_batch(session, batch.id, batch_id=created.id, state=created.status)
            return
        with transaction() as session:
            requests = repo.requests_of_batch(session, batch.id)
            rows = {
                c.id: c
                for c in repo.current_chunks_by_id(
                    session, [i for r in requests for group in r.chunk_ids for i in group]
                )
            }
        model = self.job.model
        dimensions = self.job.dimensions if model.startswith("text-embedding-3") else None
        content = b""
        for request in requests:
            if all(i in rows for group in request.chunk_ids for i in group):
                texts = [
                    indexing.embedding_text(_pending(rows[group[0]])) for group in request.chunk_ids
                ]
                content += request_line(request.custom_id, model, dimensions, texts)
        submit(self.client, self.job.id, batch.id, batch.number, content)

    def _apply(self, lines: Iterable[bytes]) -> None:
        """Output or error lines: vectors into the new collection, failed lines embedded
        through the embeddings API; each line applied once (marked so in Postgres)."""
        group: list[Answer] = []
        for raw in lines:
            group.append(read_line(raw, self.job.dimensions))
            if len(group) >= LINES_AT_ONCE:
                self._apply_answers(group)
                group = []
        if group:
            self._apply_answers(group)

    def _apply_answers(self, answers: list[Answer]) -> None:
        with transaction() as session:
            open_ = repo.open_requests(session, self.job.id, [a.custom_id for a in answers])
        vectors: dict[int, bytes] = {}
        retry: list[list[int]] = []
        tokens = ok = failed = 0
        for answer in answers:
            groups = open_.get(answer.custom_id)
            if groups is None:
                continue  # applied before (a poll killed after it), or not ours
            if answer.vectors is None or len(answer.vectors) != len(groups):
                retry += groups
                failed += 1
                continue
            ok += 1
            tokens += answer.tokens
            for vector, chunk_ids in zip(answer.vectors, groups, strict=True):
                data = indexing.to_bytes(vector)
                vectors.update(dict.fromkeys(chunk_ids, data))
        model = self.job.model
        EMBEDDING_BATCH_TOKENS.labels(model).inc(tokens)
        EMBEDDING_BATCH_LINES.labels(model, "ok").inc(ok)
        EMBEDDING_BATCH_LINES.labels(model, "failed").inc(failed)
        synced = self._embed_now(retry) if retry else 0
        upsert_chunks(self.index, vectors, self.embedder)
        with transaction() as session:
            repo.mark_requests_done(session, self.job.id, [a.custom_id for a in answers])
            repo.add_job_tokens(session, self.job.id, batch=tokens, sync=synced)
            repo.claim_poll(session, self.job.id, self.owner, _claim_until(self.settings))

    def _embed_now(self, groups: list[list[int]]) -> int:
        """The inputs of failed lines, through the embeddings API; the tokens billed."""
        with transaction() as session:
            rows = repo.current_chunks_by_id(session, [i for group in groups for i in group])
        pending = [_pending(row) for row in rows]
        vectors: dict[int, bytes] = {}
        tokens = 0
        for part in indexing.groups(pending, 512):
            embedded, usage = indexing.embed_group(self.embedder, part)
            vectors.update({cid: data for cid, (data, _) in embedded.items()})
            tokens += usage.tokens
        upsert_chunks(self.index, vectors, self.embedder)
        return tokens

    def _finish(self) -> None:
        """Every version's points written again (payloads as now), what is missing embedded,
        then the switch, once every current chunk has its point."""
        began = utcnow()
        copy = _Copier(self.embedder, self.index, self.index)
        with transaction() as session:
            version_ids = repo.current_version_ids(session)
        for version_id in version_ids:
            copy(version_id)
        with transaction() as session:
            repo.add_job_tokens(session, self.job.id, sync=copy.tokens)
            expected = repo.current_point_ids(session)
        missing = expected - self.index.all_point_ids()
        if missing:  # a version made current between the two reads: the next poll does it
            log.info("the re-index waits for versions indexed meanwhile", missing=len(missing))
            return
        with transaction() as session:
            repo.set_active_collection(
                session, self.job.model, self.job.dimensions, self.job.collection
            )
            repo.update_job(session, self.job.id, state="switched", finished_at=utcnow())
        self._copy_since(began)
        log.info("the fleet now uses the re-indexed collection", collection=self.job.collection)

    def catch_up(self) -> None:
        """After the switch, a fleet still on the old model indexes into the old collection
        until the new model is deployed: the first poll of a process of the new model copies
        the versions indexed since the switch into the new collection; the job is then done."""
        late = self._copy_since(self.job.finished_at or self.job.started_at)
        with transaction() as session:
            repo.update_job(session, self.job.id, state="done")
        log.info("the re-indexed collection caught up", versions=late)

    def _copy_since(self, since: datetime) -> int:
        """The versions made current since `since` copied into the new collection (what is
        missing embedded, its tokens on the job), and the points no current chunk owns
        removed from it; how many versions."""
        with transaction() as session:
            late = repo.current_version_ids(session, finished_since=since)
        copy = _Copier(self.embedder, self.index, self.index)
        for version_id in late:
            copy(version_id)
        with transaction() as session:
            keep = repo.current_point_ids(session)
            repo.add_job_tokens(session, self.job.id, sync=copy.tokens)
        self.index.delete(self.index.all_point_ids() - keep)
        return len(late)


def upsert_chunks(index: VectorIndex, vectors: dict[int, bytes], embedder: Embedder) -> None:
    """Points for these chunks (those of current versions) with the given vectors, which the
    API returned for `embedder`'s model: kept in the vector cache too."""
    if not vectors:
        return
    with transaction() as session:
        rows = repo.current_chunks_by_id(session, list(vectors))
        cache = VectorCache(embedder)
        cache.add(_pending(row) for row in rows)
        cache.remember(session, {row.id: (vectors[row.id], True) for row in rows})
        versions = repo.versions_by_id(
            session, list({r.version_id for r in rows}), with_documents=True
        )
        hidden = repo.hidden_points_of(session, [v.document_id for v in versions])
    by_version = defaultdict(list)
    for row in rows:
        row.vector = vectors[row.id]  # detached: nothing is written back
        by_version[row.version_id].append(row)
    points = []
    for version in versions:
        points += indexing.points_for(version.document, version, by_version[version.id], hidden)
    index.upsert(points)


def _pending(row: Chunk) -> indexing.PendingChunk:
    return indexing.PendingChunk(
        row.id, row.point_id, list(row.headings), row.text, row.sections or []
    )
