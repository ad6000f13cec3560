"""The index port on Qdrant Edge: the Qdrant engine in-process (Rust, `qdrant-edge-py`, pinned
exactly: beta, its API and on-disk format change between releases), on a local folder
(`QDRANT_PATH`), one shard folder per collection. The embedded default.

Each shard holds a dense vector `dense` (dot product over unit vectors: cosine) and a sparse
vector `sparse` with IDF, payload indexes for the search filters, UUID point ids; an upsert is
durable when it returns (flushed). Edge is safe across threads but locks a folder to one
process: a second process gets `StoreLockedError`. It has no background optimizer: segments
are searched brute force until `build()` builds their HNSW index (see docs/benchmarks.md,
"Issue 30"). A shard is opened once per process and shared by every index object on it
(counted), and closed when the last one closes.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as edge
from qdrant_client import models as qm

from shared.adapters import edge_migrate
from shared.adapters.edge_filters import to_edge
from shared.adapters.index import (
    DENSE,
    PAYLOAD_INDEXES,
    RRF_K,
    SPARSE,
    Candidate,
    Point,
    batches,
    in_order,
    sparse_score,
    unit,
)
from shared.errors import StoreError, StoreLockedError

_SCHEMAS = {
    qm.PayloadSchemaType.KEYWORD: edge.PayloadSchemaType.Keyword,
    qm.PayloadSchemaType.DATETIME: edge.PayloadSchemaType.Datetime,
    qm.PayloadSchemaType.BOOL: edge.PayloadSchemaType.Bool,
}
#: Below this many points `build()` leaves a shard brute force (faster to search than to
#: index at that size, and no freeze: docs/benchmarks.md, "Issue 30").
BUILD_THRESHOLD = 10_000

_shards: dict[Path, tuple[edge.EdgeShard, int]] = {}  # folder -> (shard, users)
_shards_lock = threading.Lock()
_memory_root: Path | None = None


def _config(dimensions: int) -> edge.EdgeConfig:
    return edge.EdgeConfig(
        vectors={DENSE: edge.EdgeVectorParams(size=dimensions, distance=edge.Distance.Dot)},
        sparse_vectors={SPARSE: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf)},
        hnsw_config=edge.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10_000),
    )


def _locked(folder: Path, exc: Exception) -> StoreError:
    if "WouldBlock" in str(exc) or "lock" in str(exc).lower():
        return StoreLockedError(
            f"The index folder {folder} is in use by another process; use a Qdrant server "
            "(QDRANT_URL) or run everything in one process (`ingest serve`).",
        )
    return StoreError(f"The index folder {folder} cannot be opened: {exc}")


def _acquire(folder: Path, dimensions: int) -> edge.EdgeShard:
    """The process's shard on `folder` (created with our layout when new), one user more."""
    with _shards_lock:
        if folder in _shards:
            shard, users = _shards[folder]
            _shards[folder] = (shard, users + 1)
            return shard
        try:
            if (folder / "edge_config.json").exists() or (folder / "wal").exists():
                shard = edge.EdgeShard.load(str(folder))
            else:
                shard = edge.EdgeShard.create(str(folder), _config(dimensions))
                for field, schema in PAYLOAD_INDEXES.items():
                    shard.update(edge.UpdateOperation.create_field_index(field, _SCHEMAS[schema]))
                shard.flush()
        except Exception as exc:  # qdrant_edge raises plain Exception
            raise _locked(folder, exc) from exc
        _shards[folder] = (shard, 1)
        return shard


def _release(folder: Path) -> None:
    with _shards_lock:
        if folder not in _shards:
            return
        shard, users = _shards.pop(folder)
        if users > 1:
            _shards[folder] = (shard, users - 1)
        else:
            shard.close()


def _memory() -> Path:
    """The process's folder for QDRANT_PATH=":memory:" (removed at exit)."""
    global _memory_root
    with _shards_lock:
        if _memory_root is None:
            _memory_root = Path(tempfile.mkdtemp(prefix="ingest-edge-"))
            atexit.register(shutil.rmtree, _memory_root, True)
        return _memory_root


