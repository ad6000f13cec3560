"""The vector index port: what the pipeline, retrieval and the CLI ask of the index, with two
adapters behind it (issue 30): a Qdrant server through qdrant-client (`QDRANT_URL`,
production: `shared.adapters.qdrant`) and Qdrant Edge, the engine in-process on a local
folder (`QDRANT_PATH`, the embedded default: `shared.adapters.qdrant_edge`).

Filters and sparse vectors are the port's own small types below (frozen dataclasses: only
what `shared.retrieval.filters` and the pipeline build); each adapter translates them to its
engine's (qdrant-client's `models` on a server, `qdrant_edge`'s on Edge). The embedded path
then never imports qdrant-client (1.2 s of pydantic models at start-up: docs/benchmarks.md).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

import numpy as np

from shared.settings import Settings


class PayloadSchema(StrEnum):
    """A payload index's type (the values are Qdrant's schema names)."""

    KEYWORD = "keyword"
    DATETIME = "datetime"
    BOOL = "bool"


PAYLOAD_INDEXES = {
    "document_id": PayloadSchema.KEYWORD,
    "source": PayloadSchema.KEYWORD,
    "tags": PayloadSchema.KEYWORD,
    "language": PayloadSchema.KEYWORD,
    "external_id": PayloadSchema.KEYWORD,
    "heading_paths": PayloadSchema.KEYWORD,  # search filter: a chapter or section
    "updated_at": PayloadSchema.DATETIME,  # search filter: updated_since
    "hidden": PayloadSchema.BOOL,  # every search leaves hidden points out
}
DENSE = "dense"
SPARSE = "sparse"
#: Reciprocal rank fusion's constant: Qdrant's default (server and qdrant-client), set
#: explicitly on Edge so both adapters fuse alike.
RRF_K = 2


@dataclass(frozen=True)
class SparseVector:
    """Term ids and their weights (the lexical vector of a chunk or a query)."""

    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class MatchValue:
    value: str | bool


@dataclass(frozen=True)
class MatchAny:
    any: tuple[str, ...]


@dataclass(frozen=True)
class DatetimeRange:
    gte: datetime


@dataclass(frozen=True)
class FieldCondition:
    """A payload field's value: one `match` or one `range`."""

    key: str
    match: MatchValue | MatchAny | None = None
    range: DatetimeRange | None = None


@dataclass(frozen=True)
class HasIdCondition:
    has_id: tuple[str, ...]


@dataclass(frozen=True)
class HasVectorCondition:
    has_vector: str


@dataclass(frozen=True)
class Filter:
    """All of `must`, at least one of `should` (when given), none of `must_not`."""

    must: tuple[Condition, ...] = ()
    should: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()


Condition = FieldCondition | HasIdCondition | HasVectorCondition | Filter


def collection_name(model: str, dimensions: int) -> str:
    """`chunks_<model>_<dimensions>`: a new model or size never mixes with the old vectors."""
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")
    return f"chunks_{slug}_{dimensions}"


@dataclass(frozen=True)
class Point:
    id: uuid.UUID
    vector: list[float]
    payload: dict[str, Any]
    sparse: SparseVector | None = None


@dataclass(frozen=True)
class Candidate:
    """One point found by a search: fused score, its cosine (`dense`) and its sparse term
    score (`sparse`: None in a dense-only search or when it shares no term with the query)."""

    id: uuid.UUID
    payload: dict[str, Any]
    score: float
    dense: float | None
    sparse: float | None


