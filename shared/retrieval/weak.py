"""The "no good answer" signal: a search whose best hit is not similar enough to the question.

A fused (RRF) score is rank-based: the best of ten unrelated chunks still scores 1/61. The
signal reads the hits' dense cosine instead, which means similarity: a hit is *weak* when its
cosine is below the threshold, and a search is weak when all of its hits are (its best cosine
is below). Each embedding model has its own cosine scale (e5 gives an unanswered question's
best hit 0.82-0.89; OpenAI's models are said to run lower, not measured here), so the
threshold is per model: `SEARCH_WEAK_THRESHOLD` when set, else the model's value below, chosen
with `ingest eval` on questions whose answer is absent (docs/retrieval.md, "No good answer",
has the figures and how to re-tune).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from shared.retrieval.hits import Hit
from shared.settings import Settings

#: Per model, `ingest eval`'s cautious threshold (the highest that marks at most 5 % of the
#: answerable questions weak; docs/retrieval.md, "No good answer"). A model not listed is
#: never weak until SEARCH_WEAK_THRESHOLD is set for it.
THRESHOLDS = {
    # the offline stand-in (word overlap): examples/, 22 answerable and 22 absent questions
    "hashing-lexical-v1": 0.078,
    # multilingual-e5-small: the 48 real folders, 146 answerable and 28 absent questions
    "multilingual-e5-small-q4": 0.8595,
    # OpenAI: NOT measured here (no key): a starting point below Dify's 0.5 score threshold;
    # re-tune with `ingest eval` on the live index before relying on it
    "text-embedding-3-large": 0.30,
    "text-embedding-3-small": 0.30,
}


def threshold(settings: Settings, model: str) -> float:
    """SEARCH_WEAK_THRESHOLD, else the model's measured value (0.0, never weak, if none)."""
    if settings.search_weak_threshold is not None:
        return settings.search_weak_threshold
    return THRESHOLDS.get(model, 0.0)


def strength(hits: Sequence[Hit]) -> float | None:
    """The best dense cosine of the hits: the score the threshold is compared with."""
    scores = [hit.dense_score for hit in hits if hit.dense_score is not None]
    return max(scores) if scores else None


def is_weak(score: float | None, at: float) -> bool:
    """No similarity to judge (no hits) counts as weak."""
    return score is None or score < at


def mark(hits: Sequence[Hit], at: float) -> list[Hit]:
    """The hits with `weak` set each by its own cosine."""
    return [replace(hit, weak=is_weak(hit.dense_score, at)) for hit in hits]
