"""One walk over the port's filters (`shared.adapters.index`) for both adapters: each gives
its own constructors (a `FilterTarget`), the walk checks the vocabulary. The two adapters
cannot drift apart, and anything outside the vocabulary raises `ValueError` rather than
filtering differently."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from shared.adapters.index import (
    DatetimeRange,
    FieldCondition,
    Filter,
    HasIdCondition,
    HasVectorCondition,
    MatchAny,
    MatchValue,
)


class FilterTarget(Protocol):
    """How one store spells each part of a filter."""

    name: str

    def filter(
        self, must: list[Any] | None, should: list[Any] | None, not_: list[Any] | None
    ) -> Any: ...

    def has_id(self, ids: tuple[str, ...]) -> Any: ...

    def has_vector(self, name: str) -> Any: ...

    def match_value(self, key: str, value: str | bool) -> Any: ...

    def match_any(self, key: str, values: list[str]) -> Any: ...

    def since(self, key: str, gte: datetime) -> Any: ...


def translate(flt: Filter | None, target: FilterTarget) -> Any:
    if flt is None:
        return None
    if not isinstance(flt, Filter):
        raise ValueError(f"filter: {type(flt).__name__} is not supported on {target.name}")
    return target.filter(
        _conditions(flt.must, target),
        _conditions(flt.should, target),
        _conditions(flt.must_not, target),
    )


def _conditions(conditions: tuple[Any, ...], target: FilterTarget) -> list[Any] | None:
    return [_condition(c, target) for c in conditions] if conditions else None


def _condition(condition: Any, target: FilterTarget) -> Any:
    if isinstance(condition, Filter):
        return translate(condition, target)
    if isinstance(condition, HasIdCondition):
        return target.has_id(condition.has_id)
    if isinstance(condition, HasVectorCondition):
        return target.has_vector(condition.has_vector)
    if isinstance(condition, FieldCondition):
        return _field(condition, target)
    raise ValueError(f"filter: {type(condition).__name__} is not supported on {target.name}")


def _field(condition: FieldCondition, target: FilterTarget) -> Any:
    match, rng = condition.match, condition.range
    if (match is None) == (rng is None):
        raise ValueError(f"filter on {condition.key}: one match or one range is supported")
    if isinstance(match, MatchValue):
        return target.match_value(condition.key, match.value)
    if isinstance(match, MatchAny):
        return target.match_any(condition.key, list(match.any))
    if isinstance(rng, DatetimeRange):
        return target.since(condition.key, rng.gte)
    raise ValueError(f"filter on {condition.key}: {type(match or rng).__name__} not supported")
