"""Shared helpers for the API tests: settings for a test app, clients, signed webhooks, counts.

A helper module (not a conftest): test modules import what they need. The app runs against
the real Postgres (`pg`) and the real Redis (`redis_url`), so `enqueue_version` publishes to a
real broker; nothing of ours is replaced.
"""

from __future__ import annotations

import io
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.app import create_app
from api.webhook import sign
from shared.settings import Settings, get_settings
from tests.support.services import empty_redis_database

EDITOR_KEY = "editor-key-0123456789"
BARE_KEY = "bare-key-9876543210"
API_KEYS = f"editors:{EDITOR_KEY},{BARE_KEY}"
WEBHOOK_SECRET = "whsec-test-0123456789"
OLD_WEBHOOK_SECRET = "whsec-old-0123456789"
MAX_UPLOAD_BYTES = 256 * 1024

MARKDOWN = (
    "# Knieoperatie\n\n## Voorbereiding\n\nNeem uw identiteitskaart mee naar het ziekenhuis.\n"
)


def point_celery_at_current_settings() -> None:
    """Re-apply the settings to the Celery app, so `enqueue_version` publishes to the broker
    the test chose."""
    from worker.app import app, configure

    configure(app, get_settings())


def use_settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    point_celery_at_current_settings()
    return get_settings()


@pytest.fixture
def api_settings(pg: str, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """Keys, webhook secret, a small upload limit, the test run's Postgres and Redis db."""
    monkeypatch.delenv("QDRANT_URL", raising=False)
    empty_redis_database(redis_url)  # no messages left by an earlier test
    yield use_settings(
        monkeypatch,
        API_KEYS=API_KEYS,
        CMS_WEBHOOK_SECRET=WEBHOOK_SECRET,
        MAX_UPLOAD_BYTES=str(MAX_UPLOAD_BYTES),
        REDIS_URL=redis_url,
    )
    empty_redis_database(redis_url)  # no chain messages left for a later worker
    get_settings.cache_clear()
    point_celery_at_current_settings()


@pytest.fixture
def client(api_settings: Settings) -> Iterator[TestClient]:
    """A client that sends the editors' key."""
    with TestClient(
        create_app(api_settings), headers={"Authorization": f"Bearer {EDITOR_KEY}"}
    ) as test_client:
        yield test_client


@pytest.fixture
def anonymous(api_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(api_settings)) as test_client:
        yield test_client


def count(url: str, table: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(sa.text(f'SELECT count(*) FROM "{table}"')).scalar_one())
    finally:
        engine.dispose()


def rows(url: str, query: str, **params: Any) -> list[sa.Row[Any]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(sa.text(query), params).all())
    finally:
        engine.dispose()


def cms_event(
    event: str, page_id: str, body: str | None = MARKDOWN, delivery: str | None = None, **page: Any
) -> dict[str, Any]:
    content: dict[str, Any] = {"id": page_id, **page}
    if body is not None:
        content["body"] = body
    return {
        "id": delivery or f"delivery-{event}-{page_id}-{time.time_ns()}",
        "event": event,
        "page": content,
    }


def signed_headers(
    body: bytes, *, secret: str = WEBHOOK_SECRET, at: int | None = None, extra_v1: str = ""
) -> dict[str, str]:
    timestamp = int(time.time()) if at is None else at
    signature = f"t={timestamp},v1={sign(secret, timestamp, body)}"
    if extra_v1:
        signature = f"t={timestamp},v1={extra_v1},v1={sign(secret, timestamp, body)}"
    return {"X-Signature": signature, "Content-Type": "application/json"}


def post_event(client: TestClient, event: dict[str, Any], **sign_options: Any) -> Any:
    body = json.dumps(event).encode()
    return client.post(
        "/v1/webhooks/cms", content=body, headers=signed_headers(body, **sign_options)
    )


def answer_of(connection: socket.socket) -> bytes:
    """The whole answer of a server that closes the connection after it (`Connection: close`);
    `recv` times out if the server waits for a body instead."""
    parts = []
    while part := connection.recv(65536):
        parts.append(part)
    return b"".join(parts)


def upload(http: TestClient, *files: tuple[str, bytes], **form: object) -> object:
    parts = [("file", (name, io.BytesIO(data), "application/octet-stream")) for name, data in files]
    return http.post("/v1/documents", files=parts, data=form)


def assert_problem(response: object, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status
    assert "Traceback" not in response.text
    return body
