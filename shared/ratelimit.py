"""Rate limiting for the embeddings API: one token bucket per account limit, shared by the fleet.

OpenAI limits an account in tokens per minute (TPM) and requests per minute (RPM). Every worker
that embeds takes from the same two buckets before it sends a request, so ten workers together
stay under the limits instead of each one discovering them through 429s. The buckets live in
Redis (one atomic Lua script, Redis' own clock) when there is a broker, or in the process for the
embedded default.

Each bucket holds at most `headroom` times a minute's budget and refills continuously at the
same fraction of the limit. The headroom leaves the API's own bucket a margin for clock skew and
requests that arrive out of order. The `x-ratelimit-remaining-*` headers of every answer are fed
back with `observe_headers`: when the API says less is left than our bucket thinks (another
client on the same account, a restart), the bucket drops to match, so the fleet slows down early.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

DEFAULT_HEADROOM = 0.95
# A bucket idle this long is full again; its Redis keys expire after it.
_IDLE_EXPIRY_MS = 120_000


class RateLimiter(Protocol):
    """Blocks callers until the account's per-minute budgets allow their request."""

    def acquire(self, tokens: int, requests: int = 1) -> None:
        """Wait until `tokens` and `requests` are available, then take them."""
        ...

    def observe_headers(self, headers: Mapping[str, str]) -> None:
        """Lower the buckets to what the API's `x-ratelimit-remaining-*` headers report."""
        ...


@dataclass(frozen=True)
class RemainingHint:
    """What an API answer says is left of the account's minute budgets (None: not said)."""

    tokens: int | None
    requests: int | None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> RemainingHint:
        return cls(
            tokens=_parse_int(headers.get("x-ratelimit-remaining-tokens")),
            requests=_parse_int(headers.get("x-ratelimit-remaining-requests")),
        )


