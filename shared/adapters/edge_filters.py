"""The port's filters (`shared.adapters.index`: what `shared.retrieval.filters` and the
adapters build) as Qdrant Edge's; anything else raises `ValueError` rather than filtering
differently."""

from __future__ import annotations

from typing import Any

import numpy as np
import qdrant_edge as edge

from shared.adapters.index import (
    DatetimeRange,
    FieldCondition,
    Filter,
    HasIdCondition,
    HasVectorCondition,
    MatchAny,
    MatchValue,
)


def to_edge(flt: Filter | None) -> edge.Filter | None:
    if flt is None:
        return None
    if not isinstance(flt, Filter):
        raise ValueError(f"filter: {type(flt).__name__} is not supported on Qdrant Edge here")
    return edge.Filter(
        must=_conditions(flt.must),
        should=_conditions(flt.should),
        must_not=_conditions(flt.must_not),
    )


def _conditions(conditions: tuple[Any, ...]) -> list[Any] | None:
    return [_condition(c) for c in conditions] if conditions else None


def _condition(condition: Any) -> Any:
    if isinstance(condition, Filter):
        return to_edge(condition)
    if isinstance(condition, HasIdCondition):
        return edge.HasIdCondition(set(condition.has_id))
    if isinstance(condition, HasVectorCondition):
        return edge.HasVectorCondition(condition.has_vector)
    if isinstance(condition, FieldCondition):
        return _field(condition)
    raise ValueError(f"filter: {type(condition).__name__} is not supported on Qdrant Edge here")


def _field(condition: FieldCondition) -> edge.FieldCondition:
    match, rng = condition.match, condition.range
    if (match is None) == (rng is None):
        raise ValueError(f"filter on {condition.key}: one match or one range is supported")
    if isinstance(match, MatchValue):
        return edge.FieldCondition(condition.key, match=edge.MatchValue(_value(match.value)))
    if isinstance(match, MatchAny):
        return edge.FieldCondition(condition.key, match=edge.MatchAny(list(match.any)))
    if isinstance(rng, DatetimeRange):
        return edge.FieldCondition(condition.key, range=edge.RangeDateTime(gte=rng.gte.isoformat()))
    raise ValueError(f"filter on {condition.key}: {type(match or rng).__name__} not supported")


def _value(value: Any) -> Any:
    """qdrant-edge-py 0.9 reads a Python bool as the integer 1 or 0 (bool is an int), which
    never matches a stored `true`; numpy's bool is read as a bool."""
    return np.bool_(value) if isinstance(value, bool) else value
