"""The port's filters, sparse vectors and payload schemas (`shared.adapters.index`) as
qdrant-client's `models`, for the server adapter; anything else raises `ValueError` rather
than filtering differently."""

from __future__ import annotations

from typing import Any

from qdrant_client import models as qm

from shared.adapters.index import (
    DatetimeRange,
    FieldCondition,
    Filter,
    HasIdCondition,
    HasVectorCondition,
    MatchAny,
    MatchValue,
    PayloadSchema,
    SparseVector,
)


def to_qdrant(flt: Filter | None) -> qm.Filter | None:
    if flt is None:
        return None
    if not isinstance(flt, Filter):
        raise ValueError(f"filter: {type(flt).__name__} is not supported here")
    return qm.Filter(
        must=_conditions(flt.must),
        should=_conditions(flt.should),
        must_not=_conditions(flt.must_not),
    )


def sparse_to_qdrant(sparse: SparseVector) -> qm.SparseVector:
    return qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))


def sparse_from_qdrant(stored: Any) -> SparseVector | None:
    """A stored sparse vector as the port's; None for anything else (no sparse vector)."""
    if not isinstance(stored, qm.SparseVector):
        return None
    return SparseVector(list(stored.indices), list(stored.values))


def schema(kind: PayloadSchema) -> qm.PayloadSchemaType:
    return qm.PayloadSchemaType(kind.value)


def _conditions(conditions: tuple[Any, ...]) -> list[Any] | None:
    return [_condition(c) for c in conditions] if conditions else None


def _condition(condition: Any) -> Any:
    if isinstance(condition, Filter):
        return to_qdrant(condition)
    if isinstance(condition, HasIdCondition):
        return qm.HasIdCondition(has_id=list(condition.has_id))
    if isinstance(condition, HasVectorCondition):
        return qm.HasVectorCondition(has_vector=condition.has_vector)
    if isinstance(condition, FieldCondition):
        return _field(condition)
    raise ValueError(f"filter: {type(condition).__name__} is not supported here")


def _field(condition: FieldCondition) -> qm.FieldCondition:
    match, rng = condition.match, condition.range
    if (match is None) == (rng is None):
        raise ValueError(f"filter on {condition.key}: one match or one range is supported")
    if isinstance(match, MatchValue):
        return qm.FieldCondition(key=condition.key, match=qm.MatchValue(value=match.value))
    if isinstance(match, MatchAny):
        return qm.FieldCondition(key=condition.key, match=qm.MatchAny(any=list(match.any)))
    if isinstance(rng, DatetimeRange):
        return qm.FieldCondition(key=condition.key, range=qm.DatetimeRange(gte=rng.gte))
    raise ValueError(f"filter on {condition.key}: {type(match or rng).__name__} not supported")
