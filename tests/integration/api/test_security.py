"""The service probed as an attacker with a valid key or a captured webhook would:
each refusal through the real API, on the real Postgres and Redis (no worker here; the worker's
side is in tests/system/api/test_security_pipeline.py)."""

from __future__ import annotations

import io
import json
import socket
import time
from typing import Any

import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.app import create_app
from tests.support.api import cms_event, count, post_event, rows, signed_headers
from tests.support.front_matter import billion_laughs
from tests.support.web import ServedApp

URL = "/v1/webhooks/cms"


def upload(client: TestClient, data: bytes, name: str = "page.md", **form: str) -> object:
    return client.post("/v1/documents", files={"file": (name, io.BytesIO(data))}, data=form)


# --- 1. front matter ------------------------------------------------------------------------


def test_a_yaml_bomb_upload_is_a_422_at_once(client: TestClient, pg: str) -> None:
    started = time.monotonic()
    response = upload(client, billion_laughs().encode())
    assert time.monotonic() - started < 5
    assert response.status_code == 422, response.text
    problem = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert problem["title"] == "Front matter refused" and problem["code"] == "front_matter_refused"
    assert "aliases" in problem["detail"]
    deep = b"---\nkey: " + b"[" * 5000 + b"]" * 5000 + b"\n---\n# Knie\n"
    assert upload(client, deep).status_code == 422
    assert count(pg, "document_versions") == 0
    fine = upload(client, b"---\ntitle: Knie\n---\n# Knie\n\nTekst.\n")
    assert fine.status_code == 202


def test_a_yaml_bomb_in_a_webhook_body_is_a_422(anonymous: TestClient, pg: str) -> None:
    response = post_event(anonymous, cms_event("publish", "page-bomb", body=billion_laughs()))
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "front_matter_refused"
    assert count(pg, "document_versions") == 0 and count(pg, "webhook_deliveries") == 0


# --- 2. webhook replays ---------------------------------------------------------------------


def test_a_captured_publish_replayed_with_a_new_delivery_header_is_not_applied(
    anonymous: TestClient, pg: str
) -> None:
    body = json.dumps(cms_event("publish", "page-9", body="# Oud\n\nOude tekst.")).encode()
    headers = signed_headers(body)
    assert anonymous.post(URL, content=body, headers=headers).status_code == 202
    for number in range(3):  # the attacker varies the unsigned header
        replay = anonymous.post(
            URL, content=body, headers={**headers, "X-Delivery-Id": f"fresh-{number}"}
        )
        assert replay.status_code == 200 and replay.json()["duplicate"] is True
    assert count(pg, "document_versions") == 1


def test_a_captured_delete_cannot_remove_a_republished_page(anonymous: TestClient, pg: str) -> None:
    post_event(anonymous, cms_event("publish", "page-5", body="# V1"))
    captured = json.dumps(cms_event("delete", "page-5", body=None)).encode()
    captured_headers = signed_headers(captured)
    assert anonymous.post(URL, content=captured, headers=captured_headers).status_code == 202
    republished = post_event(anonymous, cms_event("publish", "page-5", body="# V2"))
    assert republished.status_code == 202
    replay = anonymous.post(
        URL, content=captured, headers={**captured_headers, "X-Delivery-Id": "new-id"}
    )
    assert replay.status_code == 200 and replay.json()["duplicate"] is True
    (document,) = rows(pg, "SELECT deleted_at FROM documents")
    assert document.deleted_at is None


def test_each_accepted_signature_is_applied_once(anonymous: TestClient, pg: str) -> None:
    """Even when the delivery record is gone (pruned by an operator), the same signed request
    inside its window is not applied again."""
    body = json.dumps(cms_event("publish", "page-6", body="# Een")).encode()
    headers = signed_headers(body)
    assert anonymous.post(URL, content=body, headers=headers).status_code == 202
    engine = sa.create_engine(pg)
    with engine.begin() as connection:
        connection.execute(sa.text("DELETE FROM webhook_deliveries"))
    engine.dispose()
    replay = anonymous.post(URL, content=body, headers=headers)
    assert replay.status_code == 200 and replay.json()["duplicate"] is True
    assert count(pg, "document_versions") == 1


def test_a_refused_event_can_be_sent_again(anonymous: TestClient, pg: str) -> None:
    """Only applied requests are remembered: a 422 leaves the signature free."""
    body = json.dumps(cms_event("publish", "page-7", body=billion_laughs())).encode()
    headers = signed_headers(body)
    for _ in range(2):
        assert anonymous.post(URL, content=body, headers=headers).status_code == 422


def test_the_delivery_id_comes_only_from_the_signed_body(anonymous: TestClient) -> None:
    event = cms_event("publish", "page-8")
    event.pop("id")
    body = json.dumps(event).encode()
    response = anonymous.post(
        URL, content=body, headers={**signed_headers(body), "X-Delivery-Id": "unsigned"}
    )
    assert response.status_code == 422 and "signed" in response.json()["detail"]


# --- 4. only http(s) URLs; the page only at `/` ---------------------------------------------

UNSAFE_URLS = [
    "javascript:alert(document.domain)",
    "data:text/html,<script>x</script>",
    "ftp://a/b",
]


