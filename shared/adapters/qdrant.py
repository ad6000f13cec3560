"""Qdrant: one collection per embedding model and dimension, points with deterministic ids.

`QDRANT_URL` talks to a server (production); otherwise the client runs in local mode on
`QDRANT_PATH`. A collection holds a named dense vector (`dense`) and a named sparse lexical
vector (`sparse`, with Qdrant's IDF modifier) for hybrid search; a collection with one unnamed
dense vector and no sparse one (the older layout) keeps working dense-only until
`ingest reindex` builds a new collection. New collections compare dense vectors by dot
product over vectors normalised here (the same scores as cosine): local mode re-normalises
every stored vector of a cosine collection on every query (~100 ms at 10,000 chunks), a server
is as fast either way. Cosine collections (the older layout) keep working; `ingest reindex`
moves to a dot-product one. In local mode sparse queries are scored from postings (`qdrant_local`,
put in place by `qdrant_patches` when `local_client` makes a client).
Local mode locks its folder to one process and is not safe across threads (concurrent
upserts can lose points), so every call on a local client holds one lock.
"""

from __future__ import annotations

import atexit
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from shared.adapters import qdrant_local, qdrant_patches
from shared.errors import PermanentError
from shared.settings import Settings

PAYLOAD_INDEXES = {
    "document_id": qm.PayloadSchemaType.KEYWORD,
    "source": qm.PayloadSchemaType.KEYWORD,
    "tags": qm.PayloadSchemaType.KEYWORD,
    "language": qm.PayloadSchemaType.KEYWORD,
    "external_id": qm.PayloadSchemaType.KEYWORD,
    "heading_paths": qm.PayloadSchemaType.KEYWORD,  # search filter: a chapter or section
    "updated_at": qm.PayloadSchemaType.DATETIME,  # search filter: updated_since
    "hidden": qm.PayloadSchemaType.BOOL,  # every search leaves hidden points out
}
DENSE = "dense"
SPARSE = "sparse"


def collection_name(model: str, dimensions: int) -> str:
    """`chunks_<model>_<dimensions>`: a new model or size never mixes with the old vectors."""
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")
    return f"chunks_{slug}_{dimensions}"


@dataclass(frozen=True)
class Point:
    id: uuid.UUID
    vector: list[float]
    payload: dict[str, Any]
    sparse: qm.SparseVector | None = None


@dataclass(frozen=True)
class Candidate:
    """One point found by a search: fused score, its cosine (`dense`) and its sparse term
    score (`sparse`: None in a dense-only search or when it shares no term with the query)."""

    id: uuid.UUID
    payload: dict[str, Any]
    score: float
    dense: float | None
    sparse: float | None


def local_client(path: str) -> QdrantClient:
    """A local-mode client on the folder `path` (":memory:": nothing kept on disk, for
    benchmarks, throwaway demos and evaluation), with local mode's slow parts replaced for the
    process (`qdrant_patches.install`). Every local-mode client of the service is made here."""
    qdrant_patches.install()
    if path == ":memory:":
        return QdrantClient(location=":memory:")
    try:
        return QdrantClient(path=path)
    except RuntimeError as exc:  # portalocker: another process holds the folder
        raise PermanentError(
            f"The local Qdrant folder {path} is in use by another process (a worker or "
            "another ingest command). Stop that process, or use a Qdrant server "
            "(QDRANT_URL).",
            code="qdrant_locked",
        ) from exc


