"""Input limits through the real API (Postgres, Redis; no worker): what would be a 500 or
quadratic work in the request thread is a 422 problem at once, nothing stored; emptying a
document asks for the `delete` scope."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from shared.settings import Settings
from shared.tags import MAX_TAG_CHARS, MAX_TAGS
from tests.support.api import (
    EDITOR_KEY,
    cms_event,
    count,
    post_event,
    rows,
    signed_headers,
)
from tests.support.api import use_settings as apply_settings

PAGE = b"# Knie\n\nNeem uw pas mee.\n"
UPLOADER_KEY = "uploader-key-0123456789"


def upload(client: TestClient, data: bytes = PAGE, name: str = "page.md", **form: Any) -> Any:
    return client.post("/v1/documents", files={"file": (name, io.BytesIO(data))}, data=form)


def refused(response: Any, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    if code is not None:
        assert problem.get("code") == code, problem
    return problem


# --- tags (item 2) --------------------------------------------------------------------------


def test_a_hundred_thousand_tags_are_a_422_at_once(client: TestClient, pg: str) -> None:
    started = time.monotonic()
    many = ",".join(f"tag{n}" for n in range(100_000))
    problem = refused(upload(client, tags=many), "tags_refused")
    assert time.monotonic() - started < 5  # 189 s of CPU before
    assert f"at most {MAX_TAGS}" in problem["detail"]
    refused(upload(client, tags="x" * (MAX_TAG_CHARS + 1)), "tags_refused")
    assert count(pg, "document_versions") == 0
    accepted = upload(client, tags=["knie, heup", "knie"])
    assert accepted.status_code == 202
    detail = client.get(accepted.json()["documents"][0]["location"]).json()
    assert detail["tags"] == ["knie", "heup"]


def test_webhook_tags_keep_the_same_limits(anonymous: TestClient, pg: str) -> None:
    too_long = cms_event("publish", "p-1", tags=["x" * (MAX_TAG_CHARS + 1)])
    assert post_event(anonymous, too_long).status_code == 422
    too_many = cms_event("publish", "p-2", tags=[f"t{n}" for n in range(MAX_TAGS + 1)])
    assert post_event(anonymous, too_many).status_code == 422
    tags = [f"t{n % 3}" for n in range(MAX_TAGS - 1)]  # repeated: kept once each
    assert post_event(anonymous, cms_event("publish", "p-3", tags=[" a", *tags])).status_code == 202
    assert count(pg, "document_versions") == 1


# --- front matter and URLs (items 6, 12) ----------------------------------------------------


@pytest.mark.parametrize(
    ("front", "code"),
    [
        ("date: 2024-13-45", "front_matter_refused"),
        ("url: javascript:alert(document.cookie)", "url_refused"),
        ("tags: [" + ", ".join(f"t{n}" for n in range(MAX_TAGS + 1)) + "]", "tags_refused"),
    ],
)
def test_front_matter_the_index_cannot_carry_is_a_422(
    client: TestClient, anonymous: TestClient, pg: str, front: str, code: str
) -> None:
    page = f"---\n{front}\n---\n# Knie\n\nTekst.\n"
    refused(upload(client, page.encode()), code)
    refused(post_event(anonymous, cms_event("publish", "page-fm", body=page)), code)
    assert count(pg, "document_versions") == 0


def test_a_non_http_source_url_is_refused_with_a_code(client: TestClient, pg: str) -> None:
    refused(upload(client, source_url="javascript:alert(1)"), "url_refused")


# --- values that were 500s (item 12) --------------------------------------------------------


@pytest.mark.parametrize(
    "form",
    [
        {"title": "Knie\x00"},
        {"language": "nl\x00"},
        {"tags": "knie\x00"},
        {"metadata": '{"a": NaN}'},
        {"metadata": '{"a": 1e999}'},
        {"metadata": '{"a": ' + "9" * 5000 + "}"},
        {"metadata": '{"a": "\\u0000"}'},
        {"metadata": '{"a": "\\ud800"}'},
    ],
)
def test_upload_fields_no_column_can_hold_are_a_422(
    client: TestClient, pg: str, form: dict[str, str]
) -> None:
    refused(upload(client, **form), "invalid_field")
    assert count(pg, "document_versions") == 0


def test_webhook_values_no_column_can_hold_are_a_422(anonymous: TestClient, pg: str) -> None:
    for page in ({"title": "Knie\x00"}, {"title": "\ud800"}, {"body": "# K\n\n\ud800\n"}):
        event = cms_event("publish", "page-x", **page)
        body = json.dumps(event).encode()
        response = anonymous.post(
            "/v1/webhooks/cms", content=body, headers=signed_headers(body)
        )  # json.dumps escapes the lone surrogate as \\ud800, which json.loads gives back
        refused(response, "invalid_field")
    huge = b'{"id": "d-1", "event": "publish", "page": {"id": "p", "body": "# K", "n": 1' + (
        b"0" * 5000 + b"}}"
    )
    refused(anonymous.post("/v1/webhooks/cms", content=huge, headers=signed_headers(huge)))
    assert count(pg, "document_versions") == 0


def test_a_lone_surrogate_in_a_search_query_is_a_422(client: TestClient) -> None:
    body = b'{"query": "knie \\ud800 operatie"}'
    response = client.post("/v1/search", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert "surrogate" in response.text


# --- emptying a document needs the delete scope (item 9) ------------------------------------


@pytest.fixture
def uploader(api_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """A client with an upload-only key."""
    settings = apply_settings(
        monkeypatch, API_KEYS=f"editors:{EDITOR_KEY},uploader:{UPLOADER_KEY}:upload"
    )
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {UPLOADER_KEY}"}
    ) as test_client:
        yield test_client


def test_allow_empty_needs_the_delete_scope(uploader: TestClient, pg: str) -> None:
    response = upload(uploader, allow_empty="true")
    assert response.status_code == 403, response.text
    assert "delete" in response.json()["detail"]
    assert count(pg, "document_versions") == 0
    assert upload(uploader).status_code == 202
    assert uploader.delete(f"/v1/documents/{'0' * 8}-0000-0000-0000-{'0' * 12}").status_code == 403


def test_allow_empty_is_kept_with_the_version(
    client: TestClient, anonymous: TestClient, pg: str
) -> None:
    assert upload(client, allow_empty="true").status_code == 202
    event = cms_event("publish", "page-empty", body="---\ntitle: Leeg\n---\n", allow_empty=True)
    assert post_event(anonymous, event).status_code == 202
    assert post_event(anonymous, cms_event("publish", "page-full")).status_code == 202
    kept = rows(pg, "SELECT allow_empty FROM document_versions ORDER BY received_at")
    assert [row[0] for row in kept] == [True, True, False]
