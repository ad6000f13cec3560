"""Local mode's sparse scoring from postings gives exactly qdrant-client's own results."""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from qdrant_client import QdrantClient
from qdrant_client import models as qm
from qdrant_client.local import local_collection
from qdrant_client.local import qdrant_local as local_qdrant

from shared.adapters import qdrant_local, qdrant_patches
from shared.adapters.qdrant import DENSE, SPARSE, QdrantIndex, local_client

DIMENSIONS = 8
VOCABULARY = [random.Random(n).randrange(2**32) for n in range(60)]  # hashed-looking terms


def sparse(rng: random.Random, terms: int) -> qm.SparseVector:
    # a few common terms and many rare ones, like words: IDF matters
    chosen = {VOCABULARY[min(int(rng.paretovariate(0.7)) - 1, 59)] for _ in range(terms)}
    indices = sorted(chosen)
    return qm.SparseVector(indices=indices, values=[rng.uniform(0.1, 2.5) for _ in indices])


def point(rng: random.Random, n: int) -> qm.PointStruct:
    vectors: dict = {DENSE: [rng.gauss(0, 1) for _ in range(DIMENSIONS)]}
    if n % 7:  # every seventh point has no sparse vector: outside the IDF corpus
        vectors[SPARSE] = sparse(rng, rng.randint(1, 12))
    payload = {"document_id": f"d{n % 5}", "tags": [f"t{n % 3}"]}
    return qm.PointStruct(id=str(uuid.UUID(int=n + 1)), vector=vectors, payload=payload)


def make(client: QdrantClient, rng: random.Random) -> None:
    client.create_collection(
        "c",
        vectors_config={DENSE: qm.VectorParams(size=DIMENSIONS, distance=qm.Distance.DOT)},
        sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
    )
    client.upsert("c", [point(rng, n) for n in range(300)], wait=True)


def change(client: QdrantClient, rng: random.Random) -> None:
    """Deletes, overwrites and vector updates: the index must follow each."""
    client.delete("c", qm.PointIdsList(points=[str(uuid.UUID(int=n)) for n in range(1, 300, 9)]))
    d4 = qm.FieldCondition(key="document_id", match=qm.MatchValue(value="d4"))
    client.delete("c", qm.FilterSelector(filter=qm.Filter(must=[d4])))
    client.upsert("c", [point(rng, n) for n in range(0, 120, 4)], wait=True)  # overwrite + revive
    client.upsert("c", [point(rng, n) for n in range(300, 340)], wait=True)  # new points
    updates = [
        qm.PointVectors(id=str(uuid.UUID(int=n)), vector={SPARSE: sparse(rng, 5)}) for n in (3, 6)
    ]
    client.update_vectors("c", updates)
    client.delete_vectors("c", [SPARSE], qm.PointIdsList(points=[str(uuid.UUID(int=11))]))
    alive = [str(uuid.UUID(int=n)) for n in (*range(1, 120, 4), *range(301, 341))]
    client.set_payload("c", {"tags": ["t1"]}, qm.PointIdsList(points=alive[::3]))
    client.overwrite_payload("c", {"document_id": "d0"}, qm.PointIdsList(points=alive[1:9]))
    client.clear_payload("c", qm.PointIdsList(points=alive[-5:]))  # filters see payloads change


FILTERS = [
    None,
    qm.Filter(must=[qm.FieldCondition(key="tags", match=qm.MatchAny(any=["t1", "t2"]))]),
    qm.Filter(must_not=[qm.FieldCondition(key="document_id", match=qm.MatchValue(value="d0"))]),
    qm.Filter(
        must=[qm.HasVectorCondition(has_vector=SPARSE)],
        must_not=[qm.HasIdCondition(has_id=[5, str(uuid.UUID(int=7))])],
    ),
]


