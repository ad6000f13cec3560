"""Convert and chunk over batches on the Celery path: many new pages share one convert message
(`worker.wakeup`), a convert task takes the pages waiting with its own, and every page still
moves through each state with its own event."""

from __future__ import annotations

import uuid

import pytest
import redis
import sqlalchemy as sa

from shared import ingest
from shared.db import transaction
from shared.models import Chunk, Event
from shared.states import Status
from tests.support.pipeline import PipelineEnv, page
from tests.support.versions import new_version
from worker.app import CPU_QUEUE

MOVES = [
    ("received", "converting"),
    ("converting", "chunking"),
    ("chunking", "embedding"),
    ("embedding", "upserting"),
    ("upserting", "indexed"),
]


def register(count: int, prefix: str, enqueue) -> list[uuid.UUID]:  # type: ignore[no-untyped-def]
    return [
        ingest.submit(
            new_version(page(sections=2, words=40, seed=n).encode(), f"{prefix}-{n}.md"), enqueue
        ).version_id
        for n in range(count)
    ]


def moves_of(version_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[tuple[str, str, str]]]:
    with transaction() as session:
        rows = session.execute(
            sa.select(Event.version_id, Event.from_status, Event.to_status, Event.actor)
            .where(Event.version_id.in_(version_ids), Event.from_status.is_not(None))
            .order_by(Event.id)
        ).all()
    found: dict[uuid.UUID, list[tuple[str, str, str]]] = {v: [] for v in version_ids}
    for version_id, source, target, actor in rows:
        found[version_id].append((source, target, actor))
    return found


def test_new_pages_share_one_convert_message_and_move_through_each_state(
    pipeline: PipelineEnv,
) -> None:
    from worker.enqueue import enqueue_new

    pipeline.env["STAGE_BATCH_VERSIONS"] = "4"
    ids = register(10, "burst", enqueue_new)
    queue = redis.Redis.from_url(pipeline.env["REDIS_URL"])
    assert queue.llen(CPU_QUEUE) == 1  # the first page's message; the other nine need none

    with pipeline.worker(concurrency=1):
        for version_id in ids:
            assert pipeline.wait_done(version_id).status == Status.INDEXED

    moves = moves_of(ids)
    for version_id in ids:
        assert [(a, b) for a, b, _ in moves[version_id]] == MOVES, version_id
    # Ten pages in batches of at most four: three or four convert tasks, not ten.
    converters = {actor for v in ids for a, _, actor in moves[v] if a == "received"}
    assert 3 <= len(converters) <= 4, converters
    chunkers = {actor for v in ids for a, _, actor in moves[v] if a == "chunking"}
    assert len(chunkers) == len(converters)  # a chunk task per convert batch


def test_a_redelivered_message_of_a_finished_page_still_takes_a_full_batch_of_waiting_pages(
    pipeline: PipelineEnv,
) -> None:
    """A convert message whose own page is done takes as many waiting pages as it may; when
    that is all it may take, it sends another message for the rest (none is left behind)."""
    from worker.enqueue import enqueue_version

    pipeline.env["STAGE_BATCH_VERSIONS"] = "4"
    with pipeline.worker(concurrency=1):
        done = pipeline.submit(page(sections=1, words=30).encode(), "done.md")
        assert pipeline.wait_done(done.version_id).status == Status.INDEXED
        waiting = register(9, "waiting", lambda version_id: None)  # no message of their own
        enqueue_version(done.version_id)  # at-least-once: the finished page's message again
        for version_id in waiting:
            assert pipeline.wait_done(version_id, timeout=60).status == Status.INDEXED


def test_chunks_carry_their_lexical_vector_in_the_document_s_language_into_qdrant(
    pipeline: PipelineEnv,
) -> None:
    """The chunk stage stems (on the cpu workers); the upsert writes that vector as is."""
    from shared.adapters.index import SparseVector
    from shared.pipeline.indexing import lexical_vector

    english = "---\nlanguage: en\n---\n# Walking\n\nWalking helps the knees recover.\n"
    with pipeline.worker():
        registered = [
            pipeline.submit(page(sections=2, words=40).encode(), "dutch.md"),
            pipeline.submit(english.encode(), "english.md"),
        ]
        for item in registered:
            assert pipeline.wait_done(item.version_id).status == Status.INDEXED
    with transaction() as session:
        rows = session.execute(
            sa.select(Chunk.version_id, Chunk.point_id, Chunk.headings, Chunk.text, Chunk.sparse)
        ).all()
    language = {registered[0].version_id: None, registered[1].version_id: "en"}
    assert {row.version_id for row in rows} == set(language)
    for version_id, _, headings, text, stored in rows:
        assert stored == lexical_vector(list(headings), text, language[version_id])
    english_row = next(r for r in rows if r.version_id == registered[1].version_id)
    assert english_row.sparse != lexical_vector(list(english_row.headings), english_row.text, "nl")
    with pipeline.qdrant() as index:
        points = index.retrieve([r.point_id for r in rows])
    found = {p.id: p.sparse for p in points}
    for _, point_id, _, _, stored in rows:
        sparse = found[point_id]
        assert isinstance(sparse, SparseVector)
        assert sparse.indices == stored["indices"]
        # Qdrant (a server, and Edge) stores the weights as float32
        assert sparse.values == pytest.approx(stored["values"], rel=1e-6)
