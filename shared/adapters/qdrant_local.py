"""Sparse scoring for qdrant-client's local mode (QDRANT_PATH) from an inverted index.

Local mode has no sparse index: `LocalCollection.search` scores a sparse query against every
stored vector with a Python merge loop (`calculate_distance_sparse`, ~65 µs a point, 0.7 s
at 10,000 chunks). `_score` stands in for that one function, for plain sparse queries inside
`LocalCollection.search` only, with postings sorted by term (numpy arrays, one set per
collection and sparse vector) that visit only the query's terms. Everything around it stays
local mode's own: the IDF rescoring of the query, filters, deleted points, ordering, fusion.

Filters: local mode evaluates a filter in Python point by point (~13 µs a point), once per
list of a fused query. `calculate_payload_mask` is replaced by the same per-point check
(`check_filter`) with its answers kept per collection and filter: a repeated filter (and the
second list of a query) re-checks only the points whose payload object or vector presence
changed (local mode stores a new payload dict on every change).

Query copies: local mode deep-copies every query and prefetch before resolving point ids in
it (`QdrantLocal._resolve_query_input`, `_resolve_prefetch_input`): three copies of the
1536-float query for a fused search, ~1.4 ms each. A query that is already a plain dense or
sparse vector has nothing to resolve and nothing in it is changed, so it is used as given;
anything else (point ids, lookups, nested prefetches, filters, MMR) is copied as local mode does.

Fusion: local mode's RRF query ends with `retrieve`, a validated pydantic record per hit only
to move its payload over; `fused_rrf` runs local mode's own steps without it (candidates).

Same numbers as the loop: per point the products are summed in ascending term order in
double precision from 0.0 and cast to float32; a point sharing no term scores -inf. The
index follows the collection by identity: local mode stores a new `SparseVector` object for
every upsert, so a slot whose object changed is re-read on the next query. Anything the
index cannot reproduce exactly (an unsorted stored vector, which the loop rejects; values
that are not Python numbers) goes to the loop. A Qdrant server (QDRANT_URL) never comes
here: it has its own inverted index.

The stand-ins are put in place by `shared.adapters.qdrant_patches` only (see `PATCHES`), when
a local-mode client is made; `vector_reader` and `fused_rrf` are called directly by
`shared.adapters.qdrant`. All of it follows qdrant-client 1.20's local mode, the minor
release pinned in pyproject.toml.
"""

from __future__ import annotations

import itertools
import operator
import threading
import weakref
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, cast

import numpy as np
from qdrant_client.http import models as rest
from qdrant_client.http.models import SparseVector
from qdrant_client.hybrid.fusion import reciprocal_rank_fusion
from qdrant_client.local import local_collection as _local
from qdrant_client.local.local_collection import LocalCollection
from qdrant_client.local.payload_filters import check_filter
from qdrant_client.local.qdrant_local import QdrantLocal
from qdrant_client.local.utils import normalize_point_id

_LOOP = _local.calculate_distance_sparse
_MASK = _local.calculate_payload_mask
_SEARCH = LocalCollection.search
_RESOLVE_QUERY = QdrantLocal._resolve_query_input
_RESOLVE_PREFETCH = QdrantLocal._resolve_prefetch_input
#: (collection, sparse vector name) of the plain sparse search running in this context.
_searching: ContextVar[tuple[LocalCollection, str] | None] = ContextVar("searching", default=None)
_indexes: weakref.WeakKeyDictionary[LocalCollection, dict[str, _Postings]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()
_EMPTY = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))


def _plain(values: Sequence[Any]) -> bool:
    """Python numbers (and numpy float64, a float): products equal to the loop's doubles."""
    return all(isinstance(v, (float, int)) for v in values)


def _row(vector: SparseVector) -> tuple[np.ndarray, np.ndarray] | None:
    """One stored vector as arrays; None when the loop would not score it as is."""
    if not vector.indices:
        return _EMPTY
    indices = np.asarray(vector.indices, dtype=np.int64)
    if len(indices) > 1 and not bool(np.all(indices[1:] > indices[:-1])):
        return None  # unsorted: the loop asserts; let it
    if not _plain(vector.values):
        return None
    return indices, np.asarray(vector.values, dtype=np.float64)


