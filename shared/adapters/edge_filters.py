"""The port's filters (`shared.adapters.index`: what `shared.retrieval.filters` and the
adapters build) as Qdrant Edge's (the walk: `filter_walk`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import qdrant_edge as edge

from shared.adapters.filter_walk import translate
from shared.adapters.index import Filter


class _Edge:
    name = "Qdrant Edge"

    def filter(self, must: Any, should: Any, not_: Any) -> edge.Filter:
        return edge.Filter(must=must, should=should, must_not=not_)

    def has_id(self, ids: tuple[str, ...]) -> Any:
        return edge.HasIdCondition(set(ids))

    def has_vector(self, name: str) -> Any:
        return edge.HasVectorCondition(name)

    def match_value(self, key: str, value: str | bool) -> Any:
        return edge.FieldCondition(key, match=edge.MatchValue(_value(value)))

    def match_any(self, key: str, values: list[str]) -> Any:
        return edge.FieldCondition(key, match=edge.MatchAny(values))

    def since(self, key: str, gte: datetime) -> Any:
        return edge.FieldCondition(key, range=edge.RangeDateTime(gte=gte.isoformat()))


def to_edge(flt: Filter | None) -> edge.Filter | None:
    found: edge.Filter | None = translate(flt, _Edge())
    return found


def _value(value: Any) -> Any:
    """qdrant-edge-py 0.9 reads a Python bool as the integer 1 or 0 (bool is an int), which
    never matches a stored `true`; numpy's bool is read as a bool."""
    return np.bool_(value) if isinstance(value, bool) else value
