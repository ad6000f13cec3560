"""One convert message for many new pages.

A convert task takes, when it starts, every page waiting in `received` (up to
`STAGE_BATCH_VERSIONS`). So while one convert message is queued and not yet started, a new page
needs no message of its own: that task will take it. A flag in Redis says so: set by the
sender of a message (if it was not set already), cleared by a convert task when it starts,
before it claims. A page committed before the flag was cleared is claimed by that task; one
committed after finds the flag cleared and sends a message. If the flag outlives a lost
message, it expires (`FLAG_SECONDS`) and the reaper sends what waited longer than
`RECEIVED_GRACE_SECONDS`.
"""

from __future__ import annotations

import functools

import redis

from shared.log import get_logger
from shared.settings import get_settings

log = get_logger(__name__)
FLAG = "ingest:convert:queued"
FLAG_SECONDS = 30


@functools.cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)


def message_needed() -> bool:
    """True (and the flag set) when no convert message is queued unstarted; True as well when
    Redis does not answer (a message too many is harmless, a missing one is not)."""
    url = get_settings().redis_url
    if not url:
        return True
    try:
        return bool(_client(url).set(FLAG, "1", nx=True, ex=FLAG_SECONDS))
    except redis.RedisError as exc:
        log.warning("could not read the convert flag; sending a message", error=repr(exc))
        return True


def convert_started() -> None:
    """A convert task starts: pages committed from now on need a message of their own."""
    url = get_settings().redis_url
    if not url:
        return
    try:
        _client(url).delete(FLAG)
    except redis.RedisError as exc:  # the flag expires on its own
        log.warning("could not clear the convert flag", error=repr(exc))