class EdgeIndex:
    """The vector index of one collection: a Qdrant Edge shard in `root / collection`."""

    has_sparse = True

    def __init__(self, root: Path, collection: str, dimensions: int, owns_root: bool = False):
        self.root = root
        self.collection = collection
        self.dimensions = dimensions
        self.folder = root / collection
        self._owns_root = owns_root  # a temporary folder, removed on close
        self._shard: edge.EdgeShard | None = None
        self._open_lock = threading.Lock()

    @classmethod
    def open(cls, path: str, collection: str, dimensions: int) -> EdgeIndex:
        """The index of `collection` under `path`; a folder qdrant-client's local mode wrote
        is converted first (`edge_migrate`)."""
        if path == ":memory:":
            return cls(_memory(), collection, dimensions)
        root = Path(path)
        if edge_migrate.is_local_mode(root):
            edge_migrate.migrate(root, cls)
        return cls(root, collection, dimensions)

    @classmethod
    def temporary(cls, collection: str, dimensions: int) -> EdgeIndex:
        """A throwaway index in a temporary folder removed on close (`ingest eval`)."""
        return cls(Path(tempfile.mkdtemp(prefix="ingest-edge-")), collection, dimensions, True)

    def sibling(self, collection: str, dimensions: int | None = None) -> EdgeIndex:
        return EdgeIndex(self.root, collection, dimensions or self.dimensions)

    @property
    def shard(self) -> edge.EdgeShard:
        if self._shard is None:
            with self._open_lock:
                if self._shard is None:
                    self.root.mkdir(parents=True, exist_ok=True)
                    self._shard = _acquire(self.folder, self.dimensions)
        return self._shard

    def exists(self) -> bool:
        return self._shard is not None or self.folder.exists()

    def ensure_collection(self) -> None:
        self.shard  # noqa: B018 (opened or created)

    def _update(self, operation: Any) -> None:
        try:
            self.shard.update(operation)
        except Exception as exc:
            raise StoreError(f"The index {self.collection} refused an update: {exc}") from exc

    def existing_vectors(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[float]]:
        found: dict[uuid.UUID, list[float]] = {}
        for batch in batches(ids, 1000):
            for r in self.shard.retrieve([str(i) for i in batch], False, [DENSE]):
                found[uuid.UUID(str(r.id))] = list(_vectors(r.vector)[DENSE])
        return found

    def retrieve(self, ids: Sequence[uuid.UUID]) -> list[Point]:
        found = []
        for batch in batches(ids, 1000):
            for r in self.shard.retrieve([str(i) for i in batch], True, True):
                vectors = _vectors(r.vector)
                stored = vectors.get(SPARSE)
                sparse = (
                    qm.SparseVector(indices=list(stored.indices), values=list(stored.values))
                    if stored is not None
                    else None
                )
                point = Point(
                    uuid.UUID(str(r.id)), list(vectors[DENSE]), dict(r.payload or {}), sparse
                )
                found.append(point)
        return found

    def upsert(self, points: Sequence[Point], batch_size: int = 1000) -> None:
        """Write the points (dense at unit length) and flush: durable when it returns."""
        if not points:
            return
        for batch in batches(points, batch_size):
            self._update(edge.UpdateOperation.upsert_points([_point(p) for p in batch]))
        self.shard.flush()

    def delete(self, ids: Iterable[uuid.UUID]) -> None:
        ids = list(ids)
        if not ids:
            return
        for batch in batches(ids, 1000):
            self._update(edge.UpdateOperation.delete_points([str(i) for i in batch]))
        self.shard.flush()

    def delete_document(self, document_id: uuid.UUID) -> None:
        match = edge.FieldCondition("document_id", match=edge.MatchValue(str(document_id)))
        self._update(edge.UpdateOperation.delete_points_by_filter(edge.Filter(must=[match])))
        self.shard.flush()

    def set_hidden(self, ids: Sequence[uuid.UUID], hidden: bool) -> None:
        self.set_fields(ids, {"hidden": hidden})

    def set_fields(self, ids: Sequence[uuid.UUID], fields: dict[str, Any]) -> None:
        """Overwrite these fields of the stored points among `ids` (selected by a filter: a
        point deleted meanwhile is skipped)."""
        if not ids:
            return
        for batch in batches(ids, 1000):
            flt = edge.Filter(must=[edge.HasIdCondition({str(i) for i in batch})])
            self._update(edge.UpdateOperation.set_payload_by_filter(flt, fields))
        self.shard.flush()

    def overwrite_payloads(self, payloads: dict[uuid.UUID, dict[str, Any]]) -> None:
        if not payloads:
            return
        for point, payload in payloads.items():
            flt = edge.Filter(must=[edge.HasIdCondition({str(point)})])
            self._update(edge.UpdateOperation.overwrite_payload_by_filter(flt, payload))
        self.shard.flush()

    def payload_pages(
        self, exclude: Sequence[str] = (), limit: int = 1000
    ) -> Iterator[list[tuple[uuid.UUID, dict[str, Any]]]]:
        selector: Any = edge.PayloadSelector.Exclude(list(exclude)) if exclude else True
        offset: Any = None
        while True:
            request = edge.ScrollRequest(offset=offset, limit=limit, with_payload=selector)
            records, offset = self.shard.scroll(request)
            yield [(uuid.UUID(str(r.id)), dict(r.payload or {})) for r in records]
            if offset is None:
                return

    def all_point_ids(self) -> set[uuid.UUID]:
        found: set[uuid.UUID] = set()
        offset: Any = None
        while True:
            request = edge.ScrollRequest(offset=offset, limit=5000, with_payload=False)
            records, offset = self.shard.scroll(request)
            found.update(uuid.UUID(str(r.id)) for r in records)
            if offset is None:
                return found

    def candidates(
        self,
        dense: list[float],
        sparse: qm.SparseVector | None,
        limit: int,
        flt: qm.Filter | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[Candidate]:
        """Top `limit` by cosine, or (with `sparse`) the dense and sparse lists, each filtered,
        fused by RRF in one query; per-hit scores from the hits' own vectors."""
        dense = unit(dense)
        condition = to_edge(flt)
        payload: Any = list(fields) if fields else True
        nearest = edge.Query.Nearest(dense, using=DENSE)
        if sparse is None or not sparse.indices:
            found = self.shard.query(
                edge.QueryRequest(
                    limit=limit, query=nearest, filter=condition, with_payload=payload
                )
            )
            return in_order(
                Candidate(uuid.UUID(str(p.id)), dict(p.payload or {}), p.score, p.score, None)
                for p in found
            )
        lexical = edge.SparseVector(list(sparse.indices), list(sparse.values))
        request = edge.QueryRequest(
            limit=limit,
            prefetches=[
                edge.Prefetch(limit=limit, query=nearest, filter=condition),
                edge.Prefetch(
                    limit=limit, query=edge.Query.Nearest(lexical, using=SPARSE), filter=condition
                ),
            ],
            query=edge.Fusion.Rrf(k=RRF_K),  # type: ignore[arg-type]  # the stub omits it
            filter=condition,
            with_payload=payload,
            with_vector=[SPARSE],
        )
        found = self.shard.query(request)
        cosines = self._cosines(nearest, [p.id for p in found])
        return in_order(
            Candidate(
                uuid.UUID(str(p.id)),
                dict(p.payload or {}),
                p.score,
                cosines.get(str(p.id)),
                sparse_score(sparse, _vectors(p.vector).get(SPARSE)),
            )
            for p in found
        )

    def _cosines(self, nearest: Any, ids: Sequence[Any]) -> dict[str, float]:
        """The fused hits' cosines, scored by Edge on these points alone (exact): returning
        their dense vectors instead (50 x 1536 floats made Python floats, then numpy arrays)
        was most of a hybrid search's time at 100,000 points (docs/benchmarks.md)."""
        if not ids:
            return {}
        request = edge.QueryRequest(
            limit=len(ids),
            query=nearest,
            filter=edge.Filter(must=[edge.HasIdCondition({str(i) for i in ids})]),
            with_payload=False,
            params=edge.SearchParams(exact=True),
        )
        return {str(p.id): p.score for p in self.shard.query(request)}

    def missing_sparse(self) -> int | None:
        flt = edge.Filter(must_not=[edge.HasVectorCondition(SPARSE)])
        return self.shard.count(edge.CountRequest(exact=True, filter=flt))

    def count(self) -> int:
        return self.shard.count(edge.CountRequest(exact=True))

    def build(self) -> None:
        """Build the HNSW index of a shard of `BUILD_THRESHOLD` points or more (it holds the
        GIL for seconds: call it off the request path); smaller shards stay brute force."""
        if self.count() >= BUILD_THRESHOLD:
            self.shard.optimize()

    def close(self) -> None:
        if self._shard is not None:
            self._shard = None
            _release(self.folder)
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)


def _vectors(vector: Any) -> dict[str, Any]:
    return vector if isinstance(vector, dict) else {DENSE: vector}


def _point(point: Point) -> edge.Point:
    vectors: dict[str, Any] = {DENSE: unit(point.vector)}
    if point.sparse is not None and point.sparse.indices:
        vectors[SPARSE] = edge.SparseVector(list(point.sparse.indices), list(point.sparse.values))
    return edge.Point(str(point.id), vectors, point.payload)
