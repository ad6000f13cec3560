"""Real services for tests: a Postgres database of the test run's own, a Redis database."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import redis
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from shared.models import Base

# A database the test run may connect to in order to create (and drop) its own database.
ADMIN_URL = os.environ.get("TEST_POSTGRES_ADMIN_URL", "postgresql+psycopg://127.0.0.1:5432/test")
REDIS_SERVER = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379")


@contextmanager
def temporary_postgres_database() -> Iterator[str]:
    """CREATE a fresh database for this run, yield its URL, DROP it at the end."""
    name = f"ingest_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
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


@contextmanager
def reserved_redis_database() -> Iterator[str]:
    """A Redis database number (1-15) no other test run is using, emptied, as a URL."""
    control = redis.Redis.from_url(f"{REDIS_SERVER}/0")
    token = uuid.uuid4().hex
    for number in range(1, 16):
        key = f"ingest-tests:redis-db:{number}"
        if control.set(key, token, nx=True, ex=3 * 3600):
            break
    else:
        raise RuntimeError("all Redis databases 1-15 are reserved by other test runs")
    url = f"{REDIS_SERVER}/{number}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    try:
        yield url
    finally:
        client.flushdb()
        client.close()
        if control.get(key) == token.encode():
            control.delete(key)
        control.close()


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` served on a free port of 127.0.0.1 in a thread (a stand-in CMS), as its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
