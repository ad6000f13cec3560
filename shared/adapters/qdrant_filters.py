"""The port's filters, sparse vectors and payload schemas (`shared.adapters.index`) as
qdrant-client's `models`, for the server adapter (the filters' walk: `filter_walk`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from qdrant_client import models as qm

from shared.adapters.filter_walk import translate
from shared.adapters.index import Filter, PayloadSchema, SparseVector


class _Qdrant:
    name = "a Qdrant server"

    def filter(self, must: Any, should: Any, not_: Any) -> qm.Filter:
        return qm.Filter(must=must, should=should, must_not=not_)

    def has_id(self, ids: tuple[str, ...]) -> Any:
        return qm.HasIdCondition(has_id=list(ids))

    def has_vector(self, name: str) -> Any:
        return qm.HasVectorCondition(has_vector=name)

    def match_value(self, key: str, value: str | bool) -> Any:
        return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))

    def match_any(self, key: str, values: list[str]) -> Any:
        return qm.FieldCondition(key=key, match=qm.MatchAny(any=values))

    def since(self, key: str, gte: datetime) -> Any:
        return qm.FieldCondition(key=key, range=qm.DatetimeRange(gte=gte))


def to_qdrant(flt: Filter | None) -> qm.Filter | None:
    found: qm.Filter | None = translate(flt, _Qdrant())
    return found


def sparse_to_qdrant(sparse: SparseVector) -> qm.SparseVector:
    return qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))


def sparse_from_qdrant(stored: Any) -> SparseVector | None:
    """A stored sparse vector as the port's; None for anything else (no sparse vector)."""
    if not isinstance(stored, qm.SparseVector):
        return None
    return SparseVector(list(stored.indices), list(stored.values))


def schema(kind: PayloadSchema) -> qm.PayloadSchemaType:
    return qm.PayloadSchemaType(kind.value)
