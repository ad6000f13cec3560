"""The CMS webhook through HTTP: signatures, replays, duplicates, publish/update/unpublish.

Real Postgres and Redis; no worker (versions stay `received`).
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from shared.settings import Settings
from tests.support.api import (
    OLD_WEBHOOK_SECRET,
    WEBHOOK_SECRET,
    cms_event,
    count,
    post_event,
    rows,
    signed_headers,
    use_settings,
)
from tests.support.office_files import ARTICLE_PAGE

URL = "/v1/webhooks/cms"


def assert_refused(response: object, pg: str) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert count(pg, "document_versions") == 0
    assert count(pg, "webhook_deliveries") == 0


def test_publish_registers_a_cms_version(anonymous: TestClient, pg: str) -> None:
    event = cms_event(
        "publish",
        "page-42",
        url="https://ziekenhuis.example/knie",
        title="Knieoperatie",
        language="nl",
        tags=["orthopedie"],
    )
    response = post_event(anonymous, event)
    assert response.status_code == 202, response.text
    result = response.json()
    assert result["duplicate"] is False and result["status"] == "received"
    (document,) = rows(pg, "SELECT source, external_id, title, language, tags FROM documents")
    assert tuple(document) == ("cms", "page-42", "Knieoperatie", "nl", ["orthopedie"])
    (delivery,) = rows(pg, "SELECT delivery_id, event, version_id FROM webhook_deliveries")
    assert delivery.delivery_id == event["id"]
    assert str(delivery.version_id) == result["version_id"]
    (version,) = rows(pg, "SELECT media_type, uploaded_by FROM document_versions")
    assert tuple(version) == ("text/markdown", "cms")


def test_an_html_body_is_stored_as_html(anonymous: TestClient, pg: str) -> None:
    event = cms_event("publish", "page-html", body=ARTICLE_PAGE, content_type="text/html")
    response = post_event(anonymous, event)
    assert response.status_code == 202, response.text
    (version,) = rows(pg, "SELECT media_type FROM document_versions")
    assert version.media_type == "text/html"
    bad = cms_event("publish", "page-x", body="<p>x</p>", content_type="application/pdf")
    assert post_event(anonymous, bad).status_code == 422


def test_the_same_delivery_twice_makes_one_version(anonymous: TestClient, pg: str) -> None:
    event = cms_event("publish", "page-1", delivery="delivery-fixed")
    first, second = post_event(anonymous, event), post_event(anonymous, event)
    assert first.status_code == 202 and second.status_code == 200
    assert second.json()["duplicate"] is True
    assert count(pg, "document_versions") == 1
    # Signed again later (a new signature), the same delivery id is still a duplicate.
    again = post_event(anonymous, event, at=int(time.time()) - 5)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert count(pg, "document_versions") == 1


def test_concurrent_duplicates_make_one_version(api_settings: Settings, pg: str) -> None:
    event = cms_event("publish", "page-race", delivery="delivery-race")
    statuses: list[int] = []
    with TestClient(create_app(api_settings)) as http:
        barrier = threading.Barrier(6)

        def send() -> None:
            barrier.wait()
            statuses.append(post_event(http, event).status_code)

        threads = [threading.Thread(target=send) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(statuses) == [200] * 5 + [202]
    assert count(pg, "document_versions") == 1


def test_a_bad_signature_is_refused(anonymous: TestClient, pg: str) -> None:
    body = json.dumps(cms_event("publish", "page-1")).encode()
    assert_refused(anonymous.post(URL, content=body, headers=signed_headers(body, secret="x")), pg)
    assert_refused(anonymous.post(URL, content=body), pg)  # no signature at all
    for header in ("garbage", "t=abc,v1=00", f"t={int(time.time())}", "v1=00"):
        response = anonymous.post(URL, content=body, headers={"X-Signature": header})
        assert_refused(response, pg)


def test_a_stale_or_future_timestamp_is_refused(anonymous: TestClient, pg: str) -> None:
    body = json.dumps(cms_event("publish", "page-1")).encode()
    # A minute clear of the 300 s tolerance either way, so a slow request cannot cross it.
    for at in (int(time.time()) - 360, int(time.time()) + 360):
        assert_refused(anonymous.post(URL, content=body, headers=signed_headers(body, at=at)), pg)
    recent = signed_headers(body, at=int(time.time()) - 240)
    fresh = anonymous.post(URL, content=body, headers=recent)
    assert fresh.status_code == 202


def test_a_body_changed_after_signing_is_refused(anonymous: TestClient, pg: str) -> None:
    body = json.dumps(cms_event("publish", "page-1", body="# Safe text")).encode()
    headers = signed_headers(body)
    tampered = body.replace(b"Safe text", b"Evil text")
    assert_refused(anonymous.post(URL, content=tampered, headers=headers), pg)
    assert_refused(anonymous.post(URL, content=body + b" ", headers=headers), pg)


def test_two_signatures_during_a_secret_rotation(anonymous: TestClient) -> None:
    from api.webhook import sign

    body = json.dumps(cms_event("publish", "page-1")).encode()
    now = int(time.time())
    old = sign(OLD_WEBHOOK_SECRET, now, body)
    # The CMS signs with the old and the new secret; the API knows the new one.
    both = f"t={now},v1={old},v1={sign(WEBHOOK_SECRET, now, body)}"
    assert anonymous.post(URL, content=body, headers={"X-Signature": both}).status_code == 202
    only_old = f"t={now},v1={old}"
    response = anonymous.post(URL, content=body, headers={"X-Signature": only_old})
    assert response.status_code == 401


def test_update_then_unpublish(anonymous: TestClient, pg: str) -> None:
    published = post_event(anonymous, cms_event("publish", "page-7", body="# V1\n\nOld."))
    updated = post_event(anonymous, cms_event("update", "page-7", body="# V1\n\nNew."))
    assert updated.status_code == 202
    assert updated.json()["document_id"] == published.json()["document_id"]
    statuses = rows(pg, "SELECT status FROM document_versions ORDER BY number")
    assert [r[0] for r in statuses] == ["superseded", "received"]

    removed = post_event(anonymous, cms_event("unpublish", "page-7", body=None))
    assert removed.status_code == 202, removed.text
    assert removed.json()["status"] == "deleted"
    (document,) = rows(pg, "SELECT deleted_at FROM documents")
    assert document.deleted_at is not None
    unknown = post_event(anonymous, cms_event("delete", "never-published", body=None))
    assert unknown.status_code == 202 and unknown.json()["document_id"] is None


def test_invalid_events_are_422(anonymous: TestClient, pg: str) -> None:
    by_ftp = cms_event("publish", "page-1", body=None, content_url="ftp://cms.example/p/1.md")
    response = post_event(anonymous, by_ftp)
    assert response.status_code == 422
    assert "http or https" in response.json()["detail"]
    no_content = post_event(anonymous, cms_event("publish", "page-1", body=None))
    assert no_content.status_code == 422 and "content_url" in no_content.json()["detail"]
    assert post_event(anonymous, cms_event("archive", "page-1")).status_code == 422
    no_id = cms_event("publish", "page-1")
    no_id.pop("id")
    assert post_event(anonymous, no_id).status_code == 422  # no delivery id anywhere
    body = b"{not json"
    response = anonymous.post(URL, content=body, headers=signed_headers(body))
    assert response.status_code == 422
    assert count(pg, "document_versions") == 0


def test_content_urls_into_the_private_network_are_422(
    api_settings: Settings, monkeypatch: pytest.MonkeyPatch, pg: str
) -> None:
    """A signed webhook names pages; it may not point the worker at internal services."""
    with TestClient(create_app(api_settings)) as client:
        for url in (
            "http://169.254.169.254/latest/meta-data/",  # the cloud metadata service
            "http://localhost:6379/",
            "http://10.1.2.3/p/1.md",
            "http://[::1]:8000/p/1.md",
        ):
            event = cms_event("publish", "page-1", body=None, content_url=url)
            response = post_event(client, event)
            assert response.status_code == 422, url
            assert "private network" in response.json()["detail"]
        public = cms_event("publish", "page-1", body=None, content_url="https://93.184.216.34/p")
        assert post_event(client, public).status_code == 202

    listed = use_settings(monkeypatch, CONTENT_FETCH_ALLOWED_HOSTS="cms.ziekenhuis.example")
    with TestClient(create_app(listed)) as client:
        elsewhere = cms_event("publish", "page-2", body=None, content_url="https://evil.example/p")
        response = post_event(client, elsewhere)
        assert response.status_code == 422
        assert "CONTENT_FETCH_ALLOWED_HOSTS" in response.json()["detail"]
        ours = cms_event(
            "publish", "page-3", body=None, content_url="https://cms.ziekenhuis.example/p/3.md"
        )
        assert post_event(client, ours).status_code == 202
    assert count(pg, "document_versions") == 2


def test_webhook_without_a_secret_is_not_configured(
    api_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CMS_WEBHOOK_SECRET")
    settings = use_settings(monkeypatch)
    with TestClient(create_app(settings)) as http:
        response = post_event(http, cms_event("publish", "page-1"))
    assert response.status_code == 503
    assert response.json()["title"] == "Webhook not configured"
