"""`ingest reindex`: rebuild the index from Postgres into a new collection, then switch.

Postgres is the source of truth: every current version's chunks are there. Reindex embeds
them again (after a model change) or copies their vectors (`reuse_vectors`, e.g. to move to a
new Qdrant cluster), fills a fresh collection, switches the fleet to it (a row in Postgres that
every process reads), catches up with versions indexed meanwhile, removes what no current chunk
owns, and verifies. The old collection stays until the operator drops it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from shared import repository as repo
from shared.adapters.index import VectorIndex, collection_name
from shared.db import transaction
from shared.models import utcnow
from shared.pipeline import indexing, wiring
from shared.pipeline.embed import Embedder
from shared.pipeline.vector_cache import cached_or_embedded
from shared.pipeline.verify import VerifyReport, verify
from shared.settings import Settings, get_settings

Progress = Callable[[int, int], object]


@dataclass(frozen=True)
class ReindexReport:
    previous: str
    collection: str
    versions: int
    chunks: int
    tokens: int
    verified: VerifyReport


def reindex(
    target: str | None = None,
    *,
    reuse_vectors: bool = False,
    progress: Progress | None = None,
    settings: Settings | None = None,
) -> ReindexReport:
    settings = settings or get_settings()
    if settings.qdrant_collection:
        raise ValueError(
            "QDRANT_COLLECTION is set, so the fleet cannot be switched to a new collection. "
            "Unset it (the active collection is then kept in the database) and run again."
        )
    embedder = wiring.embedder(settings)
    source = wiring.index_for(settings, embedder)
    name = (
        target or f"{collection_name(embedder.model, embedder.dimensions)}_{utcnow():%Y%m%d%H%M%S}"
    )
    if name == source.collection:
        raise ValueError(f"{name} is the collection in use; name a new one")
    destination = source.sibling(name)
    destination.ensure_collection()

    started = utcnow()
    with transaction() as session:
        version_ids = repo.current_version_ids(session)
    copy = _Copier(embedder, source if reuse_vectors else None, destination)
    for done, version_id in enumerate(version_ids, start=1):
        copy(version_id)
        if progress:
            progress(done, len(version_ids))

    with transaction() as session:
        repo.set_active_collection(session, embedder.model, embedder.dimensions, name)
    # Versions finalized while we copied went to the old collection: copy them too, then
    # remove points of versions replaced or deleted meanwhile.
    with transaction() as session:
        late = repo.current_version_ids(session, finished_since=started)
        keep = repo.current_point_ids(session)
    for version_id in late:
        copy(version_id)
    destination.delete(destination.all_point_ids() - keep)
    return ReindexReport(
        source.collection, name, copy.versions, copy.chunks, copy.tokens, verify(settings)
    )


class _Copier:
    """Writes one version's points into the destination collection."""

    def __init__(self, embedder: Embedder, reuse: VectorIndex | None, destination: VectorIndex):
        self.embedder, self.reuse, self.destination = embedder, reuse, destination
        self.versions = self.chunks = self.tokens = 0

    def __call__(self, version_id: uuid.UUID) -> None:
        with transaction() as session:
            version = repo.load_version(session, version_id)
            if version is None:
                return
            document = version.document
            rows = repo.chunks_with_vectors_of(session, [version_id])
            hidden = repo.hidden_points_of(session, [document.id])
        pending = [
            indexing.PendingChunk(r.id, r.point_id, list(r.headings), r.text, r.sections)
            for r in rows
        ]
        vectors = indexing.reuse_vectors(self.reuse, pending) if self.reuse else {}
        todo = [chunk for chunk in pending if chunk.chunk_id not in vectors]
        found, tokens = cached_or_embedded(self.embedder, version_id, todo)
        vectors |= found
        self.tokens += tokens
        for row in rows:
            row.vector = vectors[row.id][0]
        self.destination.upsert(indexing.points_for(document, version, rows, hidden))
        self.versions += 1
        self.chunks += len(rows)
