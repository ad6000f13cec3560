"""The service probed as an attacker with a valid key or a captured webhook would (issue 18):
each refusal through the real API, on the real Postgres and Redis (no worker here; the worker's
side is in test_security_pipeline.py)."""

from __future__ import annotations

import io
import json
import time

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from tests.e2e.api_support import cms_event, count, post_event, rows, signed_headers
from tests.unit.test_front_matter import billion_laughs

pytestmark = pytest.mark.e2e

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


def test_a_captured_delete_cannot_remove_a_republished_page(
    anonymous: TestClient, pg: str
) -> None:
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
