"""The search front door: `search(SearchRequest(...))` -> hits with citations and timings.

The order: (1) embed the query with the active collection's model (the same embedder,
rate limiter and token counting as the pipeline); candidates: the top `candidates` by cosine,
fused in Qdrant with the sparse lexical list when hybrid; (2) section-proximity rerank;
(3) one hit per passage (copies listed in `also_in`); keep the top `top_k`; (4) document order.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from shared import repository as repo
from shared import sparse
from shared.adapters.index import SparseVector, VectorIndex
from shared.db import autocommit
from shared.pipeline import wiring
from shared.pipeline.embed import Embedder, embed_query
from shared.retrieval.filters import SearchFilters
from shared.retrieval.hits import PAYLOAD_FIELDS, Hit, make_hit
from shared.retrieval.rerank import RerankWeights, select
from shared.retrieval.weak import is_weak, mark, strength, threshold
from shared.settings import Settings, get_settings


class QueryError(ValueError):
    """A request the search cannot answer as asked (empty or over-long query, bad numbers)."""


@dataclass(frozen=True)
class SearchRequest:
    query: str
    filters: SearchFilters = field(default_factory=SearchFilters)
    top_k: int | None = None  # default SEARCH_TOP_K
    candidates: int | None = None  # default SEARCH_CANDIDATES
    hybrid: bool | None = None  # default SEARCH_HYBRID
    rerank: bool | None = None  # default SEARCH_RERANK
    collapse: bool | None = None  # default SEARCH_COLLAPSE_DUPLICATES


@dataclass
class SearchResult:
    query: str
    hits: list[Hit]
    collection: str
    hybrid: bool  # whether sparse candidates were fused (False on a collection without them)
    rerank: bool
    candidates: int
    query_tokens: int
    timings_ms: dict[str, float]
    notes: list[str] = field(default_factory=list)
    weak: bool = False  # no hit is similar enough to the question: "no good answer"
    weak_threshold: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "hits": [hit.to_dict() for hit in self.hits],
            "collection": self.collection,
            "hybrid": self.hybrid,
            "rerank": self.rerank,
            "candidates": self.candidates,
            "query_tokens": self.query_tokens,
            "timings_ms": self.timings_ms,
            "notes": self.notes,
            "weak": self.weak,
            "weak_threshold": self.weak_threshold,
        }


def weights(settings: Settings) -> RerankWeights:
    return RerankWeights(
        anchors=settings.search_rerank_anchors,
        same_document=settings.search_boost_same_document,
        same_section=settings.search_boost_same_section,
    )


def check(request: SearchRequest, settings: Settings) -> None:
    query = request.query.strip()
    if not query:
        raise QueryError("The query is empty: type a question or some words to look for.")
    if len(query) > settings.search_max_query_chars:
        raise QueryError(
            f"The query has {len(query)} characters; at most "
            f"{settings.search_max_query_chars} are accepted (SEARCH_MAX_QUERY_CHARS)."
        )
    for name in ("top_k", "candidates"):
        value = getattr(request, name)
        if value is not None and not 1 <= value <= 200:
            raise QueryError(f"{name} must be between 1 and 200, not {value}.")


def hidden_record() -> tuple[set[uuid.UUID], set[uuid.UUID]]:
    """The hidden documents and chunks as Postgres records them: left out of a search even
    when the index's `hidden` payload could not be updated (local Qdrant held by a worker).
    One statement, outside a transaction: one round trip per search."""
    with autocommit() as connection:
        return repo.hidden_everywhere(connection)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def search(
    request: SearchRequest,
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    index: VectorIndex | None = None,
) -> SearchResult:
    """Run one search; `embedder` and `index` default to the pipeline's (active collection)."""
    settings = settings or get_settings()
    check(request, settings)
    started = time.perf_counter()
    top_k = request.top_k or settings.search_top_k
    wanted = max(request.candidates or settings.search_candidates, top_k)
    hybrid = settings.search_hybrid if request.hybrid is None else request.hybrid
    rerank = settings.search_rerank if request.rerank is None else request.rerank
    query = request.query.strip()

    embedder = embedder or wiring.embedder(settings)
    step = time.perf_counter()
    embedded = embed_query(embedder, query)
    timings = {"embed": _ms(step)}

    step = time.perf_counter()
    hidden: tuple[set[uuid.UUID], set[uuid.UUID]] = (set(), set())
    if index is None:  # the service's collection: its record of what is hidden holds too
        index = wiring.index_for(settings, embedder)
        hidden = hidden_record()
    index.ensure_collection()
    notes = []
    sparse_query = None
    if hybrid and not index.has_sparse:
        notes.append(
            f"Collection {index.collection} has no sparse vectors: dense only. "
            "Run `ingest reindex` to build one with them."
        )
    elif hybrid:
        language = [request.filters.language] if request.filters.language else None
        terms = sparse.query_vector(query, language)
        sparse_query = SparseVector(terms.indices, terms.values)
    flt = request.filters.to_filter(*hidden)
    found = index.candidates(embedded.vectors[0], sparse_query, wanted, flt, PAYLOAD_FIELDS)
    timings["candidates"] = _ms(step)

    step = time.perf_counter()
    collapse = settings.search_collapse_duplicates if request.collapse is None else request.collapse
    kept = select(found, top_k, weights(settings) if rerank else None, collapse=collapse)
    ranks = {id(item): n for n, item in enumerate(sorted(kept, key=lambda r: -r.final), 1)}
    hits = [make_hit(item, ranks[id(item)], query) for item in kept]
    weak_at = threshold(settings, embedder.model)
    hits = mark(hits, weak_at)
    timings["rerank"] = _ms(step)
    timings["total"] = _ms(started)
    return SearchResult(
        query=query,
        hits=hits,
        collection=index.collection,
        hybrid=sparse_query is not None,
        rerank=rerank,
        candidates=len(found),
        query_tokens=embedded.tokens,
        timings_ms=timings,
        notes=notes,
        weak=is_weak(strength(hits), weak_at),
        weak_threshold=weak_at,
    )
