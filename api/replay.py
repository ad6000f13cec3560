"""Each accepted webhook signature is remembered for as long as it could still be valid, so
the same signed request is applied once, whatever delivery id or headers come with it.

A signature binds its timestamp and body; one is accepted up to `tolerance` seconds either
side of now, so it is remembered for twice that. The memory is Redis (`SET NX EX`: shared by
every API process), or this process's own dict when no Redis is configured (the embedded
default). When Redis is down the request goes on (logged): the delivery id, recorded in
Postgres with the version, still makes a replayed event change nothing.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time

import redis

log = logging.getLogger(__name__)

KEY_PREFIX = "ingest:webhook:signature:"


class SignatureMemory:
    def __init__(self, redis_url: str | None, tolerance_seconds: int) -> None:
        self.ttl = max(2 * tolerance_seconds, 1)
        self._redis = (
            redis.Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=2)
            if redis_url
            else None
        )
        self._local: dict[str, float] = {}
        self._lock = threading.Lock()

    def claim(self, signature: str) -> bool:
        """True the first time `signature` is presented within its lifetime, else False."""
        if self._redis is not None:
            try:
                return bool(self._redis.set(KEY_PREFIX + signature, 1, nx=True, ex=self.ttl))
            except redis.RedisError as exc:
                log.warning("webhook replay memory unavailable (%s); delivery ids still guard", exc)
                return True
        now = time.monotonic()
        with self._lock:
            for key in [k for k, until in self._local.items() if until < now]:
                del self._local[key]
            if signature in self._local:
                return False
            self._local[signature] = now + self.ttl
            return True

    def forget(self, signature: str) -> None:
        """The request was not applied (refused or failed): its sender may try it again."""
        if self._redis is not None:
            with contextlib.suppress(redis.RedisError):
                self._redis.delete(KEY_PREFIX + signature)
            return
        with self._lock:
            self._local.pop(signature, None)
