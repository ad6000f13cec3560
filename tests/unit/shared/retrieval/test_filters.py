"""Every search's filter leaves hidden points out, with or without the caller's filters."""

from __future__ import annotations

import uuid

from shared.adapters.index import FieldCondition, HasIdCondition, MatchAny, MatchValue
from shared.retrieval.filters import HIDDEN, SearchFilters


def test_no_filters_still_leave_hidden_points_out() -> None:
    flt = SearchFilters().to_filter()
    assert flt.must == () and flt.must_not == (HIDDEN,)


def test_the_record_s_hidden_documents_and_chunks_are_left_out_too() -> None:
    document, point = uuid.uuid4(), uuid.uuid4()
    flt = SearchFilters(language="nl").to_filter({document}, {point})
    assert flt.must == (FieldCondition(key="language", match=MatchValue(value="nl")),)
    assert flt.must_not == (
        HIDDEN,
        FieldCondition(key="document_id", match=MatchAny((str(document),))),
        HasIdCondition((str(point),)),
    )
