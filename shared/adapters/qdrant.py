"""Qdrant: one collection per embedding model and dimension, points with deterministic ids.

`QDRANT_URL` talks to a server (production); otherwise the client runs in local mode on
`QDRANT_PATH`. Local mode locks its folder to one process and is not safe across threads (points
were seen lost under concurrent upserts), so every call on a local client holds one lock.
"""

from __future__ import annotations

import atexit
import re
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from qdrant_client import QdrantClient
from qdrant_client import models as qm

from shared.errors import PermanentError
from shared.settings import Settings

PAYLOAD_INDEXES = {
    "document_id": qm.PayloadSchemaType.KEYWORD,
    "source": qm.PayloadSchemaType.KEYWORD,
    "tags": qm.PayloadSchemaType.KEYWORD,
    "language": qm.PayloadSchemaType.KEYWORD,
}


def collection_name(model: str, dimensions: int) -> str:
    """`chunks_<model>_<dimensions>`: a new model or size never mixes with the old vectors."""
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")
    return f"chunks_{slug}_{dimensions}"


@dataclass(frozen=True)
class Point:
    id: uuid.UUID
    vector: list[float]
    payload: dict[str, Any]


@lru_cache(maxsize=4)
def _client(url: str | None, path: str | None, api_key: str | None) -> QdrantClient:
    if url:
        client = QdrantClient(url=url, api_key=api_key, timeout=60)
    elif path == ":memory:":  # nothing kept on disk: benchmarks and throwaway demos
        client = QdrantClient(location=":memory:")
    else:
        try:
            client = QdrantClient(path=path)
        except RuntimeError as exc:  # portalocker: another process holds the folder
            raise PermanentError(
                f"The local Qdrant folder {path} is in use by another process (a worker or "
                "another ingest command). Stop that process, or use a Qdrant server "
                "(QDRANT_URL).",
                code="qdrant_locked",
            ) from exc
    atexit.register(client.close)  # local mode flushes and unlocks its folder on close
    return client


_LOCAL_LOCK = threading.RLock()


class QdrantIndex:
    """The vector index of one collection, as the pipeline and the CLI use it."""

    def __init__(self, client: QdrantClient, collection: str, dimensions: int, local: bool):
        self.client = client
        self.collection = collection
        self.dimensions = dimensions
        self.local = local
        self._ready = False

    @classmethod
    def from_settings(cls, settings: Settings, collection: str, dimensions: int) -> QdrantIndex:
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        client = _client(
            settings.qdrant_url, None if settings.qdrant_url else settings.qdrant_path, api_key
        )
        return cls(client, collection, dimensions, local=not settings.qdrant_url)

    def sibling(self, collection: str) -> QdrantIndex:
        """Another collection of the same size on the same client (reindex target)."""
        return QdrantIndex(self.client, collection, self.dimensions, self.local)

    def drop(self) -> None:
        with self._guard():
            self.client.delete_collection(self.collection)

    def _guard(self) -> AbstractContextManager[Any]:
        return _LOCAL_LOCK if self.local else nullcontext()

    def ensure_collection(self) -> None:
        """Create the collection on first use: cosine, HNSW m=16 / ef_construct=100, indexes."""
        if self._ready:
            return
        with self._guard():
            if not self.client.collection_exists(self.collection):
                self.client.create_collection(
                    self.collection,
                    vectors_config=qm.VectorParams(
                        size=self.dimensions, distance=qm.Distance.COSINE
                    ),
                    hnsw_config=qm.HnswConfigDiff(m=16, ef_construct=100),
                )
                if not self.local:  # local mode has no payload indexes (it warns and ignores)
                    for field, schema in PAYLOAD_INDEXES.items():
                        self.client.create_payload_index(self.collection, field, schema)
        self._ready = True

    def existing_vectors(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[float]]:
        """Vectors of the points among `ids` that are already stored (reused, not re-embedded)."""
        self.ensure_collection()
        found: dict[uuid.UUID, list[float]] = {}
        for batch in _batches(ids, 256):
            with self._guard():
                records = self.client.retrieve(
                    self.collection, [str(i) for i in batch], with_vectors=True, with_payload=False
                )
            for record in records:
                found[uuid.UUID(str(record.id))] = list(record.vector)  # type: ignore[arg-type]
        return found

    def upsert(self, points: Sequence[Point], batch_size: int = 256) -> None:
        """Write points in batches and wait until each batch is applied."""
        self.ensure_collection()
        for batch in _batches(points, batch_size):
            structs = [
                qm.PointStruct(id=str(p.id), vector=p.vector, payload=p.payload) for p in batch
            ]
            with self._guard():
                self.client.upsert(self.collection, points=structs, wait=True)

    def delete(self, ids: Iterable[uuid.UUID]) -> None:
        ids = list(ids)
        if not ids:
            return
        self.ensure_collection()
        for batch in _batches(ids, 1000):
            selector = qm.PointIdsList(points=[str(i) for i in batch])
            with self._guard():
                self.client.delete(self.collection, points_selector=selector, wait=True)

    def document_point_ids(self, document_id: uuid.UUID) -> set[uuid.UUID]:
        """Every point of one document, whatever its version."""
        return set(self._scroll_ids(_match("document_id", str(document_id))))

    def all_point_ids(self) -> set[uuid.UUID]:
        return set(self._scroll_ids(None))

    def _scroll_ids(self, flt: qm.Filter | None) -> Iterator[uuid.UUID]:
        self.ensure_collection()
        offset = None
        while True:
            with self._guard():
                records, offset = self.client.scroll(
                    self.collection,
                    scroll_filter=flt,
                    limit=1000,
                    offset=offset,
                    with_payload=False,
                    with_vectors=False,
                )
            for record in records:
                yield uuid.UUID(str(record.id))
            if offset is None:
                return

    def delete_document(self, document_id: uuid.UUID) -> None:
        self.ensure_collection()
        selector = qm.FilterSelector(filter=_match("document_id", str(document_id)))
        with self._guard():
            self.client.delete(self.collection, points_selector=selector, wait=True)

    def search(self, vector: list[float], limit: int = 5) -> list[qm.ScoredPoint]:
        self.ensure_collection()
        with self._guard():
            return self.client.query_points(
                self.collection, query=vector, limit=limit, with_payload=True
            ).points

    def count(self) -> int:
        self.ensure_collection()
        with self._guard():
            return self.client.count(self.collection, exact=True).count


def _match(key: str, value: str) -> qm.Filter:
    return qm.Filter(must=[qm.FieldCondition(key=key, match=qm.MatchValue(value=value))])


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
