"""The index port on Qdrant Edge: the Qdrant engine in-process (Rust, `qdrant-edge-py`, pinned
exactly: beta, its API and on-disk format change between releases), on a local folder
(`QDRANT_PATH`), one shard folder per collection. The embedded default.

Each shard holds a dense vector `dense` (dot product over unit vectors: cosine) and a sparse
vector `sparse` with IDF, payload indexes for the search filters, UUID point ids; an upsert is
durable when it returns (flushed). Edge is safe across threads but locks a folder to one
process: a second process gets `StoreLockedError`. It has no background optimizer: segments
are searched brute force until their HNSW index is built: by `build()` in this process
(`ingest run`, at its end), or by `build_aside()` in a child process on a copy swapped in when
done (`ingest serve`: `edge_build`). A shard is opened once per process and shared by every
index object on it (a `ShardHolder`, counted), and closed when the last one closes.
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

from shared.adapters import edge_build, edge_migrate
from shared.adapters.edge_build import BUILD_THRESHOLD, REBUILD_STEP, ShardHolder
from shared.adapters.edge_filters import to_edge
from shared.adapters.index import (
    DENSE,
    PAYLOAD_INDEXES,
    RRF_K,
    SPARSE,
    Candidate,
    Filter,
    PayloadSchema,
    Point,
    SparseVector,
    batches,
    in_order,
    sparse_score,
    unit,
)
from shared.errors import StoreError, StoreLockedError

_SCHEMAS = {
    PayloadSchema.KEYWORD: edge.PayloadSchemaType.Keyword,
    PayloadSchema.DATETIME: edge.PayloadSchemaType.Datetime,
    PayloadSchema.BOOL: edge.PayloadSchemaType.Bool,
}
_shards: dict[Path, ShardHolder] = {}
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


def _load(folder: Path) -> edge.EdgeShard:
    return edge.EdgeShard.load(str(folder))


def _acquire(folder: Path, dimensions: int) -> ShardHolder:
    """The process's shard on `folder` (created with our layout when new), one user more."""
    with _shards_lock:
        if folder in _shards:
            _shards[folder].users += 1
            return _shards[folder]
        try:
            edge_build.restore(folder)
            if (folder / "edge_config.json").exists() or (folder / "wal").exists():
                shard = _load(folder)
            else:
                shard = edge.EdgeShard.create(str(folder), _config(dimensions))
                for field, schema in PAYLOAD_INDEXES.items():
                    shard.update(edge.UpdateOperation.create_field_index(field, _SCHEMAS[schema]))
                shard.flush()
        except Exception as exc:  # qdrant_edge raises plain Exception
            raise _locked(folder, exc) from exc
        edge_build.tidy(folder)
        _shards[folder] = ShardHolder(folder, shard)
        return _shards[folder]


def _release(folder: Path) -> None:
    with _shards_lock:
        holder = _shards.get(folder)
        if holder is None:
            return
        holder.users -= 1
        if holder.users == 0:
            del _shards[folder]
            edge_build.cancel(holder)
            with holder.write_lock, holder.read_lock:
                holder.shard.close()


