"""The index port's contract, run on both adapters: the Qdrant-server adapter (qdrant-client's
local mode stands in for a server: the same client API) and the Qdrant-Edge adapter on a
folder. Every operation the pipeline and retrieval use, every filter kind `SearchFilters`
builds, fusion order and the per-hit scores."""

from __future__ import annotations

import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from shared.adapters.index import Filter, Point, SparseVector, VectorIndex, unit
from shared.adapters.qdrant import QdrantServerIndex
from shared.adapters.qdrant_edge import EdgeIndex
from shared.errors import StoreError, StoreLockedError
from shared.retrieval.filters import SearchFilters

DIMENSIONS = 8


@pytest.fixture(params=["server", "edge"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorIndex]:
    made: VectorIndex
    if request.param == "server":
        made = QdrantServerIndex(QdrantClient(location=":memory:"), "c", DIMENSIONS)
    else:
        made = EdgeIndex.open(str(tmp_path / "edge"), "c", DIMENSIONS)
    made.ensure_collection()
    yield made
    made.close()


def doc(n: int) -> uuid.UUID:
    return uuid.UUID(int=1000 + n)


def make_points(count: int = 40, seed: int = 1) -> list[Point]:
    """Points of five documents; term n % 6 and a shared term 9; tags, dates, headings."""
    rng = np.random.default_rng(seed)
    found = []
    for n in range(count):
        payload = {
            "document_id": str(doc(n % 5)),
            "external_id": f"page-{n % 5}",
            "source": "cms" if n % 2 else "upload",
            "tags": ["a", "b"] if n % 3 == 0 else ["c"],
            "language": "nl",
            "heading_paths": ["Knie", "Knie > Duur"] if n % 4 == 0 else ["Heup"],
            "updated_at": f"2024-0{1 + n % 5}-01T00:00:00+00:00",
            "hidden": n % 10 == 7,
            "n": n,
        }
        sparse = SparseVector([n % 6, 9], [1.0 + n % 3, 0.5])
        found.append(
            Point(uuid.UUID(int=n + 1), rng.standard_normal(DIMENSIONS).tolist(), payload, sparse)
        )
    return found


def ids(points: list[Point]) -> set[uuid.UUID]:
    return {p.id for p in points}


def cosines(points: list[Point], query: list[float]) -> np.ndarray:
    matrix = np.array([p.vector for p in points])
    return matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))


def test_upsert_count_retrieve_and_existing_vectors(index: VectorIndex) -> None:
    points = make_points()
    index.upsert(points)
    index.upsert(points[:5])  # again: overwritten, not doubled
    assert index.count() == 40 and index.all_point_ids() == ids(points)
    assert index.missing_sparse() == 0
    got = {p.id: p for p in index.retrieve([points[0].id, uuid.UUID(int=999)])}
    assert set(got) == {points[0].id}
    assert got[points[0].id].payload == points[0].payload
    assert got[points[0].id].vector == pytest.approx(unit(points[0].vector), abs=1e-6)
    sparse = got[points[0].id].sparse
    assert sparse is not None and sorted(sparse.indices) == [0, 9]
    vectors = index.existing_vectors([points[1].id, uuid.UUID(int=999)])
    assert list(vectors) == [points[1].id]
    assert vectors[points[1].id] == pytest.approx(unit(points[1].vector), abs=1e-6)


def test_a_point_without_sparse_is_counted(index: VectorIndex) -> None:
    points = make_points(4)
    index.upsert([*points[:3], Point(points[3].id, points[3].vector, points[3].payload)])
    assert index.missing_sparse() == 1


def test_delete_and_delete_document(index: VectorIndex) -> None:
    points = make_points()
    index.upsert(points)
    index.delete([points[0].id, points[1].id, uuid.UUID(int=999)])
    assert index.count() == 38
    index.delete_document(doc(2))
    left = ids(points) - {points[0].id, points[1].id}
    left -= {p.id for p in points if p.payload["document_id"] == str(doc(2))}
    assert index.all_point_ids() == left


def test_payload_writes(index: VectorIndex) -> None:
    points = make_points(6)
    index.upsert(points)
    missing = uuid.UUID(int=999)
    index.set_hidden([points[0].id, missing], True)
    index.set_fields([points[1].id, missing], {"title": "T", "tags": ["z"]})
    index.overwrite_payloads({points[2].id: {"document_id": "x"}})
    assert index.count() == 6  # a missing id is skipped, not made
    got = {p.id: p.payload for p in index.retrieve([p.id for p in points[:3]])}
    assert got[points[0].id]["hidden"] is True
    assert got[points[1].id] == {**points[1].payload, "title": "T", "tags": ["z"]}
    assert got[points[2].id] == {"document_id": "x"}
    pages = list(index.payload_pages(exclude=["text", "n", "tags"], limit=4))
    assert [len(page) for page in pages][:2] == [4, 2]
    seen = {point: payload for page in pages for point, payload in page}
    assert set(seen) == ids(points) and all("n" not in p for p in seen.values())