def _parse_int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(float(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class _Limits:
    """Capacity and refill rate of both buckets, derived from the per-minute limits."""

    tokens_capacity: float
    requests_capacity: float
    tokens_margin: float
    requests_margin: float

    @classmethod
    def of(cls, tokens_per_minute: int, requests_per_minute: int, headroom: float) -> _Limits:
        if not 0 < headroom <= 1:
            raise ValueError("headroom must be in (0, 1]")
        return cls(
            tokens_capacity=tokens_per_minute * headroom,
            requests_capacity=max(requests_per_minute * headroom, 1.0),
            tokens_margin=tokens_per_minute * (1 - headroom),
            requests_margin=requests_per_minute * (1 - headroom),
        )


class LocalRateLimiter:
    """The in-process limiter of the embedded default: same buckets, shared by threads."""

    def __init__(
        self,
        tokens_per_minute: int,
        requests_per_minute: int,
        *,
        headroom: float = DEFAULT_HEADROOM,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._limits = _Limits.of(tokens_per_minute, requests_per_minute, headroom)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = self._limits.tokens_capacity
        self._requests = self._limits.requests_capacity
        self._stamp = clock()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(now - self._stamp, 0.0)
        self._stamp = now
        limits = self._limits
        self._tokens = min(
            limits.tokens_capacity, self._tokens + elapsed * limits.tokens_capacity / 60
        )
        self._requests = min(
            limits.requests_capacity, self._requests + elapsed * limits.requests_capacity / 60
        )

    def available(self) -> tuple[float, float]:
        """Tokens and requests in the buckets now (for logs and tests)."""
        with self._lock:
            self._refill()
            return self._tokens, self._requests

    def acquire(self, tokens: int, requests: int = 1) -> None:
        limits = self._limits
        # A request larger than the bucket waits for a full bucket and leaves it in debt.
        need_tokens = min(float(tokens), limits.tokens_capacity)
        need_requests = min(float(requests), limits.requests_capacity)
        while True:
            with self._lock:
                self._refill()
                if self._tokens >= need_tokens and self._requests >= need_requests:
                    self._tokens -= tokens
                    self._requests -= requests
                    return
                wait = max(
                    (need_tokens - self._tokens) * 60 / limits.tokens_capacity,
                    (need_requests - self._requests) * 60 / limits.requests_capacity,
                )
            self._sleep(max(wait, 0.001))

    def observe_headers(self, headers: Mapping[str, str]) -> None:
        hint = RemainingHint.from_headers(headers)
        with self._lock:
            self._refill()
            limits = self._limits
            if hint.tokens is not None:
                self._tokens = min(self._tokens, max(hint.tokens - limits.tokens_margin, 0))
            if hint.requests is not None:
                self._requests = min(self._requests, max(hint.requests - limits.requests_margin, 0))


# KEYS[1]: tokens bucket, KEYS[2]: requests bucket (hashes with `level` and `stamp` in ms).
# ARGV: capacities, costs (0 to only refill), floors from headers (-1: none), expiry ms.
# Returns 0 when the costs were taken, else the milliseconds to wait before trying again.
_BUCKET_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local caps = {tonumber(ARGV[1]), tonumber(ARGV[2])}
local costs = {tonumber(ARGV[3]), tonumber(ARGV[4])}
local floors = {tonumber(ARGV[5]), tonumber(ARGV[6])}
local expiry = tonumber(ARGV[7])
local levels = {}
local wait = 0
for i = 1, 2 do
  local state = redis.call('HMGET', KEYS[i], 'level', 'stamp')
  local level = tonumber(state[1])
  local stamp = tonumber(state[2])
  if level == nil or stamp == nil then
    level = caps[i]
  else
    level = math.min(caps[i], level + math.max(now - stamp, 0) * caps[i] / 60000)
  end
  if floors[i] >= 0 and floors[i] < level then
    level = floors[i]
  end
  levels[i] = level
  local need = math.min(costs[i], caps[i])
  if level < need then
    wait = math.max(wait, math.ceil((need - level) * 60000 / caps[i]))
  end
end
for i = 1, 2 do
  local level = levels[i]
  if wait == 0 then
    level = level - costs[i]
  end
  redis.call('HSET', KEYS[i], 'level', tostring(level), 'stamp', now)
  redis.call('PEXPIRE', KEYS[i], expiry)
end
return wait
"""


class RedisRateLimiter:
    """The fleet-wide limiter: both buckets in Redis, changed only by one atomic script."""

    def __init__(
        self,
        redis_client: Any,
        key_prefix: str,
        tokens_per_minute: int,
        requests_per_minute: int,
        *,
        headroom: float = DEFAULT_HEADROOM,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._limits = _Limits.of(tokens_per_minute, requests_per_minute, headroom)
        self._keys = [f"{key_prefix}:tokens", f"{key_prefix}:requests"]
        self._script = redis_client.register_script(_BUCKET_SCRIPT)
        self._sleep = sleep

    @property
    def keys(self) -> list[str]:
        """The Redis keys of the two buckets."""
        return list(self._keys)

    def _run(self, tokens: float, requests: float, floors: tuple[float, float]) -> int:
        limits = self._limits
        args = [
            limits.tokens_capacity,
            limits.requests_capacity,
            tokens,
            requests,
            floors[0],
            floors[1],
            _IDLE_EXPIRY_MS,
        ]
        return int(self._script(keys=self._keys, args=args))

    def acquire(self, tokens: int, requests: int = 1) -> None:
        while True:
            wait_ms = self._run(tokens, requests, (-1, -1))
            if wait_ms <= 0:
                return
            self._sleep(wait_ms / 1000)

    def observe_headers(self, headers: Mapping[str, str]) -> None:
        hint = RemainingHint.from_headers(headers)
        if hint.tokens is None and hint.requests is None:
            return
        limits = self._limits
        floors = (
            -1 if hint.tokens is None else max(hint.tokens - limits.tokens_margin, 0),
            -1 if hint.requests is None else max(hint.requests - limits.requests_margin, 0),
        )
        self._run(0, 0, floors)

    def available(self) -> tuple[float, float]:
        """Tokens and requests in the buckets now (for logs and tests)."""
        levels = []
        self._run(0, 0, (-1, -1))  # refill and stamp, so the stored levels are current
        client = self._script.registered_client
        for key in self._keys:
            levels.append(float(client.hget(key, "level") or 0))
        return levels[0], levels[1]
