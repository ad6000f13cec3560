"""Whether anything is taking work: the signal behind `/readyz`'s `processing`, the metric
`ingest_oldest_waiting_seconds` and the editors' banner.

Two readings, because each alone misleads: Celery's own ping says whether workers answer
(none at all: uploads wait forever), and the age of the oldest version nobody holds says
whether work actually moves (workers that answer but consume another queue, or are all busy
for an hour, look alive to a ping). The ping is a broadcast with a timeout, so its answer is
kept for a few seconds: probes every second must not each wait for it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from shared import repository as repo
from shared.db import transaction
from shared.models import utcnow
from shared.settings import Settings

PING_TIMEOUT_SECONDS = 1.0
PING_KEPT_SECONDS = 15.0
_ping_lock = threading.Lock()
_last_ping: tuple[float, int] | None = None  # (monotonic time, workers that answered)


@dataclass(frozen=True)
class Processing:
    workers: str  # "in-process" (no broker), "none", or how many answered
    oldest_waiting_seconds: float | None
    stalled: bool


def oldest_waiting_seconds() -> float | None:
    with transaction() as session:
        since = repo.oldest_waiting_since(session)
    return None if since is None else max((utcnow() - since).total_seconds(), 0.0)


def answering_workers() -> int:
    """How many Celery workers answered a ping (kept for PING_KEPT_SECONDS)."""
    global _last_ping
    with _ping_lock:
        if _last_ping and time.monotonic() - _last_ping[0] < PING_KEPT_SECONDS:
            return _last_ping[1]
        from worker.app import app  # imported here: the worker package is heavy

        try:
            replies = app.control.ping(timeout=PING_TIMEOUT_SECONDS) or []
        except Exception:  # a broker that is down: reported by the broker check
            replies = []
        _last_ping = (time.monotonic(), len(replies))
        return len(replies)


def processing(settings: Settings) -> Processing:
    waiting = oldest_waiting_seconds()
    stalled = waiting is not None and waiting > settings.processing_stall_seconds
    if not settings.redis_url:
        return Processing("in-process", waiting, stalled)
    count = answering_workers()
    return Processing(str(count) if count else "none", waiting, stalled)
