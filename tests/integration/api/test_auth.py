"""What a scoped key may read, and the scope checked before the body.

The chatbot's search-only key must not read documents, versions, events or chunks, and must
not make the API read an upload's body before its 403. Real API, Postgres and Redis.
"""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from api.app import create_app
from api.auth import declared_scope
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, answer_of, use_settings
from tests.support.web import ServedApp

CHATBOT_KEY = "chatbot-key-0123456789"
READER_KEY = "reader-key-0123456789"
KEYS = f"editors:{EDITOR_KEY},chatbot:{CHATBOT_KEY}:search,reader:{READER_KEY}:read"


@pytest.fixture
def scoped_settings(api_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return use_settings(monkeypatch, API_KEYS=KEYS)


@pytest.fixture
def app_client(scoped_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(scoped_settings)) as client:
        yield client


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_reading_documents_needs_the_read_scope(app_client: TestClient) -> None:
    upload = app_client.post(
        "/v1/documents",
        files={"file": ("knie.md", io.BytesIO(b"# Knie\n\nTekst.\n"))},
        headers=bearer(EDITOR_KEY),
    )
    assert upload.status_code == 202, upload.text
    document_id = upload.json()["documents"][0]["document_id"]
    reads = [
        "/v1/documents",
        "/v1/documents/sources",
        f"/v1/documents/{document_id}",
        f"/v1/documents/{document_id}/chunks",
        f"/v1/documents/{document_id}/versions/1/file",
    ]
    for path in reads:
        refused = app_client.get(path, headers=bearer(CHATBOT_KEY))
        assert refused.status_code == 403, path
        problem = refused.json()
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert problem["required_scope"] == "read" and "'read' scope" in problem["detail"]
        assert "Tekst" not in refused.text and "knie.md" not in refused.text
        assert app_client.get(path, headers=bearer(READER_KEY)).status_code == 200, path
        assert app_client.get(path, headers=bearer(EDITOR_KEY)).status_code == 200, path
    # read is only reading
    assert app_client.delete(reads[2], headers=bearer(READER_KEY)).status_code == 403
    assert (
        app_client.post("/v1/search", json={"query": "knie"}, headers=bearer(READER_KEY)).json()[
            "required_scope"
        ]
        == "search"
    )


def test_every_key_protected_route_declares_its_scope(scoped_settings: Settings) -> None:
    """The one place a route's scope is stated is its `require_scope` dependency; a /v1 route
    without one would be open to every key (the signed webhook has no key at all)."""
    app = create_app(scoped_settings)
    undeclared = [
        (route.path, sorted(route.methods or ()))
        for route in iter_route_contexts(app.routes)
        if isinstance(route.original_route, APIRoute)
        and route.path.startswith("/v1/")
        and not route.path.startswith("/v1/webhooks/")
        and route.original_route.include_in_schema  # the 405 stand-ins take no key's data
        and declared_scope(route.original_route.dependant) is None
    ]
    assert undeclared == []


def _send_head(base_url: str, head: str) -> bytes:
    """Send only a request's head and return the first answer bytes (a server that waits for
    the body makes `recv` time out)."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(head.replace("{host}", f"{host}:{port}").encode())
        return answer_of(connection)


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/v1/documents", "multipart/form-data; boundary=xyz"),
        ("/v1/documents/00000000-0000-0000-0000-000000000000/reingest", "application/json"),
    ],
)
def test_a_key_without_the_scope_is_refused_before_the_body(
    scoped_settings: Settings, path: str, content_type: str
) -> None:
    """The chatbot's key sends the head of an upload under the size limit (the probe's was
    40 MB of 50), never its body: the 403 comes at once (before the fix the API waited for,
    then read, the whole body first)."""
    with ServedApp(create_app(scoped_settings)) as base_url:
        answer = _send_head(
            base_url,
            f"POST {path} HTTP/1.1\r\nHost: {{host}}\r\n"
            f"Authorization: Bearer {CHATBOT_KEY}\r\n"
            f"Content-Type: {content_type}\r\nContent-Length: {200 * 1024}\r\n\r\n",
        )
    assert answer.startswith(b"HTTP/1.1 403"), answer[:200]
    assert b"application/problem+json" in answer and b'"required_scope"' in answer


def test_a_key_in_the_query_string_is_refused_before_the_body(scoped_settings: Settings) -> None:
    with ServedApp(create_app(scoped_settings)) as base_url:
        answer = _send_head(
            base_url,
            "POST /v1/search?api_key=x HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {CHATBOT_KEY}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n",
        )
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]


def test_routes_the_router_does_not_have_are_not_guessed(app_client: TestClient) -> None:
    """No route: the router answers (404/405) as before, the key still checked first."""
    headers: dict[str, Any] = bearer(CHATBOT_KEY)
    assert app_client.get("/v1/nothing", headers=headers).status_code == 404
    assert app_client.put("/v1/documents", headers=headers).status_code == 405
    assert app_client.get("/v1/nothing").status_code == 401
