"""Hostile input through the real worker: a YAML bomb fails its version (and the worker lives on),
a replayed delete cannot remove a republished page, and the index carries only safe URLs.
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
from shared import ingest
from tests.support.api import (
    API_KEYS,
    EDITOR_KEY,
    WEBHOOK_SECRET,
    cms_event,
    rows,
    signed_headers,
    use_settings,
)
from tests.support.front_matter import billion_laughs
from tests.support.pipeline import PipelineEnv, document_point_ids
from tests.support.services import free_port, serve_http
from tests.support.versions import new_version
from tests.support.workers import wait_for

URL = "/v1/webhooks/cms"
#: The stand-in CMS's port, known before it starts: CONTENT_FETCH_ALLOWED_HOSTS names it.
CMS_PORT = free_port()
PAGE = "# Knieoperatie\n\n## Voorbereiding\n\nNeem uw identiteitskaart mee naar het ziekenhuis.\n"


class _Cms(BaseHTTPRequestHandler):
    """The CMS serves the bomb by URL: the API cannot look inside, the worker must cope."""

    def do_GET(self) -> None:
        body = billion_laughs().encode() if self.path == "/p/bomb.md" else PAGE.encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

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


def finished(http: TestClient, document_id: str, version_id: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        detail = http.get(f"/v1/documents/{document_id}").json()
        found = [v for v in detail["versions"] if v["id"] == version_id]
        ended = ("indexed", "failed", "unchanged", "superseded")
        return found[0] if found and found[0]["status"] in ended else None

    return wait_for(done, timeout=90, what=f"version {version_id}")


def send(http: TestClient, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    response = http.post(URL, content=body, headers=headers)
    assert response.status_code in (200, 202), response.text
    return response.json()


def test_a_yaml_bomb_fails_its_version_and_the_worker_goes_on(
    http: TestClient, pipeline: PipelineEnv
) -> None:
    with serve_http(_Cms, CMS_PORT) as cms, pipeline.worker() as worker:
        bomb_event = json.dumps(
            cms_event("publish", "page-bomb", body=None, content_url=cms + "/p/bomb.md")
        ).encode()
        bomb = send(http, bomb_event, signed_headers(bomb_event))
        failed = finished(http, bomb["document_id"], bomb["version_id"])
        good = http.post("/v1/documents", files={"file": ("knie.md", io.BytesIO(PAGE.encode()))})
        accepted = good.json()["documents"][0]
        indexed = finished(http, accepted["document_id"], accepted["version_id"])
        assert worker.process.poll() is None
    assert failed["status"] == "failed" and failed["error_code"] == "front_matter_refused"
    assert failed["retryable"] is False and failed["attempts"] == 1
    assert "anchors and aliases" in failed["error_message"]
    assert indexed["status"] == "indexed"


def test_a_replayed_delete_cannot_remove_a_republished_page(
    http: TestClient, pipeline: PipelineEnv
) -> None:
    with pipeline.worker():
        first = json.dumps(cms_event("publish", "page-5", body=PAGE)).encode()
        published = send(http, first, signed_headers(first))
        finished(http, published["document_id"], published["version_id"])
        captured = json.dumps(cms_event("delete", "page-5", body=None)).encode()
        captured_headers = signed_headers(captured)
        assert send(http, captured, captured_headers)["status"] == "deleted"
        wait_for(  # the delete task done (a publish racing it is another matter)
            lambda: rows(pipeline.env["DATABASE_URL"], "SELECT purged_at FROM documents")[0][0],
            what="the delete to finish",
        )
        again = json.dumps(cms_event("publish", "page-5", body=PAGE + "\nNieuw.\n")).encode()
        republished = send(http, again, signed_headers(again))
        assert (
            finished(http, republished["document_id"], republished["version_id"])["status"]
            == "indexed"
        )
        replay = send(http, captured, {**captured_headers, "X-Delivery-Id": "fresh-id"})
        assert replay["duplicate"] is True
        detail = http.get(f"/v1/documents/{republished['document_id']}").json()
    assert detail["status"] == "indexed" and detail["deleted_at"] is None
    with pipeline.qdrant() as index:
        assert document_point_ids(index, uuid.UUID(republished["document_id"]))


def test_the_index_carries_only_safe_urls(http: TestClient, pipeline: PipelineEnv) -> None:
    """A row stored before the API refused such URLs: its points carry no link."""
    registered = []
    for name, url in (("old", "javascript:alert(document.cookie)"), ("new", "https://z.example/k")):
        content = f"# {name}\n\nTekst over de knie.\n".encode()
        new = new_version(content, name, source_url=url)
        from worker.enqueue import enqueue_version

        registered.append(ingest.submit(new, enqueue_version))
    with pipeline.worker():
        for version in registered:
            assert pipeline.wait_done(version.version_id).status == "indexed"
    with pipeline.qdrant() as index:
        urls = []
        for version in registered:
            ids = document_point_ids(index, version.document_id)
            (point,) = index.retrieve(list(ids))
            urls.append((point.payload or {}).get("source_url"))
    assert urls == [None, "https://z.example/k"]