def test_dense_candidates_rank_by_cosine(index: VectorIndex) -> None:
    points = make_points()
    index.upsert(points)
    query = np.random.default_rng(5).standard_normal(DIMENSIONS).tolist()
    found = index.candidates([x * 3 for x in query], None, 10, fields=["n"])
    expected = cosines(points, query)
    best = np.argsort(-expected)[:10]
    assert [c.id for c in found] == [points[i].id for i in best]
    assert [c.dense for c in found] == pytest.approx(expected[best].tolist(), abs=1e-5)
    assert all(c.sparse is None and set(c.payload) == {"n"} for c in found)


def test_hybrid_candidates_fuse_by_rrf_with_per_hit_scores(index: VectorIndex) -> None:
    points = make_points()
    index.upsert(points)
    query = np.random.default_rng(6).standard_normal(DIMENSIONS).tolist()
    sparse = SparseVector([2], [1.0])
    found = index.candidates(query, sparse, 10)
    dense_rank = [points[i].id for i in np.argsort(-cosines(points, query))[:10]]
    lexical = [p for p in points if p.payload["n"] % 6 == 2]
    assert {c.id for c in found} <= set(dense_rank) | ids(lexical)
    assert found[0].score == pytest.approx(max(c.score for c in found))
    for c in found:  # RRF with k=2: 1 / (rank + 2) from each list it is in
        assert c.score <= 1 / 2 + 1 / 2
    expected = dict(zip([p.id for p in points], cosines(points, query), strict=True))
    by_id = {p.id: p for p in points}
    for c in found:
        assert c.dense == pytest.approx(float(expected[c.id]), abs=1e-5)
        stored = by_id[c.id].sparse
        assert stored is not None
        assert c.sparse == (1.0 + c.payload["n"] % 3 if 2 in stored.indices else None)
    # equal fused scores (common in RRF) in the dense list's order: the same every run
    assert found == sorted(found, key=lambda c: (-c.score, -(c.dense or -2.0)))
    both = [c for c in found if c.id in dense_rank[:3] and c.sparse is not None]
    if both:  # in both lists: ranked above any point of one list at the same ranks
        assert found.index(both[0]) < len(found)


@pytest.mark.parametrize(
    ("filters", "hidden_points", "wanted"),
    [
        (SearchFilters(), False, lambda p: not p["hidden"]),
        (SearchFilters(), True, lambda p: not p["hidden"] and p["n"] != 0),
        (
            SearchFilters(document_ids=(str(doc(1)), "page-3")),
            False,
            lambda p: not p["hidden"] and p["external_id"] in ("page-1", "page-3"),
        ),
        (SearchFilters(tags=("b", "x")), False, lambda p: not p["hidden"] and "b" in p["tags"]),
        (
            SearchFilters(heading_prefix="Knie >Duur", source="upload", language="nl"),
            False,
            lambda p: not p["hidden"] and p["n"] % 4 == 0 and p["source"] == "upload",
        ),
        (
            SearchFilters(updated_since=datetime(2024, 3, 1, tzinfo=UTC)),
            False,
            lambda p: not p["hidden"] and p["n"] % 5 >= 2,
        ),
    ],
)
def test_every_filter_kind(
    index: VectorIndex, filters: SearchFilters, hidden_points: bool, wanted: object
) -> None:
    points = make_points()
    index.upsert(points)
    hidden_docs = [doc(4)]
    flt = filters.to_filter(hidden_docs, [points[0].id] if hidden_points else [])
    expected = {
        p.id
        for p in points
        if wanted(p.payload) and p.payload["document_id"] != str(doc(4))  # type: ignore[operator]
    }
    query = [1.0] * DIMENSIONS
    dense = {c.id for c in index.candidates(query, None, 100, flt)}
    hybrid = {c.id for c in index.candidates(query, SparseVector([9], [1.0]), 100, flt)}
    assert expected and dense == expected and hybrid == expected


def test_a_sibling_is_another_collection_on_the_same_store(index: VectorIndex) -> None:
    index.upsert(make_points(3))
    other = index.sibling("other")
    try:
        assert not other.exists()
        other.upsert(make_points(2, seed=3))
        assert other.exists() and other.count() == 2 and index.count() == 3
    finally:
        other.close()


