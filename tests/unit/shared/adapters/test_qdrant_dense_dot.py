"""Server adapter: new collections rank dense vectors by dot product over unit vectors (cosine's
scores); cosine collections of before keep working (qdrant-client local mode stands in for a
server)."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from shared.adapters.index import DENSE, SPARSE, Point, SparseVector
from shared.adapters.qdrant import QdrantServerIndex

DIMENSIONS = 16


def points(rng: np.random.Generator) -> list[Point]:
    """Vectors of very different lengths: only normalising makes dot product cosine."""
    return [
        Point(
            uuid.UUID(int=n + 1),
            (rng.standard_normal(DIMENSIONS) * rng.uniform(0.1, 30)).tolist(),
            {"n": n},
            SparseVector([n % 7, 7 + n % 5], [1.0, 0.5]),
        )
        for n in range(60)
    ]


def cosine_collection(client: QdrantClient, name: str) -> None:
    """The layout collections had before: cosine distance, sparse vector with IDF."""
    client.create_collection(
        name,
        vectors_config={DENSE: qm.VectorParams(size=DIMENSIONS, distance=qm.Distance.COSINE)},
        sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
    )


def test_a_new_collection_stores_unit_vectors_and_ranks_by_cosine() -> None:
    rng = np.random.default_rng(3)
    client = QdrantClient(location=":memory:")
    index = QdrantServerIndex(client, "new", DIMENSIONS)
    stored = points(rng)
    index.upsert(stored)
    params = client.get_collection("new").config.params.vectors[DENSE]  # type: ignore[index]
    assert params.distance == qm.Distance.DOT
    kept = index.existing_vectors([p.id for p in stored])
    assert all(abs(np.linalg.norm(v) - 1) < 1e-6 for v in kept.values())

    query = (rng.standard_normal(DIMENSIONS) * 7).tolist()
    found = index.candidates(query, None, 10)
    matrix = np.array([p.vector for p in stored])
    cosines = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))
    best = np.argsort(-cosines)[:10]
    assert [c.id for c in found] == [stored[i].id for i in best]
    assert [c.score for c in found] == pytest.approx(cosines[best].tolist(), abs=1e-5)


def test_a_cosine_collection_of_before_gives_the_same_hits() -> None:
    rng = np.random.default_rng(4)
    client = QdrantClient(location=":memory:")
    cosine_collection(client, "old")
    old = QdrantServerIndex(client, "old", DIMENSIONS)
    new = QdrantServerIndex(client, "new", DIMENSIONS)
    stored = points(rng)
    old.upsert(stored)
    new.upsert(stored)
    assert not old.normalise and new.normalise
    for _ in range(5):
        query = rng.standard_normal(DIMENSIONS).tolist()
        sparse = SparseVector([1, 8], [1.0, 1.0])
        for terms in (None, sparse):
            a, b = old.candidates(query, terms, 10), new.candidates(query, terms, 10)
            assert [c.id for c in a] == [c.id for c in b]
            assert [c.dense for c in a] == pytest.approx([c.dense for c in b], abs=1e-5)
