"""The in-process token bucket and the reading of the API's retry and rate-limit headers.

Time is a test clock: `sleep` advances it, so the waits are checked exactly and take no time.
"""

from __future__ import annotations

import pytest

from shared.adapters.openai_embeddings import retry_after_seconds
from shared.ratelimit import LocalRateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def limiter(clock: Clock, tpm: int = 60_000, rpm: int = 600) -> LocalRateLimiter:
    return LocalRateLimiter(tpm, rpm, headroom=1.0, clock=clock, sleep=clock.sleep)


def test_a_full_bucket_grants_a_minute_of_budget_then_waits_for_the_refill() -> None:
    clock = Clock()
    bucket = limiter(clock)
    bucket.acquire(60_000)
    assert clock.slept == []
    bucket.acquire(1_000)  # 1,000 tokens at 60,000 per minute: one second
    assert sum(clock.slept) == pytest.approx(1.0)


def test_requests_per_minute_are_limited_too() -> None:
    clock = Clock()
    bucket = limiter(clock, rpm=60)
    for _ in range(60):
        bucket.acquire(1)
    bucket.acquire(1)
    assert sum(clock.slept) == pytest.approx(1.0)


def test_headroom_keeps_the_bucket_below_the_account_limit() -> None:
    clock = Clock()
    bucket = LocalRateLimiter(60_000, 600, headroom=0.9, clock=clock, sleep=clock.sleep)
    assert bucket.available()[0] == pytest.approx(54_000)
    bucket.acquire(54_000)
    bucket.acquire(900)  # refills at 0.9 * 60,000 per minute: 900 tokens a second
    assert sum(clock.slept) == pytest.approx(1.0)


def test_remaining_headers_lower_the_bucket_so_clients_slow_down_early() -> None:
    clock = Clock()
    bucket = limiter(clock)
    bucket.observe_headers(
        {"x-ratelimit-remaining-tokens": "2000", "x-ratelimit-remaining-requests": "599"}
    )
    assert bucket.available()[0] == pytest.approx(2_000)
    bucket.acquire(3_000)
    assert sum(clock.slept) == pytest.approx(1.0)
    bucket.observe_headers({"x-ratelimit-remaining-tokens": "59000"})  # never raises it
    assert bucket.available()[0] == pytest.approx(0)


def test_a_request_larger_than_the_bucket_waits_for_a_full_bucket_instead_of_forever() -> None:
    clock = Clock()
    bucket = limiter(clock, tpm=1_000)
    bucket.acquire(5_000)
    assert clock.slept == []
    bucket.acquire(500)  # the debt of 4,000 plus 500 must refill: 4.5 minutes
    assert sum(clock.slept) == pytest.approx(270.0)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-reset-requests": "20ms"}, 360.0),
        ({"x-ratelimit-reset-tokens": "1.5s"}, 1.5),
        ({}, None),
        ({"retry-after": "soon"}, None),
    ],
)
def test_retry_after_headers_are_read_like_the_api_sends_them(
    headers: dict[str, str], seconds: float | None
) -> None:
    assert retry_after_seconds(headers) == (pytest.approx(seconds) if seconds else None)
