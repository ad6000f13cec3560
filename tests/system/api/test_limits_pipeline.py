"""Input limits through the real worker: front matter kept once per version (not per chunk), a
version without chunks fails `empty_document` unless the request meant it, and an impossible
front-matter date in a page fetched by URL fails its version instead of sticking.
Real Postgres, Redis, a Celery worker subprocess, local Qdrant, the OpenAI stand-in."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from api.app import create_app
from tests.support.api import (
    API_KEYS,
    EDITOR_KEY,
    WEBHOOK_SECRET,
    cms_event,
    rows,
    signed_headers,
    use_settings,
)
from tests.support.pipeline import PipelineEnv, document_point_ids
from tests.support.services import free_port, serve_http
from tests.support.workers import wait_for

PAGE = "# Knieoperatie\n\n## Voorbereiding\n\nNeem uw identiteitskaart mee naar het ziekenhuis.\n"
#: The stand-in CMS's port, known before it starts: CONTENT_FETCH_ALLOWED_HOSTS names it.
CMS_PORT = free_port()
NOTES = "aantekening " * 400  # ~5 KB of front matter the index has no use for


class _Cms(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = "---\ndate: 2024-13-45\n---\n" + PAGE
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def http(
    pipeline: PipelineEnv, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TestClient]:
    redis.Redis.from_url(redis_url).flushdb()
    settings = use_settings(
        monkeypatch,
        API_KEYS=API_KEYS,
        CMS_WEBHOOK_SECRET=WEBHOOK_SECRET,
        CONTENT_FETCH_ALLOWED_HOSTS=f"127.0.0.1:{CMS_PORT}",
    )
    pipeline.env["CONTENT_FETCH_ALLOWED_HOSTS"] = f"127.0.0.1:{CMS_PORT}"
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {EDITOR_KEY}"}
    ) as client:
        yield client


def finished(http: TestClient, accepted: dict[str, Any]) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        detail = http.get(f"/v1/documents/{accepted['document_id']}").json()
        found = [v for v in detail["versions"] if v["id"] == accepted["version_id"]]
        ended = ("indexed", "failed", "unchanged", "superseded")
        return found[0] if found and found[0]["status"] in ended else None

    return wait_for(done, timeout=90, what=f"version {accepted['version_id']}")


def upload(http: TestClient, text: str, **form: str) -> dict[str, Any]:
    files = {"file": ("knie.md", io.BytesIO(text.encode()))}
    response = http.post("/v1/documents", files=files, data=form)
    assert response.status_code == 202, response.text
    return response.json()["documents"][0]


def test_front_matter_is_kept_once_and_an_empty_version_needs_allow_empty(
    http: TestClient, pipeline: PipelineEnv
) -> None:
    url = pipeline.env["DATABASE_URL"]
    front = f"---\ntitle: Knie\ntags: [knie, knie, ok]\nnotes: {NOTES}\n---\n"
    with pipeline.worker():
        first = upload(http, front + PAGE)
        assert finished(http, first)["status"] == "indexed"
        chunks = http.get(f"/v1/documents/{first['document_id']}/chunks").json()["total"]
        emptied = upload(http, "---\ntitle: Knie\n---\n")  # an upload-only key could do this
        failed = finished(http, emptied)
        detail = http.get(f"/v1/documents/{first['document_id']}").json()
        kept = http.get(f"/v1/documents/{first['document_id']}/chunks").json()["total"]
        stored = rows(
            url, "SELECT metadata FROM chunks WHERE version_id = :v", v=first["version_id"]
        )
        (conversion,) = rows(
            url, "SELECT conversion FROM document_versions WHERE id = :v", v=first["version_id"]
        )
        files = {"file": ("leeg.md", io.BytesIO(b"---\ntitle: Leeg\n---\n"))}
        fresh = http.post("/v1/documents", files=files).json()["documents"][0]
        assert finished(http, fresh)["status"] == "indexed"  # nothing to lose: indexed empty
        meant = upload(http, "---\ntitle: Knie\n---\n", allow_empty="true")
        assert finished(http, meant)["status"] == "indexed"
        after = http.get(f"/v1/documents/{first['document_id']}/chunks").json()["total"]
    assert chunks >= 1
    assert failed["status"] == "failed" and failed["error_code"] == "empty_document"
    assert "allow_empty" in failed["error_message"] and failed["retryable"] is False
    assert detail["current_version_id"] == first["version_id"] and kept == chunks
    assert detail["title"] == "Knie" and detail["tags"] == ["knie", "ok"]
    assert detail["front_matter"]["notes"] == NOTES.strip()
    assert after == 0
    assert stored and all("metadata" not in r[0] and "aantekening" not in str(r[0]) for r in stored)
    assert conversion[0]["front_matter"]["notes"] == NOTES.strip()


def test_an_impossible_date_in_a_fetched_page_fails_its_version(
    http: TestClient, pipeline: PipelineEnv
) -> None:
    with serve_http(_Cms, CMS_PORT) as cms, pipeline.worker() as worker:
        event = json.dumps(
            cms_event("publish", "page-date", body=None, content_url=cms + "/p/date.md")
        ).encode()
        response = http.post("/v1/webhooks/cms", content=event, headers=signed_headers(event))
        assert response.status_code == 202, response.text
        failed = finished(http, response.json())
        assert worker.process.poll() is None
    assert failed["status"] == "failed" and failed["error_code"] == "front_matter_refused"
    assert "month must be in 1..12" in failed["error_message"] and failed["attempts"] == 1
    with pipeline.qdrant() as index:
        assert not document_point_ids(index, uuid.UUID(response.json()["document_id"]))