def test_source_urls_other_than_http_are_422(client: TestClient, pg: str) -> None:
    for url in UNSAFE_URLS:
        response = upload(client, b"# Knie\n", source_url=url)
        assert response.status_code == 422, url
        assert "http or https" in response.json()["detail"]
    assert count(pg, "document_versions") == 0
    fine = upload(client, b"# Knie\n", source_url="https://ziekenhuis.example/knie")
    assert fine.status_code == 202


def test_page_urls_other_than_http_are_422(anonymous: TestClient, pg: str) -> None:
    for url in UNSAFE_URLS:
        response = post_event(anonymous, cms_event("publish", "page-1", url=url))
        assert response.status_code == 422, url
        assert response.json()["errors"][0]["loc"][-1] == "url"
    assert count(pg, "document_versions") == 0


def test_the_page_is_served_only_at_the_root(anonymous: TestClient) -> None:
    assert anonymous.get("/static/index.html").status_code == 404
    assert anonymous.get("/static/INDEX.HTML").status_code == 404
    page = anonymous.get("/")
    assert page.status_code == 200
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert anonymous.get("/static/app.js").status_code == 200


# --- 5. deep JSON ---------------------------------------------------------------------------


def test_deeply_nested_json_is_422_not_500(client: TestClient, anonymous: TestClient) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    event = json.dumps(cms_event("publish", "page-1"))[:-1] + f', "extra": {deep}}}'
    body = event.encode()
    response = anonymous.post(URL, content=body, headers=signed_headers(body))
    assert response.status_code == 422, response.text
    for metadata in ('{"a": ' + deep + "}", '{"a": ' + "[" * 30 + "]" * 30 + "}"):
        response = upload(client, b"# Knie\n", metadata=metadata)
        assert response.status_code == 422, response.text
        assert "deeper" in response.json()["detail"]
    ok = upload(client, b"# Knie\n", metadata='{"afdeling": {"naam": "orthopedie"}}')
    assert ok.status_code == 202


# --- 6. the key before the body -------------------------------------------------------------


def test_an_upload_without_a_valid_key_is_refused_before_its_body(api_settings: Any) -> None:
    """A real server: the request's head is sent, its body never; the 401 comes anyway."""
    with ServedApp(create_app(api_settings)) as base_url:
        host, port = base_url.removeprefix("http://").split(":")
        cases = [
            (authorization, size)
            for authorization in ("", "Authorization: Bearer wrong-key\r\n")
            for size in (200 * 1024, 45 * 1024 * 1024)  # under and over the upload limit
        ]
        for authorization, size in cases:
            head = (
                "POST /v1/documents HTTP/1.1\r\n"
                f"Host: {host}:{port}\r\n"
                f"{authorization}"
                "Content-Type: multipart/form-data; boundary=xyz\r\n"
                f"Content-Length: {size}\r\n\r\n"
            )
            with socket.create_connection((host, int(port)), timeout=5) as connection:
                connection.sendall(head.encode())
                answer = connection.recv(4096)  # times out if the server waits for the body
            assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
            assert b"application/problem+json" in answer


def test_the_early_check_accepts_what_the_routes_accept(client: TestClient) -> None:
    assert client.get("/v1/documents").status_code == 200
    assert client.post("/v1/documents/sources").status_code == 405  # routing runs as before


# --- 9. security headers everywhere ---------------------------------------------------------


def test_every_response_carries_the_security_headers(
    client: TestClient, anonymous: TestClient
) -> None:
    responses = {
        "healthz": anonymous.get("/healthz"),
        "401": anonymous.get("/v1/documents"),
        "404": client.get("/v1/documents/00000000-0000-0000-0000-000000000000"),
        "list": client.get("/v1/documents"),
        "asset": anonymous.get("/static/app.js"),
        "page": anonymous.get("/"),
        "openapi": anonymous.get("/openapi.json"),
        "metrics": anonymous.get("/metrics"),
    }
    for name, response in responses.items():
        headers = response.headers
        assert headers["x-content-type-options"] == "nosniff", name
        assert headers["x-frame-options"] == "DENY", name
        assert headers["referrer-policy"] == "no-referrer", name
        assert "frame-ancestors 'none'" in headers["content-security-policy"], name
    assert responses["list"].headers["cache-control"] == "no-store"
    assert responses["401"].headers["content-security-policy"].startswith("default-src 'none'")


# --- 10. OpenAPI conformance ----------------------------------------------------------------


def test_updated_since_is_a_date_time(client: TestClient) -> None:
    for value in ("0.5", "1700000000", "1e3", "-1"):
        response = client.get("/v1/documents", params={"updated_since": value})
        assert response.status_code == 422, value
    assert client.get("/v1/documents", params={"updated_since": "2026-01-31T12:00:00Z"}).is_success


def test_the_metadata_field_is_described_as_a_json_object(anonymous: TestClient) -> None:
    schemas = anonymous.get("/openapi.json").json()["components"]["schemas"]
    metadata = schemas["Body_upload_v1_documents_post"]["properties"]["metadata"]
    assert metadata["contentMediaType"] == "application/json"
    assert metadata["contentSchema"] == {"type": "object"}


def test_deleting_the_sources_list_is_405(client: TestClient) -> None:
    response = client.delete("/v1/documents/sources")
    assert response.status_code == 405 and response.headers["allow"] == "GET"
    assert response.headers["content-type"].startswith("application/problem+json")
