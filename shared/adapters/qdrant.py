"""The index port on a Qdrant server (`QDRANT_URL`, production), through qdrant-client.

A collection holds a named dense vector (`dense`) and a named sparse lexical vector
(`sparse`, with Qdrant's IDF modifier) for hybrid search; a collection with one unnamed dense
vector and no sparse one (the older layout) keeps working dense-only until `ingest reindex`
builds a new collection. New collections compare dense vectors by dot product over vectors
normalised here (the same scores as cosine); cosine collections (the older layout) keep
working. A client in local mode (the tests' stand-in for a server) is not safe across
threads, so every call on one holds a lock. A server that cannot be reached or answers 5xx
raises `StoreError`.
"""

from __future__ import annotations

import atexit
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import lru_cache
from typing import Any

import httpx
from qdrant_client import QdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from shared.adapters.index import (
    DENSE,
    PAYLOAD_INDEXES,
    SPARSE,
    Candidate,
    Filter,
    Point,
    SparseVector,
    batches,
    scored,
    unit,
)
from shared.adapters.qdrant_filters import schema, sparse_from_qdrant, sparse_to_qdrant, to_qdrant
from shared.errors import StoreError
from shared.settings import Settings


@lru_cache(maxsize=4)
def _client(url: str, api_key: str | None) -> QdrantClient:
    client = QdrantClient(url=url, api_key=api_key, timeout=60)
    atexit.register(client.close)
    return client


_LOCAL_LOCK = threading.RLock()