class VectorIndex(Protocol):
    """The index of one collection (one embedding model and size)."""

    collection: str
    dimensions: int
    has_sparse: bool  # False: an older dense-only collection (server adapter only)

    def sibling(self, collection: str, dimensions: int | None = None) -> VectorIndex:
        """Another collection on the same store (`ingest reindex`'s target)."""
        ...

    def exists(self) -> bool: ...

    def ensure_collection(self) -> None: ...

    def existing_vectors(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[float]]: ...

    def retrieve(self, ids: Sequence[uuid.UUID]) -> list[Point]:
        """The stored points among `ids`, with vectors and payloads (tests, verify)."""
        ...

    def upsert(self, points: Sequence[Point], batch_size: int = 256) -> None:
        """Durable once it returns."""
        ...

    def delete(self, ids: Iterable[uuid.UUID]) -> None: ...

    def delete_document(self, document_id: uuid.UUID) -> None: ...

    def set_hidden(self, ids: Sequence[uuid.UUID], hidden: bool) -> None: ...

    def set_fields(self, ids: Sequence[uuid.UUID], fields: dict[str, Any]) -> None:
        """Overwrite these payload fields of the stored points among `ids` (others stay)."""
        ...

    def overwrite_payloads(self, payloads: dict[uuid.UUID, dict[str, Any]]) -> None: ...

    def payload_pages(
        self, exclude: Sequence[str] = (), limit: int = 1000
    ) -> Iterator[list[tuple[uuid.UUID, dict[str, Any]]]]: ...

    def all_point_ids(self) -> set[uuid.UUID]: ...

    def candidates(
        self,
        dense: list[float],
        sparse: SparseVector | None,
        limit: int,
        flt: Filter | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[Candidate]:
        """Top `limit` by cosine, or dense and sparse lists fused by RRF (with `sparse`),
        each hit with its own cosine and sparse term score."""
        ...

    def missing_sparse(self) -> int | None: ...

    def count(self) -> int: ...

    def build(self) -> None:
        """Make searches fast now (Edge builds its HNSW index when worth it; a server does
        that itself). Call it off the request path: it may take seconds."""
        ...

    def build_state(self) -> tuple[int, bool] | None:
        """Points searched brute force until the next build, and whether a build runs now;
        None where the store builds its index itself (a server)."""
        ...

    def build_aside(self) -> None:
        """Like `build()`, without stopping this process: start a build elsewhere when one is
        due, take a finished one in; returns at once (`ingest serve`'s runner, every round)."""
        ...

    def close(self) -> None: ...


def open_index(settings: Settings, collection: str, dimensions: int) -> VectorIndex:
    """The server adapter with `QDRANT_URL`, else Qdrant Edge at `QDRANT_PATH` (one shard
    folder per collection; ":memory:": a temporary folder removed at exit)."""
    if settings.qdrant_url:
        from shared.adapters.qdrant import QdrantServerIndex

        return QdrantServerIndex.from_settings(settings, collection, dimensions)
    from shared.adapters.qdrant_edge import EdgeIndex

    return EdgeIndex.open(
        settings.qdrant_path,
        collection,
        dimensions,
        build_at=(settings.edge_build_threshold, settings.edge_rebuild_step),
    )


def unit(vector: Sequence[float]) -> list[float]:
    """The vector at unit length (stored and queried so: dot product = cosine)."""
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return (array / norm).tolist() if norm > 0 else list(vector)


def dense_score(query: np.ndarray, vector: Any, query_norm: Any = None) -> float | None:
    """Cosine of the query and a hit's dense vector: the score Qdrant's dense list gives.
    `query_norm`: `np.linalg.norm(query)`, when the caller has it already."""
    if vector is None:
        return None
    stored = np.asarray(vector, dtype=np.float32)
    if query_norm is None:
        query_norm = np.linalg.norm(query)
    norms = float(query_norm * np.linalg.norm(stored))
    return float(np.dot(query, stored) / norms) if norms else 0.0


def sparse_score(query: SparseVector, stored: Any) -> float | None:
    """Dot product of the query's and a hit's sparse vectors (the BM25 term-frequency part:
    without the IDF Qdrant multiplies in when it ranks the sparse list, which lives only in
    Qdrant); None when they share no term, as the sparse list would not have found it.
    `stored`: anything with `indices` and `values` (ours, qdrant-client's or Edge's)."""
    if stored is None:
        return None
    weights = dict(zip(stored.indices, stored.values, strict=True))
    pairs = zip(query.indices, query.values, strict=True)
    shared = [weight * weights[index] for index, weight in pairs if index in weights]
    return float(sum(shared)) if shared else None


def scored(
    dense: list[float], sparse: SparseVector, hits: Sequence[tuple[Any, Any, float, Any, Any]]
) -> list[Candidate]:
    """Candidates from fused hits `(id, payload, score, dense vector, sparse vector)`, equal
    fused scores in the dense list's order (`in_order`)."""
    query = np.asarray(dense, dtype=np.float32)
    query_norm = np.linalg.norm(query)  # once, not once per hit
    return in_order(
        Candidate(
            uuid.UUID(str(point)),
            payload or {},
            score,
            dense_score(query, stored_dense, query_norm),
            sparse_score(sparse, stored_sparse),
        )
        for point, payload, score, stored_dense, stored_sparse in hits
    )


def in_order(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Best first; equal scores by cosine, then by id. RRF gives many equal scores (rank 1 in
    one list and 3 in the other, or the other way round); Qdrant Edge returns such ties in an
    order that changes from process to process (two `ingest eval` runs: MRR .788 and .795), so
    they are ordered here, as the dense list ranks them (local mode's own tie order)."""
    return sorted(candidates, key=lambda c: (-c.score, -(c.dense or -2.0), str(c.id)))


def batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