def answers(client: QdrantClient, rng: random.Random) -> list[list[tuple[str, float]]]:
    """Sparse-only and fused searches, with and without filters."""
    found = []
    for _ in range(12):
        query = sparse(rng, rng.randint(1, 6))
        dense = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
        for flt in FILTERS:
            plain = client.query_points("c", query=query, using=SPARSE, query_filter=flt, limit=40)
            nearest = client.query_points(
                "c", query=qm.NearestQuery(nearest=dense), using=DENSE, query_filter=flt, limit=9
            )
            fused = client.query_points(
                "c",
                prefetch=[
                    qm.Prefetch(query=dense, using=DENSE, limit=15),
                    qm.Prefetch(query=query, using=SPARSE, limit=15),
                ],
                query=qm.FusionQuery(fusion=qm.Fusion.RRF),
                query_filter=flt,
                limit=15,
                with_vectors=[DENSE, SPARSE],
            )
            for response in (plain, nearest, fused):
                found.append([(str(p.id), p.score, p.payload, p.vector) for p in response.points])
        # queries local mode must still resolve: a point id, a nested prefetch with a filter
        by_id = client.query_points("c", query=str(uuid.UUID(int=2)), using=DENSE, limit=5)
        nested = client.query_points(
            "c",
            prefetch=qm.Prefetch(
                prefetch=[qm.Prefetch(query=dense, using=DENSE, limit=20)],
                query=query,
                using=SPARSE,
                filter=FILTERS[1],
                limit=10,
            ),
            query=dense,
            using=DENSE,
            limit=5,
        )
        for response in (by_id, nested):
            found.append([(str(p.id), p.score) for p in response.points])
    return found


def both(client: QdrantClient, seed: int) -> tuple[list, list]:
    with qdrant_patches.loop_only():
        theirs = answers(client, random.Random(seed))
    ours = answers(client, random.Random(seed))
    return ours, theirs


@pytest.fixture
def installed() -> Iterator[None]:
    qdrant_patches.install()
    yield


def test_same_results_as_qdrant_client_through_deletes_and_updates(installed: None) -> None:
    rng = random.Random(5)
    client = QdrantClient(location=":memory:")
    make(client, rng)
    ours, theirs = both(client, 1)
    assert ours == theirs  # ids, order and float32 scores, IDF included
    assert sum(len(r) for r in ours) > 500
    change(client, rng)
    ours, theirs = both(client, 2)
    assert ours == theirs


def test_same_results_after_reopening_a_folder(installed: None, tmp_path: Path) -> None:
    rng = random.Random(9)
    client = QdrantClient(path=str(tmp_path))
    make(client, rng)
    change(client, rng)
    client.close()
    client = QdrantClient(path=str(tmp_path))  # vectors loaded from disk, not upserted
    try:
        ours, theirs = both(client, 3)
        assert ours == theirs
    finally:
        client.close()


def test_only_making_a_local_client_patches_qdrant_client() -> None:
    """The patches are process-wide, so they come from one place: an index patches nothing."""
    qdrant_patches.uninstall()
    try:
        QdrantIndex(QdrantClient(location=":memory:"), "c", DIMENSIONS, local=True)
        for owner, attribute, theirs, _ in qdrant_local.PATCHES:
            assert getattr(owner, attribute) is theirs
        local_client(":memory:")
        local_client(":memory:")  # installing twice changes nothing
        for owner, attribute, theirs, ours in qdrant_local.PATCHES:
            assert getattr(owner, attribute) is ours is not theirs
        with qdrant_patches.loop_only():
            for owner, attribute, theirs, _ in qdrant_local.PATCHES:
                assert getattr(owner, attribute) is theirs
        for owner, attribute, _, ours in qdrant_local.PATCHES:
            assert getattr(owner, attribute) is ours
    finally:
        qdrant_patches.install()


