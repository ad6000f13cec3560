"""Steps 2-4 of a search on the candidates: section-proximity rerank, top k, document order.

Why a proximity boost: an answer often spans neighbouring chunks of one section ("Voorbereiding"
lists what to bring, the next chunk when to stop eating). The best-scoring candidates (the
*anchors*) show where the answer lives; other candidates from the same document, and more so
from the same H1/H2 section, are likelier to complete it than an equally scored chunk from an
unrelated page, and a context that stays in one section reads coherently.

Scores are first scaled so the best candidate has 1.0 (cosine and RRF scores live on different
scales). The defaults, +0.05 for an anchor's document and +0.10 more for its H1/H2 section, move
a same-section chunk past near-ties under RRF (scaled scores spread over ~0.1-1.0) and can lift
it into the top five under cosine alone (the ten lie within ~15-25 % of the best);
docs/retrieval.md has the reasoning and the figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.adapters.index import Candidate
from shared.retrieval import duplicates


@dataclass(frozen=True)
class RerankWeights:
    anchors: int = 2
    same_document: float = 0.05
    same_section: float = 0.10


@dataclass(frozen=True)
class Ranked:
    candidate: Candidate
    final: float
    boost: float
    also: tuple[Candidate, ...] = ()  # the same passage elsewhere (`duplicates.collapse`)


def section_key(candidate: Candidate) -> tuple[str, tuple[str, ...]]:
    """Document and its H1/H2 path: the unit of "the same section"."""
    headings = candidate.payload.get("headings") or []
    return str(candidate.payload.get("document_id")), tuple(headings[:2])


def rerank(candidates: Sequence[Candidate], weights: RerankWeights | None) -> list[Ranked]:
    """Candidates by final score (best first); without weights, the search order unchanged."""
    if not candidates:
        return []
    top = max(c.score for c in candidates) or 1.0
    if weights is None:
        return [Ranked(c, c.score / top, 0.0) for c in candidates]
    anchors = sorted(candidates, key=lambda c: -c.score)[: weights.anchors]
    documents = {section_key(a)[0] for a in anchors}
    sections = {section_key(a) for a in anchors}
    ranked = []
    for candidate in candidates:
        key = section_key(candidate)
        boost = weights.same_document if key[0] in documents else 0.0
        if key in sections:
            boost += weights.same_section
        ranked.append(Ranked(candidate, candidate.score / top + boost, boost))
    # Stable: equal final scores keep the search's order.
    return sorted(ranked, key=lambda r: -r.final)


def document_order(ranked: Sequence[Ranked]) -> list[Ranked]:
    """The kept hits as the source reads: documents by their best hit, then chunk index."""
    best: dict[str, float] = {}
    for r in ranked:
        doc = str(r.candidate.payload.get("document_id"))
        best[doc] = max(best.get(doc, float("-inf")), r.final)
    first_seen = {doc: n for n, doc in enumerate(best)}
    return sorted(
        ranked,
        key=lambda r: (
            -best[str(r.candidate.payload.get("document_id"))],
            first_seen[str(r.candidate.payload.get("document_id"))],
            int(r.candidate.payload.get("chunk_index") or 0),
        ),
    )


def select(
    candidates: Sequence[Candidate],
    top_k: int,
    weights: RerankWeights | None,
    *,
    collapse: bool = False,
) -> list[Ranked]:
    """Rerank, with `collapse` make each passage one hit (`duplicates.collapse`), keep the
    best `top_k`, then put them in document order."""
    ranked = rerank(candidates, weights)
    if collapse:
        ranked = duplicates.collapse(ranked)
    return document_order(ranked[:top_k])