def test_build_keeps_the_results(index: VectorIndex) -> None:
    points = make_points()
    index.upsert(points)
    query = [0.5, -1.0] * (DIMENSIONS // 2)
    sparse = SparseVector([1], [1.0])
    dense, hybrid = index.candidates(query, None, 10), index.candidates(query, sparse, 10)
    index.build()
    assert index.candidates(query, None, 10) == dense
    # the sparse list ties (equal term weights): the fused scores are the same, not the order
    again = index.candidates(query, sparse, 10)
    assert [c.score for c in again] == pytest.approx([c.score for c in hybrid])


def assert_reopens_with_the_points_and_the_hide(folder: Path) -> None:
    """The folder opened again holds the 40 points, the first of them hidden."""
    index = EdgeIndex.open(str(folder), "c", DIMENSIONS)
    try:
        assert index.count() == 40
        assert index.retrieve([uuid.UUID(int=1)])[0].payload["hidden"] is True
    finally:
        index.close()


def test_an_edge_folder_persists_across_close_and_reopen(tmp_path: Path) -> None:
    first = EdgeIndex.open(str(tmp_path), "c", DIMENSIONS)
    first.upsert(make_points())
    first.set_hidden([uuid.UUID(int=1)], True)
    first.close()
    assert_reopens_with_the_points_and_the_hide(tmp_path)


def test_an_upsert_is_durable_when_it_returns(tmp_path: Path) -> None:
    """A process killed right after an upsert returned (no close) loses nothing."""
    code = (
        "import os\n"
        "from shared.adapters.qdrant_edge import EdgeIndex\n"
        "from tests.unit.shared.adapters.test_index_contract import make_points\n"
        f"index = EdgeIndex.open({str(tmp_path)!r}, 'c', {DIMENSIONS})\n"
        "index.upsert(make_points())\n"
        "index.set_hidden([make_points()[0].id], True)\n"
        "os._exit(0)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert_reopens_with_the_points_and_the_hide(tmp_path)


def test_a_folder_another_process_holds_is_refused_with_both_ways_out(tmp_path: Path) -> None:
    held = EdgeIndex.open(str(tmp_path), "c", DIMENSIONS)
    held.upsert(make_points(2))
    code = (
        "from shared.adapters.qdrant_edge import EdgeIndex\n"
        "from shared.errors import StoreLockedError\n"
        f"index = EdgeIndex.open({str(tmp_path)!r}, 'c', {DIMENSIONS})\n"
        "try:\n    index.count()\nexcept StoreLockedError as exc:\n"
        "    print(exc.code, exc.message)\n"
    )
    try:
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
    finally:
        held.close()
    assert run.stdout.startswith("qdrant_locked "), run.stderr
    assert "QDRANT_URL" in run.stdout and "ingest serve" in run.stdout
    assert issubclass(StoreLockedError, Exception)


def test_two_index_objects_on_one_folder_share_the_shard(tmp_path: Path) -> None:
    a = EdgeIndex.open(str(tmp_path), "c", DIMENSIONS)
    b = EdgeIndex.open(str(tmp_path), "c", DIMENSIONS)
    a.upsert(make_points(3))
    assert b.count() == 3
    a.close()
    assert b.count() == 3  # still open for b
    b.close()


def test_a_filter_not_in_the_port_s_vocabulary_is_refused(index: VectorIndex) -> None:
    """Not filtered differently, nor silently ignored: qdrant-client's own models (the
    port's vocabulary before) are refused by both adapters."""
    index.upsert(make_points(3))
    text = qm.FieldCondition(key="text", match=qm.MatchText(text="knie"))
    for flt in (qm.Filter(must=[text]), Filter(must=(text,))):  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="not supported"):
            index.candidates([1.0] * DIMENSIONS, None, 3, flt)  # type: ignore[arg-type]


def test_a_server_that_cannot_be_reached_is_a_store_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = QdrantClient(url=f"http://127.0.0.1:{port}", timeout=2, check_compatibility=False)
    index = QdrantServerIndex(client, "c", DIMENSIONS)
    with pytest.raises(StoreError) as raised:
        index.count()
    assert raised.value.retryable and raised.value.code == "index_unavailable"


def test_every_payload_index_type_is_one_a_server_knows() -> None:
    """A server gets its payload indexes as qdrant-client's types (local mode, the tests'
    server, has none to check them against)."""
    from shared.adapters.index import PAYLOAD_INDEXES
    from shared.adapters.qdrant_filters import schema

    for kind in set(PAYLOAD_INDEXES.values()):
        assert schema(kind) == qm.PayloadSchemaType(kind.value)
        assert schema(kind).value == kind.value
