"""Every JSON route's body is capped before it is read.

A 300 MB search body from the chatbot's key would take the API from 257 to 980 MB. A
Content-Length over the limit is a 413 at once, and a body without one (chunked) is cut off
when it passes the limit. Real API on the real Postgres and Redis.
"""

from __future__ import annotations

import socket
import uuid

from fastapi.testclient import TestClient

from api.app import create_app
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, answer_of
from tests.support.web import ServedApp

SEARCH_LIMIT = 16 * 1024  # SEARCH_MAX_BODY_BYTES' default
JSON_LIMIT = 64 * 1024  # MAX_JSON_BODY_BYTES' default


def test_the_limits_default_to_a_few_kilobytes(api_settings: Settings) -> None:
    assert api_settings.search_max_body_bytes == SEARCH_LIMIT
    assert api_settings.max_json_body_bytes == JSON_LIMIT


def test_a_search_body_announced_too_large_is_refused_before_it_is_sent(
    api_settings: Settings,
) -> None:
    """Only the request's head goes out; the 413 comes anyway (before, the API waited for and
    read all 300 MB)."""
    with ServedApp(create_app(api_settings)) as base_url:
        host, port = base_url.removeprefix("http://").split(":")
        head = (
            f"POST /v1/search HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {EDITOR_KEY}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {300 * 1024 * 1024}\r\n\r\n"
        )
        with socket.create_connection((host, int(port)), timeout=5) as connection:
            connection.sendall(head.encode())
            answer = answer_of(connection)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"application/problem+json" in answer and b"connection: close" in answer.lower()
    assert b"SEARCH_MAX_BODY_BYTES" in answer and f'"limit_bytes":{SEARCH_LIMIT}'.encode() in answer


def test_a_chunked_search_body_is_cut_off_at_the_limit(api_settings: Settings) -> None:
    """No Content-Length: 20 KB of chunks are sent and the body is left open. The 413 comes
    once the limit is passed, without waiting for the rest (before, the API read on)."""
    with ServedApp(create_app(api_settings)) as base_url:
        host, port = base_url.removeprefix("http://").split(":")
        head = (
            f"POST /v1/search HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {EDITOR_KEY}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"400\r\n" + b"a" * 1024 + b"\r\n"  # 1 KB
        with socket.create_connection((host, int(port)), timeout=5) as connection:
            connection.sendall(head.encode() + b'b\r\n{"query": "\r\n' + chunk * 20)
            answer = answer_of(connection)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"application/problem+json" in answer and b"SEARCH_MAX_BODY_BYTES" in answer


def test_a_search_body_within_the_limit_is_read(client: TestClient) -> None:
    response = client.post("/v1/search", json={"query": "knie", "nonsense": "x" * 10_000})
    assert response.status_code == 422  # read and judged: an unknown field


def test_other_json_routes_have_the_general_limit(client: TestClient) -> None:
    path = f"/v1/documents/{uuid.uuid4()}/reingest"
    refused = client.post(path, content=b"{}" + b" " * JSON_LIMIT)
    assert refused.status_code == 413
    assert refused.json()["limit_bytes"] == JSON_LIMIT
    assert "MAX_JSON_BODY_BYTES" in refused.json()["detail"]
    assert client.post(path, content=b"{}").status_code == 404  # within it: the route answers


def test_uploads_keep_their_own_limit(client: TestClient) -> None:
    body = b"# Knie\n\n" + b"Tekst. " * (100 * 1024 // 7)  # over 64 KB, under the upload limit
    response = client.post("/v1/documents", files={"file": ("knie.md", body)})
    assert response.status_code == 202, response.text
