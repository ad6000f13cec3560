"""Real services for tests: a Postgres database of the test run's own, a Redis database. Which
servers they are on is chosen in `tests/support/private_services.py` (the session's
`postgres_admin_url` and `redis_server_url` fixtures)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, urlunsplit

import redis
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from shared.models import Base
from tests.support.private_services import free_port as free_port  # the one place it is written


@contextmanager
def temporary_postgres_database(admin_url: str) -> Iterator[str]:
    """CREATE a fresh database for this run through `admin_url` (a database the run may connect
    to), yield its URL, DROP it at the end."""
    name = f"ingest_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        sa.engine.create_engine(url).dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def truncate_all(url: str) -> None:
    """Empty every table (faster than re-migrating between tests)."""
    engine = sa.create_engine(url)
    names = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    with engine.begin() as conn:
        conn.execute(sa.text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    engine.dispose()


OWNED = "ingest-tests:owned"  # inside a database the test suite holds: set by the suite only


def make_url_redis(server: str, number: int) -> str:
    """`server` (redis://host:port[/n]) pointed at database `number`."""
    parts = urlsplit(server)
    return urlunsplit(parts._replace(path=f"/{number}"))


def chosen_redis_database(server: str) -> int | None:
    """The database number in `TEST_REDIS_URL` (`redis://host:6379/5` -> 5), or None."""
    path = urlsplit(server).path.strip("/")
    return int(path) if path.isdigit() else None


def holds_only_suite_keys(client: redis.Redis) -> bool:
    """True when the database is empty or was held by a test run before (its marker is there):
    only then may the suite empty it. Stops at the first key of somebody else's."""
    if client.exists(OWNED):
        return True
    return all(key.startswith(b"ingest-tests:") for key in client.scan_iter(count=100))


def empty_redis_database(url: str) -> None:
    """Empty the test run's own database (never another): keeps the marker that says so."""
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.set(OWNED, "1")
    client.close()


@contextmanager
def reserved_redis_database(server: str) -> Iterator[str]:
    """A Redis database of `server` for this test run, as a URL. `TEST_REDIS_URL` with a number
    (`redis://127.0.0.1:6379/5`) is used as given; without one the first database of 1-15 that no
    other run has reserved is taken. Either way the suite empties a database only when it holds
    nothing but the suite's own keys (empty, or left by an earlier run): somebody else's data is
    never flushed, the run stops with a message instead."""
    chosen = chosen_redis_database(server)
    control = redis.Redis.from_url(make_url_redis(server, 0))
    token = uuid.uuid4().hex
    candidates = [chosen] if chosen is not None else list(range(1, 16))
    refused: list[int] = []
    for number in candidates:
        key = f"ingest-tests:redis-db:{number}"
        if not control.set(key, token, nx=True, ex=3 * 3600):
            continue  # another test run holds it
        client = redis.Redis.from_url(make_url_redis(server, number))
        if holds_only_suite_keys(client):
            break
        refused.append(number)
        client.close()
        control.delete(key)
    else:
        control.close()
        if chosen is not None:
            raise RuntimeError(
                f"Redis database {chosen} ({server}) is in use by another test run or holds "
                "data that is not the tests': choose another number in TEST_REDIS_URL"
            )
        raise RuntimeError(
            "no Redis database of 1-15 is free for the tests (reserved by other runs, or holding "
            f"data that is not the tests': {refused}); name one in TEST_REDIS_URL, e.g. "
            "redis://127.0.0.1:6379/9"
        )
    url = make_url_redis(server, number)
    empty_redis_database(url)
    try:
        yield url
    finally:
        client.flushdb()
        client.close()
        if control.get(key) == token.encode():
            control.delete(key)
        control.close()


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler], port: int = 0) -> Iterator[str]:
    """`handler` served on `port` (0: a free one) of 127.0.0.1 in a thread (a stand-in CMS), as
    its URL. A test that must list the port in CONTENT_FETCH_ALLOWED_HOSTS before the CMS
    starts takes one from `free_port()`."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
