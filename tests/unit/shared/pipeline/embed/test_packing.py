"""Packing inputs into requests: full requests, never over the API's limits, order kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.errors import PermanentError
from shared.pipeline.embed import check_inputs, pack_batches


def test_2500_small_inputs_make_two_requests() -> None:
    batches = pack_batches([10] * 2500, max_inputs=2048, max_tokens=300_000)
    assert [len(b) for b in batches] == [2048, 452]


def test_40_inputs_of_8000_tokens_respect_the_request_cap() -> None:
    batches = pack_batches([8000] * 40, max_inputs=2048, max_tokens=300_000)
    assert [len(b) for b in batches] == [37, 3]
    assert all(8000 * len(b) <= 300_000 for b in batches)


def test_configured_batch_size_limits_inputs_per_request() -> None:
    assert [len(b) for b in pack_batches([1] * 10, max_inputs=4, max_tokens=1000)] == [4, 4, 2]


def test_no_inputs_no_requests() -> None:
    assert pack_batches([], max_inputs=2048, max_tokens=300_000) == []


def test_an_input_over_the_request_cap_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        pack_batches([10, 400_000], max_inputs=2048, max_tokens=300_000)


@given(
    counts=st.lists(st.integers(min_value=1, max_value=500), max_size=300),
    max_inputs=st.integers(min_value=1, max_value=50),
    max_tokens=st.integers(min_value=500, max_value=5000),
)
def test_batches_cover_all_inputs_in_order_within_limits_and_are_full(
    counts: list[int], max_inputs: int, max_tokens: int
) -> None:
    batches = pack_batches(counts, max_inputs, max_tokens)
    assert [i for b in batches for i in b] == list(range(len(counts)))
    for number, batch in enumerate(batches):
        tokens = sum(counts[i] for i in batch)
        assert 1 <= len(batch) <= max_inputs
        assert tokens <= max_tokens
        if number < len(batches) - 1:  # full: the next input would not have fitted
            next_tokens = counts[batch.stop]
            assert len(batch) == max_inputs or tokens + next_tokens > max_tokens


def test_empty_input_is_refused_with_a_clear_error() -> None:
    with pytest.raises(PermanentError) as caught:
        check_inputs(["a", ""], [1, 0], max_input_tokens=8192)
    assert caught.value.code == "empty_input"
    assert "input 1 is empty" in caught.value.message


def test_input_over_8192_tokens_is_refused_with_a_clear_error() -> None:
    with pytest.raises(PermanentError) as caught:
        check_inputs(["a", "b"], [10, 8193], max_input_tokens=8192)
    assert caught.value.code == "input_too_long"
    assert "8193 tokens" in caught.value.message
    check_inputs(["a"], [8192], max_input_tokens=8192)  # the limit itself is allowed