class QdrantServerIndex:
    """The vector index of one collection on a Qdrant server."""

    def __init__(self, client: QdrantClient, collection: str, dimensions: int):
        self.client = client
        self.collection = collection
        self.dimensions = dimensions
        options = client.init_options
        self._local = bool(options.get("path")) or options.get("location") == ":memory:"
        self._ready = False
        self.named = True  # dense vector named `dense` (False: the older unnamed layout)
        self.has_sparse = True
        self.normalise = True  # dot product over unit vectors (False: a cosine collection)

    @classmethod
    def from_settings(
        cls, settings: Settings, collection: str, dimensions: int
    ) -> QdrantServerIndex:
        assert settings.qdrant_url
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return cls(_client(settings.qdrant_url, api_key), collection, dimensions)

    def sibling(self, collection: str, dimensions: int | None = None) -> QdrantServerIndex:
        return QdrantServerIndex(self.client, collection, dimensions or self.dimensions)

    @contextmanager
    def _call(self) -> Iterator[None]:
        """One client call: under the lock in local mode; unreachable or 5xx → StoreError."""
        guard: AbstractContextManager[Any] = _LOCAL_LOCK if self._local else nullcontext()
        with guard:
            try:
                yield
            except (httpx.TransportError, ResponseHandlingException) as exc:
                raise StoreError(f"The Qdrant server cannot be reached: {exc}") from exc
            except UnexpectedResponse as exc:
                if exc.status_code is not None and exc.status_code >= 500:
                    raise StoreError(f"The Qdrant server failed: {exc}") from exc
                raise

    def exists(self) -> bool:
        with self._call():
            return self.client.collection_exists(self.collection)

    def ensure_collection(self) -> None:
        """Create the collection on first use: dot product of unit vectors (cosine), HNSW
        m=16 / ef_construct=100, a sparse vector with IDF, payload indexes. An existing one is
        read for its vector layout and distance."""
        if self._ready:
            return
        with self._call():
            if not self.client.collection_exists(self.collection):
                self.client.create_collection(
                    self.collection,
                    vectors_config={
                        DENSE: qm.VectorParams(size=self.dimensions, distance=qm.Distance.DOT)
                    },
                    sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
                    hnsw_config=qm.HnswConfigDiff(m=16, ef_construct=100),
                )
            info = self.client.get_collection(self.collection)
            vectors = info.config.params.vectors
            self.named = isinstance(vectors, dict)
            dense = vectors.get(DENSE) if isinstance(vectors, dict) else vectors
            self.normalise = dense is not None and dense.distance == qm.Distance.DOT
            self.has_sparse = SPARSE in (info.config.params.sparse_vectors or {})
            if not self._local:  # local mode has no payload indexes (it warns and ignores)
                for field, kind in PAYLOAD_INDEXES.items():
                    if field not in (info.payload_schema or {}):  # indexes added later too
                        self.client.create_payload_index(self.collection, field, schema(kind))
        self._ready = True

    def existing_vectors(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[float]]:
        """Vectors of the points among `ids` that are already stored (reused, not re-embedded)."""
        return {p.id: p.vector for p in self._retrieve(ids, payload=False, sparse=False)}

    def retrieve(self, ids: Sequence[uuid.UUID]) -> list[Point]:
        return self._retrieve(ids, payload=True, sparse=True)

    def _retrieve(self, ids: Sequence[uuid.UUID], payload: bool, sparse: bool) -> list[Point]:
        self.ensure_collection()
        wanted: Any = True
        if self.named:
            wanted = [DENSE, SPARSE] if sparse and self.has_sparse else [DENSE]
        found: list[Point] = []
        for batch in batches(ids, 256):
            with self._call():
                records = self.client.retrieve(
                    self.collection,
                    [str(i) for i in batch],
                    with_vectors=wanted,
                    with_payload=payload,
                )
            for r in records:
                vectors = r.vector if isinstance(r.vector, dict) else {DENSE: r.vector}
                stored = vectors.get(SPARSE)
                found.append(
                    Point(
                        uuid.UUID(str(r.id)),
                        list(vectors[DENSE]),  # type: ignore[arg-type]
                        dict(r.payload or {}),
                        sparse_from_qdrant(stored),
                    )
                )
        return found

    def upsert(self, points: Sequence[Point], batch_size: int = 256) -> None:
        """Write points in batches and wait until each batch is applied."""
        self.ensure_collection()
        for batch in batches(points, batch_size):
            structs = [
                qm.PointStruct(id=str(p.id), vector=self._vectors(p), payload=p.payload)
                for p in batch
            ]
            with self._call():
                self.client.upsert(self.collection, points=structs, wait=True)

    def _dense(self, vector: list[float]) -> list[float]:
        """The vector as stored and queried: unit length in a dot-product collection."""
        return unit(vector) if self.normalise else vector

    def _vectors(self, point: Point) -> Any:
        if not self.named:
            return self._dense(point.vector)
        vectors: dict[str, Any] = {DENSE: self._dense(point.vector)}
        if self.has_sparse and point.sparse is not None:
            vectors[SPARSE] = sparse_to_qdrant(point.sparse)
        return vectors

    def delete(self, ids: Iterable[uuid.UUID]) -> None:
        ids = list(ids)
        if not ids:
            return
        self.ensure_collection()
        for batch in batches(ids, 1000):
            selector = qm.PointIdsList(points=[str(i) for i in batch])
            with self._call():
                self.client.delete(self.collection, points_selector=selector, wait=True)

    def all_point_ids(self) -> set[uuid.UUID]:
        self.ensure_collection()
        found: set[uuid.UUID] = set()
        offset = None
        while True:
            with self._call():
                records, offset = self.client.scroll(
                    self.collection, limit=1000, offset=offset, with_payload=False
                )
            found.update(uuid.UUID(str(r.id)) for r in records)
            if offset is None:
                return found

    def payload_pages(
        self, exclude: Sequence[str] = (), limit: int = 1000
    ) -> Iterator[list[tuple[uuid.UUID, dict[str, Any]]]]:
        """Every point's id and payload without the fields in `exclude` (no vectors), a page
        at a time: `ingest verify` compares them with the record without holding them all."""
        self.ensure_collection()
        selector = qm.PayloadSelectorExclude(exclude=list(exclude)) if exclude else True
        offset = None
        while True:
            with self._call():
                records, offset = self.client.scroll(
                    self.collection,
                    limit=limit,
                    offset=offset,
                    with_payload=selector,
                    with_vectors=False,
                )
            yield [(uuid.UUID(str(r.id)), dict(r.payload or {})) for r in records]
            if offset is None:
                return

    def overwrite_payloads(self, payloads: dict[uuid.UUID, dict[str, Any]]) -> None:
        """Replace each point's whole payload with its own (no re-embedding), a batch of
        points a request (`ingest verify --repair`)."""
        if not payloads:
            return
        self.ensure_collection()
        for batch in batches(list(payloads.items()), 256):
            operations = [
                qm.OverwritePayloadOperation(
                    overwrite_payload=qm.SetPayload(payload=payload, points=[str(point)])
                )
                for point, payload in batch
            ]
            with self._call():
                self.client.batch_update_points(self.collection, operations, wait=True)

    def set_hidden(self, ids: Sequence[uuid.UUID], hidden: bool) -> None:
        """Set the `hidden` payload field of these points (points not stored are left alone)."""
        self.set_fields(ids, {"hidden": hidden})

    def set_fields(self, ids: Sequence[uuid.UUID], fields: dict[str, Any]) -> None:
        """Overwrite these payload fields of these points, 1,000 at a time (no re-embedding;
        the other fields stay). Selected by a filter, so a point deleted meanwhile (a
        finalize removing stale points) is skipped instead of failing the request."""
        if not ids:
            return
        self.ensure_collection()
        for batch in batches(ids, 1000):
            selector = qm.FilterSelector(
                filter=qm.Filter(must=[qm.HasIdCondition(has_id=[str(i) for i in batch])])
            )
            with self._call():
                self.client.set_payload(self.collection, payload=fields, points=selector, wait=True)

    def delete_document(self, document_id: uuid.UUID) -> None:
        self.ensure_collection()
        match = qm.FieldCondition(key="document_id", match=qm.MatchValue(value=str(document_id)))
        selector = qm.FilterSelector(filter=qm.Filter(must=[match]))
        with self._call():
            self.client.delete(self.collection, points_selector=selector, wait=True)

    def candidates(
        self,
        dense: list[float],
        sparse: SparseVector | None,
        limit: int,
        flt: Filter | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[Candidate]:
        """Top `limit` points by cosine, or (with `sparse`, on a collection that has sparse
        vectors) dense and sparse lists fused by reciprocal rank fusion in Qdrant's Query API.
        `fields`: the payload fields to bring back (default all). One query: the per-hit
        dense and sparse scores are computed from the fused hits' own vectors."""
        self.ensure_collection()
        dense = self._dense(dense)
        using = DENSE if self.named else None
        payload: Any = qm.PayloadSelectorInclude(include=list(fields)) if fields else True
        if sparse is None or not self.has_sparse or not sparse.indices:
            with self._call():
                found = self.client.query_points(
                    self.collection,
                    query=dense,
                    using=using,
                    query_filter=to_qdrant(flt),
                    limit=limit,
                    with_payload=payload,
                    with_vectors=False,
                ).points
            return [
                Candidate(uuid.UUID(str(p.id)), p.payload or {}, p.score, p.score, None)
                for p in found
            ]
        prefetch = [
            qm.Prefetch(query=dense, using=using, limit=limit),
            qm.Prefetch(query=sparse_to_qdrant(sparse), using=SPARSE, limit=limit),
        ]
        with self._call():
            fused = self.client.query_points(
                self.collection,
                prefetch=prefetch,
                query=qm.FusionQuery(fusion=qm.Fusion.RRF),
                query_filter=to_qdrant(flt),  # Qdrant applies it to both prefetches
                limit=limit,
                with_payload=payload,
                with_vectors=[DENSE, SPARSE],
            ).points
        return scored(
            dense,
            sparse,
            [
                (p.id, p.payload, p.score, _named(p.vector, DENSE), _named(p.vector, SPARSE))
                for p in fused
            ],
        )

    def missing_sparse(self) -> int | None:
        """Points without a sparse vector; None when the collection has no sparse vector at
        all (made before hybrid search: `ingest reindex` builds one that has)."""
        self.ensure_collection()
        if not self.has_sparse:
            return None
        flt = qm.Filter(must_not=[qm.HasVectorCondition(has_vector=SPARSE)])
        with self._call():
            return self.client.count(self.collection, count_filter=flt, exact=True).count

    def count(self) -> int:
        self.ensure_collection()
        with self._call():
            return self.client.count(self.collection, exact=True).count

    def build(self) -> None:
        """Nothing: a server builds its index in the background."""

    def build_state(self) -> tuple[int, bool] | None:
        """None: a server builds its index itself."""
        return None

    def build_aside(self) -> None:
        """Nothing: a server builds its index in the background."""

    def close(self) -> None:
        """Nothing: the client is shared by the process (closed at exit)."""


def _named(vectors: Any, name: str) -> Any:
    return vectors.get(name) if isinstance(vectors, dict) else None
