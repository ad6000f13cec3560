"""An embedded folder written by qdrant-client's local mode (the embedded store before issue
30: `meta.json` and `collection/` under `QDRANT_PATH`) converted to Qdrant Edge shards on first
open: each collection's points read with plain qdrant-client local mode, written into a shard
of the same name (dense vectors at unit length, sparse vectors kept), the old folder moved
aside to `<QDRANT_PATH>.local-mode-backup`. `ingest reindex` rebuilds from the record
otherwise."""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from shared.adapters.index import DENSE, SPARSE, Point, SparseVector
from shared.log import get_logger

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

log = get_logger(__name__)
_lock = threading.Lock()


def is_local_mode(root: Path) -> bool:
    return (root / "meta.json").is_file() and (root / "collection").is_dir()


class Target(Protocol):
    def upsert(self, points: Sequence[Point], batch_size: int = ...) -> None: ...

    def close(self) -> None: ...


def migrate(root: Path, shard: Callable[[Path, str, int], Target]) -> None:
    """Convert `root` if local mode wrote it; nothing otherwise. `shard(folder, collection,
    dimensions)` opens a new Edge index (the Edge adapter's; passed in: no import circle)."""
    with _lock:
        if not is_local_mode(root):
            return
        staging = root.with_name(root.name + ".edge-migrating")
        shutil.rmtree(staging, ignore_errors=True)  # a conversion killed halfway: again
        backup = root.with_name(root.name + ".local-mode-backup")
        from qdrant_client import QdrantClient  # only here: the Edge path never needs it

        client = QdrantClient(path=str(root))
        counts: dict[str, int] = {}
        try:
            for collection in client.get_collections().collections:
                params = client.get_collection(collection.name).config.params
                dimensions = _size(params.vectors)
                target = shard(staging, collection.name, dimensions)
                try:
                    counts[collection.name] = _copy(client, collection.name, target)
                finally:
                    target.close()
        finally:
            client.close()
        root.rename(backup)
        staging.rename(root)
        log.warning(
            "the local-mode index folder was converted to Qdrant Edge",
            path=str(root),
            points=counts,
            backup=str(backup),
        )


def _size(vectors: Any) -> int:
    params = vectors.get(DENSE) if isinstance(vectors, dict) else vectors
    assert params is not None, "a collection without a dense vector"
    return int(params.size)


def _copy(client: QdrantClient, collection: str, target: Target) -> int:
    from qdrant_client import models as qm

    offset = None
    copied = 0
    while True:
        records, offset = client.scroll(
            collection, limit=512, offset=offset, with_payload=True, with_vectors=True
        )
        points = []
        for r in records:
            vectors = r.vector if isinstance(r.vector, dict) else {DENSE: r.vector}
            sparse = vectors.get(SPARSE)
            dense = vectors.get(DENSE)
            points.append(
                Point(
                    uuid.UUID(str(r.id)),
                    list(dense),  # type: ignore[arg-type]
                    dict(r.payload or {}),
                    SparseVector(list(sparse.indices), list(sparse.values))
                    if isinstance(sparse, qm.SparseVector)
                    else None,
                )
            )
        target.upsert(points)  # at unit length, as the Edge adapter stores every vector
        copied += len(points)
        if offset is None:
            return copied