@lru_cache(maxsize=4)
def _client(url: str | None, path: str, api_key: str | None) -> QdrantClient:
    """A server's client when there is a URL, else local mode on `path` (one per process)."""
    client = QdrantClient(url=url, api_key=api_key, timeout=60) if url else local_client(path)
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
        self.named = True  # dense vector named `dense` (False: the older unnamed layout)
        self.has_sparse = True
        self.normalise = True  # dot product over unit vectors (False: a cosine collection)
        self._tuned = False  # local mode's SQLite commits made cheap (`_fast_local_commits`)

    @classmethod
    def from_settings(cls, settings: Settings, collection: str, dimensions: int) -> QdrantIndex:
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        client = _client(
            settings.qdrant_url, "" if settings.qdrant_url else settings.qdrant_path, api_key
        )
        return cls(client, collection, dimensions, local=not settings.qdrant_url)

    def sibling(self, collection: str) -> QdrantIndex:
        """Another collection of the same size on the same client (reindex target)."""
        return QdrantIndex(self.client, collection, self.dimensions, self.local)

    def _guard(self) -> AbstractContextManager[Any]:
        return _LOCAL_LOCK if self.local else nullcontext()

    def ensure_collection(self) -> None:
        """Create the collection on first use: dot product of unit vectors (cosine), HNSW
        m=16 / ef_construct=100, a sparse vector with IDF, payload indexes. An existing one is
        read for its vector layout and distance."""
        if self._ready:
            return
        with self._guard():
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
            if not self.local:  # local mode has no payload indexes (it warns and ignores)
                for field, schema in PAYLOAD_INDEXES.items():
                    if field not in (info.payload_schema or {}):  # indexes added later too
                        self.client.create_payload_index(self.collection, field, schema)
        self._ready = True

    def existing_vectors(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[float]]:
        """Vectors of the points among `ids` that are already stored (reused, not re-embedded)."""
        self.ensure_collection()
        found: dict[uuid.UUID, list[float]] = {}
        for batch in _batches(ids, 256):
            with self._guard():
                records = self.client.retrieve(
                    self.collection,
                    [str(i) for i in batch],
                    with_vectors=[DENSE] if self.named else True,
                    with_payload=False,
                )
            for record in records:
                found[uuid.UUID(str(record.id))] = _stored_dense(record.vector, self.named)
        return found

    def upsert(self, points: Sequence[Point], batch_size: int = 256) -> None:
        """Write points in batches and wait until each batch is applied."""
        self.ensure_collection()
        self._fast_local_commits()
        for batch in _batches(points, batch_size):
            structs = [
                qm.PointStruct(id=str(p.id), vector=self._vectors(p), payload=p.payload)
                for p in batch
            ]
            with self._guard():
                self.client.upsert(self.collection, points=structs, wait=True)

    def _dense(self, vector: list[float]) -> list[float]:
        """The vector as stored and queried: unit length in a dot-product collection."""
        return _unit(vector) if self.normalise else vector

    def _vectors(self, point: Point) -> Any:
        if not self.named:
            return self._dense(point.vector)
        vectors: dict[str, Any] = {DENSE: self._dense(point.vector)}
        if self.has_sparse and point.sparse is not None:
            vectors[SPARSE] = point.sparse
        return vectors

    def _fast_local_commits(self) -> None:
        """Local mode stores each point in SQLite with a commit of its own, by default in
        rollback-journal mode with an fsync per commit: 2-2.5 ms a point, most of an upsert.
        WAL with `synchronous=NORMAL` (as the embedded default's own SQLite) makes it ~0.4 ms:
        a killed process loses nothing, a power cut may lose the last commits (`ingest verify`
        finds such points missing). qdrant-client has no setting for it, so its connection is
        reached through private attributes; if they change, this does nothing."""
        if not self.local or self._tuned:
            return
        with self._guard():
            collections = getattr(getattr(self.client, "_client", None), "collections", {})
            persistence = getattr(collections.get(self.collection), "storage", None)
            connection = getattr(persistence, "storage", None)
            if isinstance(connection, sqlite3.Connection):
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
        self._tuned = True

    def delete(self, ids: Iterable[uuid.UUID]) -> None:
        ids = list(ids)
        if not ids:
            return
        self.ensure_collection()
        self._fast_local_commits()
        for batch in _batches(ids, 1000):
            selector = qm.PointIdsList(points=[str(i) for i in batch])
            with self._guard():
                self.client.delete(self.collection, points_selector=selector, wait=True)

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

    def payload_pages(
        self, exclude: Sequence[str] = (), limit: int = 1000
    ) -> Iterator[list[tuple[uuid.UUID, dict[str, Any]]]]:
        """Every point's id and payload without the fields in `exclude` (no vectors), a page
        at a time: `ingest verify` compares them with the record without holding them all."""
        self.ensure_collection()
        selector = qm.PayloadSelectorExclude(exclude=list(exclude)) if exclude else True
        offset = None
        while True:
            with self._guard():
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
        self._fast_local_commits()
        for batch in _batches(list(payloads.items()), 256):
            operations = [
                qm.OverwritePayloadOperation(
                    overwrite_payload=qm.SetPayload(payload=payload, points=[str(point)])
                )
                for point, payload in batch
            ]
            with self._guard():
                self.client.batch_update_points(self.collection, operations, wait=True)

    def set_hidden(self, ids: Sequence[uuid.UUID], hidden: bool) -> None:
        """Set the `hidden` payload field of these points (no re-embedding; points that are
        not stored are left alone)."""
        if not ids:
            return
        self.ensure_collection()
        self._fast_local_commits()
        for batch in _batches(ids, 1000):
            with self._guard():
                self.client.set_payload(
                    self.collection,
                    payload={"hidden": hidden},
                    points=[str(i) for i in batch],
                    wait=True,
                )

    def set_fields(self, ids: Sequence[uuid.UUID], fields: dict[str, Any]) -> None:
        """Overwrite these payload fields of these points, 1,000 at a time (no re-embedding;
        the other fields stay). Selected by a filter, so a point deleted meanwhile (a
        finalize removing stale points) is skipped instead of failing the request."""
        if not ids:
            return
        self.ensure_collection()
        self._fast_local_commits()
        for batch in _batches(ids, 1000):
            selector = qm.FilterSelector(
                filter=qm.Filter(must=[qm.HasIdCondition(has_id=[str(i) for i in batch])])
            )
            with self._guard():
                self.client.set_payload(self.collection, payload=fields, points=selector, wait=True)

    def delete_document(self, document_id: uuid.UUID) -> None:
        self.ensure_collection()
        selector = qm.FilterSelector(filter=_match("document_id", str(document_id)))
        with self._guard():
            self.client.delete(self.collection, points_selector=selector, wait=True)

    def candidates(
        self,
        dense: list[float],
        sparse: qm.SparseVector | None,
        limit: int,
        flt: qm.Filter | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[Candidate]:
        """Top `limit` points by cosine, or (with `sparse`, on a collection that has sparse
        vectors) dense and sparse lists fused by reciprocal rank fusion in Qdrant's Query API.
        `fields`: the payload fields to bring back (default all).

        One query, each list scored once: the per-hit dense and sparse scores are computed
        here from the fused hits' own vectors (`_dense_score`, `_sparse_score`), not by
        running the lists again (in local mode each list scans every point and checks the
        filter on each: see docs/retrieval.md, "Speed")."""
        self.ensure_collection()
        dense = self._dense(dense)
        using = DENSE if self.named else None
        payload: Any = qm.PayloadSelectorInclude(include=list(fields)) if fields else True
        if sparse is None or not self.has_sparse or not sparse.indices:
            with self._guard():
                found = self.client.query_points(
                    self.collection,
                    query=dense,
                    using=using,
                    query_filter=flt,
                    limit=limit,
                    with_payload=payload,
                    with_vectors=False,
                ).points
            return [
                Candidate(uuid.UUID(str(p.id)), p.payload or {}, p.score, p.score, None)
                for p in found
            ]
        with self._guard():
            # local mode: the hits' vectors are read where it stores them; a server sends them
            reader = (
                qdrant_local.vector_reader(self.client, self.collection, DENSE, SPARSE)
                if self.local
                else None
            )
            prefetch = [
                qm.Prefetch(query=dense, using=using, limit=limit),
                qm.Prefetch(query=sparse, using=SPARSE, limit=limit),
            ]
            # local mode: its own fusion steps without a pydantic record per hit
            local = (
                qdrant_local.fused_rrf(self.client, self.collection, prefetch, flt, limit, payload)
                if reader
                else None
            )
            fused = (
                local
                if local is not None
                else self.client.query_points(
                    self.collection,
                    prefetch=prefetch,
                    query=qm.FusionQuery(fusion=qm.Fusion.RRF),
                    query_filter=flt,  # Qdrant applies it to both prefetches
                    limit=limit,
                    with_payload=payload,
                    with_vectors=False if reader else [DENSE, SPARSE],
                ).points
            )
            stored = (
                reader([p.id for p in fused])
                if reader
                else [(_named(p.vector, DENSE), _named(p.vector, SPARSE)) for p in fused]
            )
        query = np.asarray(dense, dtype=np.float32)
        query_norm = np.linalg.norm(query)  # once, not once per hit
        return [
            Candidate(
                uuid.UUID(str(p.id)),
                p.payload or {},
                p.score,
                _dense_score(query, vectors[0], query_norm),
                _sparse_score(sparse, vectors[1]),
            )
            for p, vectors in zip(fused, stored, strict=True)
        ]

    def missing_sparse(self) -> int | None:
        """Points without a sparse vector; None when the collection has no sparse vector at
        all (made before hybrid search: `ingest reindex` builds one that has)."""
        self.ensure_collection()
        if not self.has_sparse:
            return None
        flt = qm.Filter(must_not=[qm.HasVectorCondition(has_vector=SPARSE)])
        with self._guard():
            return self.client.count(self.collection, count_filter=flt, exact=True).count

    def count(self) -> int:
        self.ensure_collection()
        with self._guard():
            return self.client.count(self.collection, exact=True).count


def _unit(vector: list[float]) -> list[float]:
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return (array / norm).tolist() if norm > 0 else list(vector)


def _stored_dense(vector: object, named: bool) -> list[float]:
    """A retrieved point's dense vector: the one named DENSE, or the only one."""
    if named and isinstance(vector, dict):
        vector = vector[DENSE]
    if not isinstance(vector, list):
        raise TypeError(f"a stored point without a dense vector: {type(vector).__name__}")
    return list(vector)


def _named(vectors: Any, name: str) -> Any:
    return (vectors or {}).get(name)


def _dense_score(query: np.ndarray, vector: Any, query_norm: Any = None) -> float | None:
    """Cosine of the query and a hit's dense vector: the score Qdrant's dense list gives.
    `query_norm`: `np.linalg.norm(query)`, when the caller has it already."""
    if vector is None:
        return None
    stored = np.asarray(vector, dtype=np.float32)
    if query_norm is None:
        query_norm = np.linalg.norm(query)
    norms = float(query_norm * np.linalg.norm(stored))
    return float(np.dot(query, stored) / norms) if norms else 0.0


def _sparse_score(query: qm.SparseVector, stored: qm.SparseVector | None) -> float | None:
    """Dot product of the query's and a hit's sparse vectors (the BM25 term-frequency part:
    without the IDF Qdrant multiplies in when it ranks the sparse list, which lives only in
    Qdrant); None when they share no term, as the sparse list would not have found it."""
    if stored is None:
        return None
    weights = dict(zip(stored.indices, stored.values, strict=True))
    pairs = zip(query.indices, query.values, strict=True)
    shared = [weight * weights[index] for index, weight in pairs if index in weights]
    return float(sum(shared)) if shared else None


def _match(key: str, value: str) -> qm.Filter:
    return qm.Filter(must=[qm.FieldCondition(key=key, match=qm.MatchValue(value=value))])


def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
