"""qdrant-client filters (`qdrant_client.models`, the port's vocabulary) as Qdrant Edge's: the
subset `shared.retrieval.filters` and the adapters build; anything else raises `ValueError`
rather than filtering differently."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import qdrant_edge as edge
from qdrant_client import models as qm


def to_edge(flt: qm.Filter | None) -> edge.Filter | None:
    if flt is None:
        return None
    if flt.min_should is not None:
        raise ValueError("filter: min_should is not supported on Qdrant Edge here")
    return edge.Filter(
        must=_conditions(flt.must),
        should=_conditions(flt.should),
        must_not=_conditions(flt.must_not),
    )


def _conditions(conditions: Any) -> list[Any] | None:
    if conditions is None:
        return None
    if not isinstance(conditions, list):
        conditions = [conditions]
    return [_condition(c) for c in conditions]


def _condition(condition: Any) -> Any:
    if isinstance(condition, qm.Filter):
        return to_edge(condition)
    if isinstance(condition, qm.HasIdCondition):
        return edge.HasIdCondition({str(i) for i in condition.has_id})
    if isinstance(condition, qm.HasVectorCondition):
        return edge.HasVectorCondition(condition.has_vector)
    if isinstance(condition, qm.FieldCondition):
        return _field(condition)
    raise ValueError(f"filter: {type(condition).__name__} is not supported on Qdrant Edge here")


def _field(condition: qm.FieldCondition) -> edge.FieldCondition:
    given = condition.model_dump(exclude_none=True, exclude={"key"})
    match, rng = condition.match, condition.range
    if set(given) - {"match", "range"} or (match is None) == (rng is None):
        raise ValueError(f"filter on {condition.key}: one match or one range is supported")
    if isinstance(match, qm.MatchValue):
        return edge.FieldCondition(condition.key, match=edge.MatchValue(_value(match.value)))
    if isinstance(match, qm.MatchAny):
        return edge.FieldCondition(condition.key, match=edge.MatchAny(list(match.any)))  # type: ignore[arg-type]
    if isinstance(rng, qm.DatetimeRange):
        bounds = {k: _iso(v) for k, v in rng.model_dump(exclude_none=True).items()}
        return edge.FieldCondition(condition.key, range=edge.RangeDateTime(**bounds))
    raise ValueError(f"filter on {condition.key}: {type(match or rng).__name__} not supported")


def _value(value: Any) -> Any:
    """qdrant-edge-py 0.9 reads a Python bool as the integer 1 or 0 (bool is an int), which
    never matches a stored `true`; numpy's bool is read as a bool."""
    return np.bool_(value) if isinstance(value, bool) else value


def _iso(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)