@atexit.register
def _cancel_builds() -> None:
    """No child build outlives this process (nor its copy of a folder)."""
    for holder in list(_shards.values()):
        edge_build.cancel(holder)


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

    def __init__(
        self,
        root: Path,
        collection: str,
        dimensions: int,
        owns_root: bool = False,
        build_at: tuple[int, int] = (BUILD_THRESHOLD, REBUILD_STEP),
    ):
        self.root = root
        self.build_at = build_at  # EDGE_BUILD_THRESHOLD, EDGE_REBUILD_STEP
        self.collection = collection
        self.dimensions = dimensions
        self.folder = root / collection
        self._owns_root = owns_root  # a temporary folder, removed on close
        self._holder: ShardHolder | None = None
        self._open_lock = threading.Lock()

    @classmethod
    def open(
        cls,
        path: str,
        collection: str,
        dimensions: int,
        build_at: tuple[int, int] = (BUILD_THRESHOLD, REBUILD_STEP),
    ) -> EdgeIndex:
        """The index of `collection` under `path`; a folder qdrant-client's local mode wrote
        is converted first (`edge_migrate`). `build_at`: when its HNSW index is built (points
        in all, then points waiting unbuilt: EDGE_BUILD_THRESHOLD, EDGE_REBUILD_STEP)."""
        if path == ":memory:":
            return cls(_memory(), collection, dimensions, build_at=build_at)
        root = Path(path)
        if edge_migrate.is_local_mode(root):
            edge_migrate.migrate(root, cls)
        return cls(root, collection, dimensions, build_at=build_at)

    @classmethod
    def temporary(cls, collection: str, dimensions: int) -> EdgeIndex:
        """A throwaway index in a temporary folder removed on close (`ingest eval`)."""
        return cls(Path(tempfile.mkdtemp(prefix="ingest-edge-")), collection, dimensions, True)

    def sibling(self, collection: str, dimensions: int | None = None) -> EdgeIndex:
        return EdgeIndex(
            self.root, collection, dimensions or self.dimensions, build_at=self.build_at
        )

    @property
    def holder(self) -> ShardHolder:
        if self._holder is None:
            with self._open_lock:
                if self._holder is None:
                    self.root.mkdir(parents=True, exist_ok=True)
                    self._holder = _acquire(self.folder, self.dimensions)
        return self._holder

    @property
    def shard(self) -> edge.EdgeShard:
        """The shard now (a swap replaces it: hold `holder.reading()` across calls)."""
        return self.holder.shard

    def exists(self) -> bool:
        return self._holder is not None or self.folder.exists()

    def ensure_collection(self) -> None:
        self.holder  # noqa: B018 (opened or created)

    def _update(
        self, operations: Iterable[Any], ids: Iterable[str] = (), document: str | None = None
    ) -> None:
        """Apply the operations and flush (durable when it returns); a build in a child process
        notes what they touched (`ids`, or every point of `document`) to replay at its swap."""
        with self.holder.writing(ids, document) as shard:
            try:
                for operation in operations:
                    shard.update(operation)
                shard.flush()
            except Exception as exc:
                raise StoreError(f"The index {self.collection} refused an update: {exc}") from exc

    def existing_vectors(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[float]]:
        found: dict[uuid.UUID, list[float]] = {}
        for batch in batches(ids, 1000):
            with self.holder.reading() as shard:
                stored = shard.retrieve([str(i) for i in batch], False, [DENSE])
            for r in stored:
                found[uuid.UUID(str(r.id))] = list(_vectors(r.vector)[DENSE])
        return found

    def retrieve(self, ids: Sequence[uuid.UUID]) -> list[Point]:
        found = []
        for batch in batches(ids, 1000):
            with self.holder.reading() as shard:
                records = shard.retrieve([str(i) for i in batch], True, True)
            for r in records:
                vectors = _vectors(r.vector)
                stored = vectors.get(SPARSE)
                sparse = (
                    SparseVector(list(stored.indices), list(stored.values))
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
        operations = (
            edge.UpdateOperation.upsert_points([_point(p) for p in batch])
            for batch in batches(points, batch_size)
        )
        self._update(operations, [str(p.id) for p in points])

    def delete(self, ids: Iterable[uuid.UUID]) -> None:
        keys = [str(i) for i in ids]
        if not keys:
            return
        operations = [edge.UpdateOperation.delete_points(list(b)) for b in batches(keys, 1000)]
        self._update(operations, keys)

    def delete_document(self, document_id: uuid.UUID) -> None:
        match = edge.FieldCondition("document_id", match=edge.MatchValue(str(document_id)))
        operation = edge.UpdateOperation.delete_points_by_filter(edge.Filter(must=[match]))
        self._update([operation], document=str(document_id))

    def set_hidden(self, ids: Sequence[uuid.UUID], hidden: bool) -> None:
        self.set_fields(ids, {"hidden": hidden})

    def set_fields(self, ids: Sequence[uuid.UUID], fields: dict[str, Any]) -> None:
        """Overwrite these fields of the stored points among `ids` (selected by a filter: a
        point deleted meanwhile is skipped)."""
        keys = [str(i) for i in ids]
        if not keys:
            return
        operations = [
            edge.UpdateOperation.set_payload_by_filter(
                edge.Filter(must=[edge.HasIdCondition(set(batch))]), fields
            )
            for batch in batches(keys, 1000)
        ]
        self._update(operations, keys)

    def overwrite_payloads(self, payloads: dict[uuid.UUID, dict[str, Any]]) -> None:
        if not payloads:
            return
        operations = [
            edge.UpdateOperation.overwrite_payload_by_filter(
                edge.Filter(must=[edge.HasIdCondition({str(point)})]), payload
            )
            for point, payload in payloads.items()
        ]
        self._update(operations, [str(p) for p in payloads])

    def payload_pages(
        self, exclude: Sequence[str] = (), limit: int = 1000
    ) -> Iterator[list[tuple[uuid.UUID, dict[str, Any]]]]:
        selector: Any = edge.PayloadSelector.Exclude(list(exclude)) if exclude else True
        offset: Any = None
        while True:
            request = edge.ScrollRequest(offset=offset, limit=limit, with_payload=selector)
            with self.holder.reading() as shard:
                records, offset = shard.scroll(request)
            yield [(uuid.UUID(str(r.id)), dict(r.payload or {})) for r in records]
            if offset is None:
                return

    def all_point_ids(self) -> set[uuid.UUID]:
        found: set[uuid.UUID] = set()
        offset: Any = None
        while True:
            request = edge.ScrollRequest(offset=offset, limit=5000, with_payload=False)
            with self.holder.reading() as shard:
                records, offset = shard.scroll(request)
            found.update(uuid.UUID(str(r.id)) for r in records)
            if offset is None:
                return found

    def candidates(
        self,
        dense: list[float],
        sparse: SparseVector | None,
        limit: int,
        flt: Filter | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[Candidate]:
        """Top `limit` by cosine, or (with `sparse`) the dense and sparse lists, each filtered,
        fused by RRF in one query; per-hit scores from the hits' own vectors."""
        dense = unit(dense)
        condition = to_edge(flt)
        payload: Any = list(fields) if fields else True
        nearest = edge.Query.Nearest(dense, using=DENSE)
        if sparse is None or not sparse.indices:
            request = edge.QueryRequest(
                limit=limit, query=nearest, filter=condition, with_payload=payload
            )
            with self.holder.reading() as shard:
                found = shard.query(request)
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
        with self.holder.reading() as shard:
            found = shard.query(request)
            cosines = self._cosines(shard, nearest, [p.id for p in found])
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

    @staticmethod
    def _cosines(shard: edge.EdgeShard, nearest: Any, ids: Sequence[Any]) -> dict[str, float]:
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
        return {str(p.id): p.score for p in shard.query(request)}

    def missing_sparse(self) -> int | None:
        flt = edge.Filter(must_not=[edge.HasVectorCondition(SPARSE)])
        with self.holder.reading() as shard:
            return shard.count(edge.CountRequest(exact=True, filter=flt))

    def count(self) -> int:
        with self.holder.reading() as shard:
            return shard.count(edge.CountRequest(exact=True))

    def build(self) -> None:
        """Build the HNSW index of a shard of EDGE_BUILD_THRESHOLD points or more, in this
        process (it holds the GIL throughout: minutes at 100,000 points; `ingest run` calls it
        at its end); smaller shards stay brute force."""
        if self.count() >= self.build_at[0]:
            with self.holder.write_lock, self.holder.read_lock:
                self.holder.shard.optimize()

    def build_state(self) -> tuple[int, bool] | None:
        with self.holder.reading() as shard:
            return edge_build.unbuilt(shard), self.holder.build is not None

    def build_aside(self) -> None:
        """Start a build in a child process when one is due, swap a finished one in; returns
        at once otherwise (`ingest serve`'s runner calls it every round: `edge_build`)."""
        edge_build.step(self.holder, _load, *self.build_at)

    def close(self) -> None:
        if self._holder is not None:
            self._holder = None
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
