"""A whole pipeline for tests: real Postgres, Redis, Celery worker subprocesses, local Qdrant
and the OpenAI stand-in driven through the real SDK."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa

from shared import ingest
from shared import repository as repo
from shared.adapters.index import VectorIndex, collection_name
from shared.adapters.qdrant_edge import EdgeIndex
from shared.db import transaction
from shared.models import Chunk, DocumentVersion
from shared.settings import Settings, get_settings
from shared.states import Status
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.versions import new_version
from tests.support.workers import WorkerProcess, celery_worker, wait_for

DONE = {Status.INDEXED, Status.FAILED, Status.UNCHANGED, Status.SUPERSEDED}


def document_point_ids(index: VectorIndex, document_id: uuid.UUID) -> set[uuid.UUID]:
    """Every point of one document in the index, whatever its version."""
    return {
        point
        for page in index.payload_pages()
        for point, payload in page
        if payload.get("document_id") == str(document_id)
    }


@dataclass
class PipelineEnv:
    env: dict[str, str]
    fake: FakeOpenAI
    tmp: Path
    workers: list[WorkerProcess] = field(default_factory=list)

    @property
    def settings(self) -> Settings:
        return get_settings()

    @contextmanager
    def worker(self, **options: object) -> Iterator[WorkerProcess]:
        with celery_worker(self.env, self.tmp, **options) as process:  # type: ignore[arg-type]
            yield process

    def submit(
        self, content: bytes, external_id: str = "page", media_type: str = "text/markdown"
    ) -> repo.Registered:
        from worker.enqueue import enqueue_version

        new = new_version(
            content,
            external_id,
            media_type=media_type,
            filename=external_id,
            title=f"Title of {external_id}",
        )
        return ingest.submit(new, enqueue_version)

    def version(self, version_id: uuid.UUID) -> DocumentVersion:
        with transaction() as session:
            found = repo.load_version(session, version_id)
            assert found is not None
            return found

    def wait_done(self, version_id: uuid.UUID, timeout: float = 90) -> DocumentVersion:
        """Poll Postgres until the version has left the pipeline."""
        wait_for(
            lambda: Status(self.version(version_id).status) in DONE,
            timeout=timeout,
            what=f"version {version_id} to finish",
        )
        return self.version(version_id)

    @contextmanager
    def qdrant(self) -> Iterator[VectorIndex]:
        """The local index folder, opened by the test (stop the workers first: one process)."""
        dimensions = int(self.env["EMBEDDING_DIMENSIONS"])
        name = collection_name(self.env["EMBEDDING_MODEL"], dimensions)
        index = EdgeIndex.open(self.env["QDRANT_PATH"], name, dimensions)
        try:
            yield index
        finally:
            index.close()

    def embedded_inputs(self) -> int:
        """How many inputs the stand-in accepted (each one paid for)."""
        return sum(r.inputs for r in self.fake.requests if r.status == 200)


def page(sections: int = 20, words: int = 200, seed: int = 7) -> str:
    """A long hospital page: one H1 and `sections` H2 sections of about 250 tokens each."""
    rng = random.Random(seed)
    parts = ["# Knee surgery\n"]
    for number in range(sections):
        text = " ".join(rng.choice(WORDS) for _ in range(words))
        parts.append(f"## Step {number}\n\n{text.capitalize()}.\n")
    return "\n".join(parts)


def point_ids_of(version_id) -> set:
    with transaction() as session:
        return set(session.scalars(sa.select(Chunk.point_id).where(Chunk.version_id == version_id)))


WORDS = [
    "patient",
    "knee",
    "surgery",
    "preparation",
    "recovery",
    "physiotherapy",
    "appointment",
    "hospital",
    "nurse",
    "doctor",
    "medicine",
    "pain",
    "exercise",
    "bandage",
    "wound",
    "infection",
    "fever",
    "rest",
    "walking",
    "crutches",
]