def test_a_local_index_scores_sparse_queries_from_postings() -> None:
    """Without them, a sparse query runs qdrant-client's loop over every point, and each list of
    a query checks the filter on every point again."""
    qdrant_patches.uninstall()
    client = local_client(":memory:")
    index = QdrantIndex(client, "c", DIMENSIONS, local=True)
    index.upsert([])
    assert local_collection.calculate_distance_sparse is not qdrant_local._LOOP
    rng = random.Random(4)
    client.upsert("c", [point(rng, n) for n in range(1, 50)], wait=True)
    english = qm.Filter(must=[qm.FieldCondition(key="tags", match=qm.MatchValue(value="t1"))])
    index.candidates([1.0] * DIMENSIONS, sparse(rng, 4), 10, english)
    collection = client._client.collections["c"]  # type: ignore[attr-defined]
    assert len(qdrant_local._indexes[collection][SPARSE].objects) == 49
    _, masks = qdrant_local._masks[id(collection.payload)]  # the filter's answers, kept
    assert [len(m.payloads) for m in masks.values()] == [49]


def test_a_vector_the_postings_cannot_reproduce_goes_to_the_loop() -> None:
    """The client sorts vectors on upsert; one unsorted all the same is the loop's to reject."""
    unsorted = qm.SparseVector(indices=[9, 2], values=[1.0, 2.0])
    postings = qdrant_local._Postings()
    assert postings.sync([qm.SparseVector(indices=[2, 9], values=[1.0, 2.0])])
    assert not postings.sync([unsorted])
    assert postings.sync([qm.SparseVector(indices=[2, 9], values=[1.0, 2.0])])


