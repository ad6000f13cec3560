"""The fleet-wide rate limiter in Redis: separate clients share one budget and cause no 429s."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from shared.adapters.openai_embeddings import OpenAIEmbedder
from shared.errors import TransientError
from shared.ratelimit import LocalRateLimiter, RateLimiter, RedisRateLimiter
from shared.tokens import count_tokens
from tests.support.fakes.openai_server import FakeOpenAI

BUDGET = 60_000  # tokens per minute, for the account (stand-in) and the limiter alike


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own in the run's Redis database; its keys are deleted
    afterwards (never FLUSHDB)."""
    name = f"test:ratelimit:{uuid.uuid4().hex}"
    yield name
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(f"{name}:*"))
    if keys:
        client.delete(*keys)


def redis_limiter(url: str, prefix: str, tpm: int = BUDGET, rpm: int = 3_000) -> RedisRateLimiter:
    """Each caller gets its own connection, as separate worker processes would."""
    return RedisRateLimiter(redis.Redis.from_url(url), prefix, tpm, rpm)


def text_of_tokens(prefix: str, tokens: int) -> str:
    text = prefix + " hello" * (tokens - count_tokens(prefix))
    assert count_tokens(text) == tokens
    return text


def run_workers(fake: FakeOpenAI, limiters: list[RateLimiter], texts_each: int) -> list[Exception]:
    """Three workers, each with its own SDK client, embed 2,000-token texts, 6,000 per request."""
    errors: list[Exception] = []

    def work(number: int, limiter: RateLimiter) -> None:
        embedder = OpenAIEmbedder(
            api_key="sk-test",
            base_url=fake.base_url,
            max_request_tokens=6_000,
            max_retries=0,  # a 429 would surface as an error instead of being retried away
            limiter=limiter,
        )
        texts = [text_of_tokens(f"Worker {number} text {i}:", 2_000) for i in range(texts_each)]
        try:
            embedder.embed(texts)
        except TransientError as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(n, limiter)) for n, limiter in enumerate(limiters)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


def test_three_workers_sharing_the_redis_limiter_get_no_429(prefix: str, redis_url: str) -> None:
    # 72,000 tokens against a 60,000 TPM budget that starts full: the last 12,000 or more
    # must wait for the refill (about 1,000 tokens a second), so the limiter has to throttle.
    with FakeOpenAI(tokens_per_minute=BUDGET) as fake:
        started = time.monotonic()
        limiters: list[RateLimiter] = [redis_limiter(redis_url, prefix) for _ in range(3)]
        errors = run_workers(fake, limiters, texts_each=12)
        elapsed = time.monotonic() - started
    assert errors == []
    assert fake.count(429) == 0
    assert fake.tokens_accepted() == 72_000
    assert len(fake.requests) == 12
    assert elapsed >= (72_000 - BUDGET) / (BUDGET / 60)  # it did wait for the refill


def test_without_a_shared_limiter_the_same_workers_hit_429s(prefix: str) -> None:
    """The control: each worker with a bucket of its own overspends the account at once."""
    with FakeOpenAI(tokens_per_minute=BUDGET) as fake:
        errors = run_workers(fake, [LocalRateLimiter(BUDGET, 3_000) for _ in range(3)], 12)
    assert fake.count(429) >= 1
    assert errors and all(e.code == "embedding_unavailable" for e in errors)


def test_clients_share_one_bucket_and_the_headers_lower_it_for_all(
    prefix: str, redis_url: str
) -> None:
    first = redis_limiter(redis_url, prefix, tpm=600_000)
    second = redis_limiter(redis_url, prefix, tpm=600_000)
    tokens, _ = first.available()
    assert tokens == pytest.approx(570_000, abs=1_000)  # 95% headroom of a full minute
    first.acquire(500_000)
    assert second.available()[0] < 80_000
    second.observe_headers({"x-ratelimit-remaining-tokens": "40000"})  # margin of 30,000 kept
    assert first.available()[0] < 20_000


def test_acquire_waits_for_the_refill(prefix: str, redis_url: str) -> None:
    limiter = redis_limiter(redis_url, prefix, tpm=600_000)  # refills 9,500 tokens a second
    limiter.acquire(570_000)
    started = time.monotonic()
    limiter.acquire(4_750)
    assert time.monotonic() - started >= 0.45


def test_the_buckets_expire_when_idle(prefix: str, redis_url: str) -> None:
    limiter = redis_limiter(redis_url, prefix)
    limiter.acquire(100)
    client = redis.Redis.from_url(redis_url)
    for key in limiter.keys:
        assert 0 < client.pttl(key) <= 120_000