class _Postings:
    """Every stored vector of one sparse vector name, as postings sorted by (term, point)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.objects: list[SparseVector] = []  # the stored objects indexed, by identity
        self.rows: list[tuple[np.ndarray, np.ndarray] | None] = []
        self.terms = np.zeros(0, dtype=np.int64)
        self.points = np.zeros(0, dtype=np.int64)
        self.values = np.zeros(0, dtype=np.float64)
        self.exact = True  # False while a stored vector is one only the loop scores

    def sync(self, vectors: Sequence[SparseVector]) -> bool:
        """Follow `vectors` (the collection's stored vectors); False: use the loop."""
        if len(vectors) == len(self.objects) and vectors == self.objects:
            # No write since the last query: list equality compares by identity first, in C
            # (~10 µs at 10,000 points against ~0.4-4 ms for the slot-by-slot scan below). A
            # slot rewritten with equal indices and values scores the same from the same row;
            # its new object is adopted so the next check is by identity again.
            self.objects = list(vectors)
            return self.exact
        kept = min(len(vectors), len(self.objects))
        same = np.fromiter(map(operator.is_, vectors, self.objects), dtype=bool, count=kept)
        changed = np.flatnonzero(~same)
        if kept == len(vectors) == len(self.objects) and not len(changed):
            return self.exact
        for slot in changed.tolist():
            self.objects[slot] = vectors[slot]
            self.rows[slot] = _row(vectors[slot])
        del self.objects[kept:], self.rows[kept:]
        for vector in vectors[kept:]:
            self.objects.append(vector)
            self.rows.append(_row(vector))
        self._rebuild()
        return self.exact

    def _rebuild(self) -> None:
        self.exact = all(row is not None for row in self.rows)
        if not self.exact:
            return
        rows = cast("list[tuple[np.ndarray, np.ndarray]]", self.rows)  # no None: checked above
        if not rows:
            rows = [_EMPTY]
        lengths = np.fromiter((len(r[0]) for r in rows), dtype=np.int64, count=len(rows))
        terms = np.concatenate([r[0] for r in rows])
        order = np.argsort(terms, kind="stable")  # stable: points ascending within a term
        self.terms = terms[order]
        self.points = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)[order]
        self.values = np.concatenate([r[1] for r in rows])[order]

    def score(self, query: SparseVector) -> np.ndarray:
        """The loop's scores: query terms taken in ascending order, one pass each."""
        totals = np.zeros(len(self.objects), dtype=np.float64)
        found = np.zeros(len(self.objects), dtype=bool)
        terms = np.asarray(query.indices, dtype=np.int64)
        starts = np.searchsorted(self.terms, terms, side="left")
        ends = np.searchsorted(self.terms, terms, side="right")
        for weight, start, end in zip(query.values, starts.tolist(), ends.tolist(), strict=True):
            if start == end:
                continue
            points = self.points[start:end]  # distinct within a term
            totals[points] += float(weight) * self.values[start:end]
            found[points] = True
        scores = totals.astype(np.float32)
        scores[~found] = np.float32("-inf")
        return scores


def _postings(collection: LocalCollection, name: str) -> _Postings:
    with _lock:
        return _indexes.setdefault(collection, {}).setdefault(name, _Postings())


def _score(query: SparseVector, vectors: list[SparseVector], empty_is_zero: bool = False) -> Any:
    """Stands in for `calculate_distance_sparse` in `local_collection`."""
    searching = _searching.get()
    indices = query.indices
    sorted_query = all(a < b for a, b in itertools.pairwise(indices))
    if searching is None or empty_is_zero or not sorted_query or not _plain(query.values):
        return _LOOP(query, vectors, empty_is_zero)
    postings = _postings(*searching)
    with postings.lock:
        if not postings.sync(vectors):
            return _LOOP(query, vectors, empty_is_zero)
        return postings.score(query)


def _search(self: LocalCollection, query_vector: Any, *args: Any, **kwargs: Any) -> Any:
    """`LocalCollection.search`, telling `_score` which collection and vector it scores."""
    if not (isinstance(query_vector, tuple) and isinstance(query_vector[1], SparseVector)):
        return _SEARCH(self, query_vector, *args, **kwargs)
    token = _searching.set((self, query_vector[0]))
    try:
        return _SEARCH(self, query_vector, *args, **kwargs)
    finally:
        _searching.reset(token)


