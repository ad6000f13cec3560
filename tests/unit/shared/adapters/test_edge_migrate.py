"""A folder qdrant-client's local mode wrote (the embedded store before Qdrant Edge) is
converted on first open: the same points, payloads and search results; the old folder kept
aside."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from shared.adapters.index import DENSE, SPARSE, unit
from shared.adapters.qdrant_edge import EdgeIndex

DIMENSIONS = 8


def local_mode_folder(path: Path) -> list[qm.PointStruct]:
    """Two collections as local mode made them: ours (named dense + sparse, dot product) and
    one of the older layout (one unnamed cosine vector)."""
    rng = np.random.default_rng(2)
    client = QdrantClient(path=str(path))
    client.create_collection(
        "chunks",
        vectors_config={DENSE: qm.VectorParams(size=DIMENSIONS, distance=qm.Distance.DOT)},
        sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
    )
    client.create_collection(
        "older", vectors_config=qm.VectorParams(size=DIMENSIONS, distance=qm.Distance.COSINE)
    )
    points = [
        qm.PointStruct(
            id=str(uuid.UUID(int=n + 1)),
            vector={
                DENSE: unit(rng.standard_normal(DIMENSIONS).tolist()),
                SPARSE: qm.SparseVector(indices=[n % 4], values=[1.0]),
            },
            payload={"document_id": f"d{n % 3}", "hidden": n == 5, "n": n},
        )
        for n in range(700)  # more than one page of the conversion
    ]
    client.upsert("chunks", points)
    older = rng.standard_normal(DIMENSIONS).tolist()
    client.upsert("older", [qm.PointStruct(id=str(uuid.UUID(int=1)), vector=older, payload={})])
    client.close()
    return points


def test_a_local_mode_folder_is_converted_on_first_open(tmp_path: Path) -> None:
    folder = tmp_path / "qdrant"
    points = local_mode_folder(folder)

    index = EdgeIndex.open(str(folder), "chunks", DIMENSIONS)
    try:
        assert index.count() == 700 and index.missing_sparse() == 0
        (first,) = index.retrieve([uuid.UUID(int=6)])
        assert first.payload == {"document_id": "d2", "hidden": True, "n": 5}
        assert first.vector == pytest.approx(points[5].vector[DENSE], abs=1e-6)  # type: ignore[index]
        assert first.sparse is not None and first.sparse.indices == [1]
        query = points[9].vector[DENSE]  # type: ignore[index]
        assert index.candidates(query, None, 1)[0].id == uuid.UUID(int=10)
        older = index.sibling("older")
        assert older.count() == 1 and older.missing_sparse() == 1
        older.close()
    finally:
        index.close()
    assert (tmp_path / "qdrant.local-mode-backup" / "meta.json").is_file()
    assert not (folder / "meta.json").exists()

    again = EdgeIndex.open(str(folder), "chunks", DIMENSIONS)  # nothing to convert now
    try:
        assert again.count() == 700
    finally:
        again.close()
