"""The tests' own Redis reservation: a chosen database is used as given, and no database holding
somebody else's data is ever emptied. Needs a Redis server (`redis_server_url`), nothing else."""

from __future__ import annotations

import uuid

import pytest
import redis

from tests.support.services import chosen_redis_database, make_url_redis, reserved_redis_database


def test_the_number_in_the_url_is_the_chosen_database() -> None:
    assert chosen_redis_database("redis://127.0.0.1:6379/5") == 5
    assert chosen_redis_database("redis://127.0.0.1:6379") is None
    assert make_url_redis("redis://h:1/5", 7) == "redis://h:1/7"


def free_database(server: str) -> int:
    """A database of 1-15 neither reserved by a test run nor holding data right now."""
    control = redis.Redis.from_url(make_url_redis(server, 0))
    for number in range(15, 0, -1):
        client = redis.Redis.from_url(make_url_redis(server, number))
        if not control.exists(f"ingest-tests:redis-db:{number}") and client.dbsize() == 0:
            return number
    pytest.fail("no free Redis database to try the reservation on")


def test_a_chosen_database_is_used_as_given(redis_server_url: str) -> None:
    number = free_database(redis_server_url)
    with reserved_redis_database(make_url_redis(redis_server_url, number)) as url:
        assert url.endswith(f"/{number}")
        redis.Redis.from_url(url).set("some-celery-key", "x")
    assert redis.Redis.from_url(url).dbsize() == 0  # what the run wrote is gone


def test_a_database_with_somebody_elses_data_is_refused_not_flushed(redis_server_url: str) -> None:
    number = free_database(redis_server_url)
    theirs = redis.Redis.from_url(make_url_redis(redis_server_url, number))
    key = f"someone-elses-{uuid.uuid4().hex}"
    theirs.set(key, "precious")
    try:
        with (
            pytest.raises(RuntimeError, match="holds data that is not the tests'"),
            reserved_redis_database(make_url_redis(redis_server_url, number)),
        ):
            pass
        assert theirs.get(key) == b"precious"
    finally:
        theirs.delete(key)