class _Mask:
    """One filter's answer for every point of one collection, and what it was computed from."""

    def __init__(self) -> None:
        self.payloads: list[dict[str, Any]] = []  # the payload objects checked, by identity
        self.ids: list[Any] = []
        self.has: dict[str, np.ndarray] = {}  # deleted_per_vector as it was
        self.mask = np.zeros(0, dtype=bool)

    def update(
        self,
        flt: Any,
        payloads: list[dict[str, Any]],
        ids: list[Any],
        deleted_per_vector: dict[str, np.ndarray],
    ) -> np.ndarray:
        n, kept = len(payloads), min(len(payloads), len(self.payloads))
        stale = ~np.fromiter(map(operator.is_, payloads, self.payloads), dtype=bool, count=kept)
        stale |= ~np.fromiter(map(operator.is_, ids, self.ids), dtype=bool, count=kept)
        if set(deleted_per_vector) != set(self.has):
            stale[:] = True
        else:
            for name, deleted in deleted_per_vector.items():
                before = self.has[name]
                common = min(kept, len(before), len(deleted))
                stale[:common] |= deleted[:common] != before[:common]
        if n == kept == len(self.payloads) and not stale.any():
            return self.mask.copy()
        mask = np.zeros(n, dtype=bool)
        mask[:kept] = self.mask[:kept]
        for slot in [*np.flatnonzero(stale).tolist(), *range(kept, n)]:
            has_vector = {name: True for name, d in deleted_per_vector.items() if not d[slot]}
            mask[slot] = check_filter(flt, payloads[slot], ids[slot], has_vector)
        self.payloads, self.ids, self.mask = list(payloads), list(ids), mask
        self.has = {name: deleted.copy() for name, deleted in deleted_per_vector.items()}
        return mask.copy()


#: per payload list (one per collection; kept alive here, so ids are not reused): filters
_masks: dict[int, tuple[list[dict[str, Any]], dict[str, _Mask]]] = {}
_COLLECTIONS, _MASKS_PER_COLLECTION = 16, 32


def _payload_mask(
    payloads: list[dict[str, Any]],
    payload_filter: Any,
    ids_inv: list[Any],
    deleted_per_vector: dict[str, np.ndarray],
) -> np.ndarray:
    """Stands in for `calculate_payload_mask` in `local_collection`: the same checks, kept."""
    if payload_filter is None:
        return _MASK(payloads, payload_filter, ids_inv, deleted_per_vector)
    key = payload_filter.model_dump_json()
    with _lock:
        entry = _masks.pop(id(payloads), None)
        filters = entry[1] if entry is not None else {}
        _masks[id(payloads)] = (payloads, filters)  # most recently used last
        while len(_masks) > _COLLECTIONS:
            _masks.pop(next(iter(_masks)))
        mask = filters.pop(key, None) or _Mask()
        filters[key] = mask  # most recently used last
        while len(filters) > _MASKS_PER_COLLECTION:
            filters.pop(next(iter(filters)))
        return mask.update(payload_filter, payloads, ids_inv, deleted_per_vector)


def _vector(value: Any) -> bool:
    """A dense or sparse vector given as such: no point id to look up (those are str, int
    or UUID), nothing local mode changes in it."""
    return isinstance(value, (list, SparseVector))


def _plain_query(query: Any) -> rest.NearestQuery | None:
    """The query local mode would make of a plain vector query, without copying it first."""
    if isinstance(query, rest.NearestQuery):
        return query if query.mmr is None and _vector(query.nearest) else None
    if _vector(query):
        return rest.NearestQuery(nearest=query)
    return None


def _resolve_query(
    self: QdrantLocal, collection_name: str, query: Any, using: Any, lookup_from: Any
) -> Any:
    """`QdrantLocal._resolve_query_input` without the deep copy for a plain vector query."""
    plain = _plain_query(query) if lookup_from is None else None
    if plain is None:
        return _RESOLVE_QUERY(self, collection_name, query, using, lookup_from)
    self._get_collection(collection_name)  # raises for an unknown collection, as local mode does
    return plain, set()


def _resolve_prefetch(self: QdrantLocal, prefetch: Any, collection_name: str) -> Any:
    """`QdrantLocal._resolve_prefetch_input` without the deep copy for a prefetch that is
    only a plain vector query (no filter, nested prefetch, lookup or params)."""
    simple = (
        prefetch.filter is None
        and not prefetch.prefetch
        and prefetch.lookup_from is None
        and prefetch.params is None
    )
    plain = _plain_query(prefetch.query) if simple else None
    if plain is None:
        return _RESOLVE_PREFETCH(self, prefetch, collection_name)
    self._get_collection(collection_name)
    return prefetch.model_copy(update={"query": plain, "prefetch": []})