def test_plain_vector_queries_are_not_copied_and_not_changed(
    installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Local mode deep-copied the 1536 floats of a query once per list and once more per
    prefetch (~1.4 ms each); a plain vector has nothing to resolve, so it is used as given."""
    client = QdrantClient(location=":memory:")
    make(client, random.Random(6))
    copied: list[object] = []
    original = local_qdrant.deepcopy

    def deepcopy(value: object, *args: object) -> object:
        copied.append(value)
        return original(value, *args)

    monkeypatch.setattr(local_qdrant, "deepcopy", deepcopy)
    dense = [0.5] * DIMENSIONS
    terms = qm.SparseVector(indices=[VOCABULARY[0], VOCABULARY[1]], values=[1.0, 1.0])
    prefetch = [
        qm.Prefetch(query=dense, using=DENSE, limit=10),
        qm.Prefetch(query=terms, using=SPARSE, limit=10),
    ]
    before = [p.model_copy(deep=True) for p in prefetch]
    client.query_points(
        "c", prefetch=prefetch, query=qm.FusionQuery(fusion=qm.Fusion.RRF), limit=10
    )
    client.query_points("c", query=dense, using=DENSE, limit=10)
    assert not [v for v in copied if not isinstance(v, qm.FusionQuery)]
    assert prefetch == before and dense == [0.5] * DIMENSIONS
    with qdrant_patches.loop_only():  # qdrant-client's own resolution copies them
        client.query_points("c", query=dense, using=DENSE, limit=10)
    assert copied[-1] == qm.NearestQuery(nearest=dense)


def test_hit_vectors_read_in_place_give_the_scores_of_the_returned_vectors(
    installed: None,
) -> None:
    """Local mode's fused hits are scored from the vectors where it stores them; a server
    (here: the same client driven as one) sends them with the hits. Same candidates."""
    rng = random.Random(8)
    client = QdrantClient(location=":memory:")
    make(client, rng)
    change(client, rng)  # points without a sparse vector, deleted ones, rewritten ones
    local = QdrantIndex(client, "c", DIMENSIONS, local=True)
    as_server = QdrantIndex(client, "c", DIMENSIONS, local=False)
    as_server._ready = local._ready = True  # a local client has no payload indexes to make
    compared = 0
    for _ in range(20):
        dense = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
        query = sparse(rng, rng.randint(1, 6))
        for flt in FILTERS:
            ours = local.candidates(dense, query, 25, flt, ["document_id"])
            theirs = as_server.candidates(dense, query, 25, flt, ["document_id"])
            assert ours == theirs
            compared += len(ours)
    assert compared > 1000
    ids = [str(uuid.UUID(int=n)) for n in range(1, 345)]
    reader = qdrant_local.vector_reader(client, "c", DENSE, SPARSE)
    assert reader is not None
    records = {str(r.id): r.vector for r in client.retrieve("c", ids, with_vectors=True)}
    for point_id, (row, terms) in zip(ids, reader(ids), strict=True):
        vectors: dict = records.get(point_id) or {}  # type: ignore[assignment]
        assert (row is None) == (DENSE not in vectors)
        if row is not None:
            assert row.tolist() == vectors[DENSE]
        assert terms == vectors.get(SPARSE)


def duplicated(client: QdrantClient, rng: random.Random) -> None:
    """Exact duplicates, as a corpus indexed twice has: equal scores in both lists."""
    make(client, rng)
    stored = client.retrieve("c", [str(uuid.UUID(int=n)) for n in range(1, 301, 3)], True, True)
    copies = [
        qm.PointStruct(id=str(uuid.UUID(int=1000 + n)), vector=p.vector, payload=p.payload)
        for n, p in enumerate(stored * 2)
    ]
    client.upsert("c", copies, wait=True)


def test_local_fusion_gives_the_points_of_the_query_api(installed: None) -> None:
    """`fused_rrf` (local mode's prefetches and RRF without a `retrieve` record per hit) returns
    what `query_points` with a fusion query returns: ids, order, scores, payloads, also for
    ties between duplicates, with filters and payload selectors, through changes."""
    rng = random.Random(12)
    client = QdrantClient(location=":memory:")
    duplicated(client, rng)
    compared = ties = 0
    for _changed in range(2):
        for _ in range(15):
            dense = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
            query = sparse(rng, rng.randint(1, 6))
            for flt, selector in itertools.product(
                FILTERS, [True, False, qm.PayloadSelectorInclude(include=["tags"])]
            ):
                prefetch = [
                    qm.Prefetch(query=dense, using=DENSE, limit=30),
                    qm.Prefetch(query=query, using=SPARSE, limit=30),
                ]
                theirs = client.query_points(
                    "c",
                    prefetch=prefetch,
                    query=qm.FusionQuery(fusion=qm.Fusion.RRF),
                    query_filter=flt,
                    limit=30,
                    with_payload=selector,
                ).points
                ours = qdrant_local.fused_rrf(client, "c", prefetch, flt, 30, selector)
                assert ours == theirs
                compared += len(ours)
                scores = [p.score for p in ours]
                ties += len(scores) - len(set(scores))
        change(client, rng)
    assert compared > 3000 and ties > 100
    not_local = QdrantClient.__new__(QdrantClient)  # a server's client: ask it
    assert qdrant_local.fused_rrf(not_local, "c", [], None, 1, True) is None


def test_local_candidates_build_no_record_per_hit(
    installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Local mode's fusion ends with `retrieve`: a validated pydantic record per hit (payload
    included) only to move the payload over. The candidates do not go through it."""
    client = QdrantClient(location=":memory:")
    duplicated(client, random.Random(13))
    index = QdrantIndex(client, "c", DIMENSIONS, local=True)
    index._ready = True
    retrieved: list[object] = []
    original = local_collection.LocalCollection.retrieve

    def retrieve(self: object, ids: object, *args: object, **kwargs: object) -> object:
        retrieved.append(ids)
        return original(self, ids, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(local_collection.LocalCollection, "retrieve", retrieve)
    found = index.candidates([0.5] * DIMENSIONS, sparse(random.Random(1), 4), 20, None, ["tags"])
    assert len(found) == 20 and all(set(c.payload) == {"tags"} for c in found)
    assert not retrieved
