"""Which chunks a search may return (the caller's context selection), as the index port's
payload filters on indexed fields (`shared.adapters.index.PAYLOAD_INDEXES`)."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from shared.adapters.index import (
    Condition,
    DatetimeRange,
    FieldCondition,
    Filter,
    HasIdCondition,
    MatchAny,
    MatchValue,
)

#: Points an editor hid (`indexing.is_hidden`).
HIDDEN = FieldCondition(key="hidden", match=MatchValue(value=True))


@dataclass(frozen=True)
class SearchFilters:
    """All given filters must hold; a list matches when any of its values does."""

    document_ids: tuple[str, ...] = ()  # document ids (UUID) or external ids
    source: str | None = None
    tags: tuple[str, ...] = ()
    language: str | None = None
    heading_prefix: str | None = None  # "Knieoperatie" or "Knieoperatie > Voorbereiding"
    updated_since: datetime | None = None

    @classmethod
    def names(cls) -> set[str]:
        return {f.name for f in fields(cls)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchFilters:
        """From JSON or `--filter key=value`; unknown keys raise ValueError naming them."""
        unknown = set(data) - cls.names()
        if unknown:
            raise ValueError(
                f"unknown filter {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(cls.names()))}"
            )
        values = dict(data)
        for key in ("document_ids", "tags"):
            raw = values.get(key)
            if isinstance(raw, str):
                raw = [part.strip() for part in raw.split(",") if part.strip()]
            values[key] = tuple(str(v) for v in raw or ())
        since = values.get("updated_since")
        if isinstance(since, str):
            values["updated_since"] = datetime.fromisoformat(since.replace("Z", "+00:00"))
        return cls(**values)

    def to_filter(
        self,
        hidden_documents: Collection[uuid.UUID] = (),
        hidden_points: Collection[uuid.UUID] = (),
    ) -> Filter:
        """The filter of every search: these conditions, and never a hidden point (payload
        `hidden: true`; a point without the field is visible). `hidden_documents` and
        `hidden_points` (the record's, `repo.hidden_everywhere`) are left out too, so a hide
        holds even where the index's payload could not be updated yet."""
        must_not: list[Condition] = [HIDDEN]
        if hidden_documents:
            ids = sorted(str(d) for d in hidden_documents)
            must_not.append(FieldCondition(key="document_id", match=MatchAny(tuple(ids))))
        if hidden_points:
            must_not.append(HasIdCondition(tuple(sorted(str(p) for p in hidden_points))))
        must: list[Condition] = []
        if self.document_ids:
            ids = list(self.document_ids)
            must.append(
                Filter(
                    should=(
                        FieldCondition(key="document_id", match=MatchAny(tuple(ids))),
                        FieldCondition(key="external_id", match=MatchAny(tuple(ids))),
                    )
                )
            )
        if self.source:
            must.append(FieldCondition(key="source", match=MatchValue(value=self.source)))
        if self.tags:
            must.append(FieldCondition(key="tags", match=MatchAny(self.tags)))
        if self.language:
            must.append(FieldCondition(key="language", match=MatchValue(value=self.language)))
        if self.heading_prefix:
            path = " > ".join(p.strip() for p in self.heading_prefix.split(">") if p.strip())
            must.append(FieldCondition(key="heading_paths", match=MatchValue(value=path)))
        if self.updated_since:
            since = self.updated_since
            must.append(FieldCondition(key="updated_at", range=DatetimeRange(gte=since)))
        return Filter(must=tuple(must), must_not=tuple(must_not))