#: the dense and sparse vectors of some points, by id: (float32 row or None, SparseVector or None)
VectorReader = Callable[[Sequence[Any]], list[tuple[np.ndarray | None, SparseVector | None]]]


def vector_reader(client: Any, collection: str, dense: str, sparse: str) -> VectorReader | None:
    """Reads the `dense` and `sparse` vectors local mode stores for some points, as
    `retrieve(ids, with_vectors=[dense, sparse])` has them (None for a vector a point lacks)
    but in place: a dense vector as its float32 row, not converted to 1536 Python floats and
    validated by pydantic for the caller to convert back (~3 ms for ten hits). None when
    `client` is not local mode or the collection lacks either vector: ask for them instead."""
    local = getattr(client, "_client", None)
    if not isinstance(local, QdrantLocal):
        return None
    found = local.collections.get(local.aliases.get(collection, collection))
    if found is None or dense not in found.vectors or sparse not in found.sparse_vectors:
        return None

    def read(ids: Sequence[Any]) -> list[tuple[np.ndarray | None, SparseVector | None]]:
        matrix, lacks_dense = found.vectors[dense], found.deleted_per_vector[dense]
        terms, lacks_sparse = found.sparse_vectors[sparse], found.deleted_per_vector[sparse]
        vectors: list[tuple[np.ndarray | None, SparseVector | None]] = []
        for point_id in ids:
            slot = found.ids.get(normalize_point_id(point_id))
            if slot is None or found.deleted[slot]:
                vectors.append((None, None))
                continue
            vectors.append(
                (
                    None if lacks_dense[slot] else matrix[slot],
                    None if lacks_sparse[slot] else terms[slot],
                )
            )
        return vectors

    return read


def fused_rrf(
    client: Any,
    collection: str,
    prefetches: list[rest.Prefetch],
    flt: rest.Filter | None,
    limit: int,
    with_payload: Any,
) -> list[rest.ScoredPoint] | None:
    """What `query_points(collection, prefetch=prefetches, query=FusionQuery(RRF),
    query_filter=flt, limit=limit, with_payload=with_payload)` returns in local mode, by local
    mode's own steps (its checks, its prefetch searches with the filter, its RRF, its payload
    copies), less the `retrieve` it ends with: that builds and validates a pydantic `Record`
    per hit (payload included) only to move the payload over (~0.6 ms of ~1.4 for 30 hits).
    None when `client` is not local mode: ask it."""
    local = getattr(client, "_client", None)
    if not isinstance(local, QdrantLocal):
        return None
    query = rest.FusionQuery(fusion=rest.Fusion.RRF)
    if limit < 1:
        raise ValueError(f"limit value {limit} is invalid. Must be 1 or larger.")
    local._validate_query(query, None, prefetches, None)
    local._validate_prefetch(prefetches)
    found = local._get_collection(collection)
    resolved = local._resolve_prefetches_input(prefetches, collection)
    found._validate_with_payload(with_payload)
    found._validate_text_queries(query, None, resolved, None)
    sources = [found._prefetch(prefetch, flt) for prefetch in resolved]
    fused = reciprocal_rank_fusion(responses=sources, limit=limit)
    kept = []
    for point in fused:  # as `retrieve` does: a point gone since is left out
        slot = found.ids.get(normalize_point_id(point.id))
        if slot is None or found.deleted[slot]:
            continue
        point.payload = found._get_payload(slot, with_payload)
        kept.append(point)
    return kept


#: What `shared.adapters.qdrant_patches` replaces: (owner, attribute, qdrant-client's own, ours).
#: This module only defines the replacements; installing them is that module's job.
PATCHES: tuple[tuple[Any, str, Any, Any], ...] = (
    (_local, "calculate_distance_sparse", _LOOP, _score),
    (_local, "calculate_payload_mask", _MASK, _payload_mask),
    (LocalCollection, "search", _SEARCH, _search),
    (QdrantLocal, "_resolve_query_input", _RESOLVE_QUERY, _resolve_query),
    (QdrantLocal, "_resolve_prefetch_input", _RESOLVE_PREFETCH, _resolve_prefetch),
)
