"""Through HTTP with a real worker: uploads and CMS events end indexed, and the chunks endpoint
shows exactly what Qdrant holds. Real Postgres, Redis, a Celery worker subprocess, local Qdrant
and the OpenAI stand-in (the `pipeline` fixture); the broker can be down at upload time.
"""

from __future__ import annotations

import io
import random
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

import pytest
import redis
from fastapi.testclient import TestClient

from api.app import create_app
from shared.pipeline.reaper import reap
from tests.support.api import (
    API_KEYS,
    EDITOR_KEY,
    WEBHOOK_SECRET,
    cms_event,
    post_event,
    rows,
    use_settings,
)
from tests.support.pdfs import brochure_pdf
from tests.support.pipeline import PipelineEnv, document_point_ids
from tests.support.services import empty_redis_database, free_port, serve_http
from tests.support.workers import wait_for

WORDS = [
    "patiënt",
    "knie",
    "operatie",
    "voorbereiding",
    "herstel",
    "fysiotherapie",
    "afspraak",
    "verpleegkundige",
]
CLOSED_PORT_BROKER = "redis://127.0.0.1:1/0"


def page(title: str, sections: int = 6, seed: int = 1) -> str:
    rng = random.Random(seed)
    parts = [f"# {title}\n"]
    for number in range(sections):
        text = " ".join(rng.choice(WORDS) for _ in range(150))
        parts.append(f"## Stap {number}\n\n{text.capitalize()}.\n")
    return "\n".join(parts)


@pytest.fixture
def cms_port() -> int:
    """The stand-in CMS's port: CONTENT_FETCH_ALLOWED_HOSTS names host and port."""
    return free_port()


@pytest.fixture
def http(
    pipeline: PipelineEnv, redis_url: str, monkeypatch: pytest.MonkeyPatch, cms_port: int
) -> Iterator[TestClient]:
    empty_redis_database(redis_url)
    settings = use_settings(
        monkeypatch,
        API_KEYS=API_KEYS,
        CMS_WEBHOOK_SECRET=WEBHOOK_SECRET,
        CONTENT_FETCH_ALLOWED_HOSTS=f"127.0.0.1:{cms_port}",  # the content_url test's CMS
    )
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {EDITOR_KEY}"}
    ) as client:
        yield client


def wait_status(http: TestClient, document_id: str, status: str, timeout: float = 90) -> Any:
    def reached() -> Any:
        detail = http.get(f"/v1/documents/{document_id}").json()
        return detail if detail["status"] == status else None

    return wait_for(reached, timeout=timeout, what=f"document {document_id} to be {status}")


def upload(http: TestClient, name: str, data: bytes) -> dict[str, Any]:
    response = http.post("/v1/documents", files={"file": (name, io.BytesIO(data))})
    assert response.status_code == 202, response.text
    return response.json()["documents"][0]


def chunks_of(http: TestClient, document_id: str) -> dict[str, Any]:
    response = http.get(f"/v1/documents/{document_id}/chunks")
    assert response.status_code == 200, response.text
    return response.json()


def qdrant_points(pipeline: PipelineEnv, document_id: str) -> dict[str, dict[str, Any]]:
    """`{point id: payload}` of the document in Qdrant (call with the worker stopped)."""
    with pipeline.qdrant() as index:
        ids = document_point_ids(index, uuid.UUID(document_id))
        records = index.retrieve(list(ids))
    return {str(record.id): dict(record.payload or {}) for record in records}


def assert_chunks_match_qdrant(chunks: dict[str, Any], points: dict[str, dict[str, Any]]) -> None:
    assert chunks["total"] == len(chunks["items"]) == len(points) > 0
    for chunk in chunks["items"]:
        payload = points[chunk["point_id"]]
        assert payload["text"] == chunk["text"]
        assert payload["chunk_index"] == chunk["index"]
        assert payload["sections"] == chunk["sections"] and chunk["sections"]
        assert payload["version_id"] == chunks["version_id"]


def test_uploaded_markdown_and_pdf_end_indexed(http: TestClient, pipeline: PipelineEnv) -> None:
    with pipeline.worker():
        markdown = upload(http, "knie.md", page("Knieoperatie").encode())
        pdf = upload(http, "brochure.pdf", brochure_pdf())
        md_detail = wait_status(http, markdown["document_id"], "indexed")
        pdf_detail = wait_status(http, pdf["document_id"], "indexed")
    assert md_detail["chunk_count"] >= 3
    assert pdf_detail["versions"][0]["media_type"] == "application/pdf"
    assert [e["to_status"] for e in md_detail["events"]][-1] == "indexed"

    for document in (markdown, pdf):
        chunks = chunks_of(http, document["document_id"])
        assert_chunks_match_qdrant(chunks, qdrant_points(pipeline, document["document_id"]))
    pdf_chunks = chunks_of(http, pdf["document_id"])["items"]
    assert pdf_chunks[0]["page_start"] == 1
    assert any(chunk["headings"][:1] == ["Knieoperatie"] for chunk in pdf_chunks)

    metrics = http.get("/metrics").text
    assert 'ingest_documents{status="indexed"} 2.0' in metrics
    assert 'ingest_stage_duration_seconds_avg{stage="embed"}' in metrics
    tokens = md_detail["versions"][0]["tokens_spent"] + pdf_detail["versions"][0]["tokens_spent"]
    assert tokens > 0
    assert f"ingest_embedding_tokens_spent_total {float(tokens)}" in metrics


def test_cms_publish_update_unpublish(http: TestClient, pipeline: PipelineEnv, pg: str) -> None:
    with pipeline.worker():
        published = post_event(http, cms_event("publish", "page-9", body=page("Heup", seed=1)))
        document_id = published.json()["document_id"]
        first = wait_status(http, document_id, "indexed")
        old_chunks = chunks_of(http, document_id)

        new_body = page("Heup", seed=2) + "\n## Nieuw\n\nBel de afdeling bij koorts.\n"
        updated = post_event(http, cms_event("update", "page-9", body=new_body))
        assert updated.json()["document_id"] == document_id
        wait_for(
            lambda: (
                http.get(f"/v1/documents/{document_id}").json()["current_version_id"]
                == updated.json()["version_id"]
            ),
            timeout=90,
            what="the update to become current",
        )
        new_chunks = chunks_of(http, document_id)
    assert first["current_version_id"] != new_chunks["version_id"]
    assert any("koorts" in chunk["text"] for chunk in new_chunks["items"])
    assert new_chunks["items"] != old_chunks["items"]
    points = qdrant_points(pipeline, document_id)
    assert_chunks_match_qdrant(new_chunks, points)  # only the new version's points remain

    with pipeline.worker():
        removed = post_event(http, cms_event("unpublish", "page-9", body=None))
        assert removed.status_code == 202
        wait_for(
            lambda: rows(pg, "SELECT purged_at FROM documents")[0].purged_at is not None,
            timeout=60,
            what="the page's points to be removed",
        )
    assert qdrant_points(pipeline, document_id) == {}
    assert http.get(f"/v1/documents/{document_id}").json()["status"] == "deleted"
    assert chunks_of(http, document_id)["items"] == []


def test_broker_down_at_upload_then_the_reaper_sends_it(
    http: TestClient, pipeline: PipelineEnv, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_settings(monkeypatch, REDIS_URL=CLOSED_PORT_BROKER)  # this process's broker is gone
    accepted = upload(http, "knie.md", page("Knieoperatie").encode())
    detail = http.get(accepted["location"]).json()
    assert detail["status"] == "received"  # committed, chain not sent
    assert redis.Redis.from_url(redis_url).llen("cpu") == 0

    use_settings(monkeypatch, REDIS_URL=redis_url)  # the broker is back
    from worker.enqueue import enqueue_delete, enqueue_version

    with pipeline.worker():
        report = wait_for(
            lambda: reap(enqueue_version, enqueue_delete).resent,
            timeout=30,
            what="the reaper to re-send the version",
        )
        assert report == [uuid.UUID(accepted["version_id"])]
        wait_status(http, accepted["document_id"], "indexed")
    chunks = chunks_of(http, accepted["document_id"])
    assert_chunks_match_qdrant(chunks, qdrant_points(pipeline, accepted["document_id"]))


class _Pages(BaseHTTPRequestHandler):
    """The CMS's page store: serves `pages` by path, 404 for the rest."""

    pages: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        body = self.pages.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "text/markdown; charset=utf-8")
        self.end_headers()
        self.wfile.write(body or b"not found")

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def cms_pages(cms_port: int) -> Iterator[tuple[str, dict[str, bytes]]]:
    pages: dict[str, bytes] = {}
    with serve_http(type("Pages", (_Pages,), {"pages": pages}), cms_port) as url:
        yield url, pages


def version_status(http: TestClient, document_id: str, version_id: str) -> dict[str, Any] | None:
    detail = http.get(f"/v1/documents/{document_id}").json()
    found = [v for v in detail["versions"] if v["id"] == version_id]
    if found and found[0]["status"] in ("indexed", "failed", "unchanged", "superseded"):
        return found[0]
    return None


def test_cms_pages_sent_by_url_are_fetched_by_the_worker(
    http: TestClient, pipeline: PipelineEnv, cms_pages: tuple[str, dict[str, bytes]]
) -> None:
    base, pages = cms_pages
    pages["/p/heup.md"] = page("Heup", seed=3).encode()
    pages["/p/big.md"] = b"# Groot\n\n" + b"woord " * 5000
    pipeline.env["CONTENT_FETCH_MAX_BYTES"] = "20000"
    pipeline.env["CONTENT_FETCH_ALLOWED_HOSTS"] = base.removeprefix("http://")  # local CMS
    assert len(pages["/p/heup.md"]) < 20000 < len(pages["/p/big.md"])

    def publish(page_id: str, path: str) -> dict[str, Any]:
        event = cms_event("publish", page_id, body=None, content_url=base + path)
        response = post_event(http, event)
        assert response.status_code == 202, response.text
        return response.json()

    with pipeline.worker():
        first = publish("page-30", "/p/heup.md")
        indexed = wait_for(
            lambda: version_status(http, first["document_id"], first["version_id"]),
            timeout=90,
            what="the fetched page",
        )
        again = publish("page-30", "/p/heup.md")  # the CMS sends the same page again
        same = wait_for(
            lambda: version_status(http, again["document_id"], again["version_id"]),
            timeout=90,
            what="the second fetch",
        )
        missing = publish("page-31", "/p/gone.md")
        big = publish("page-32", "/p/big.md")
        gone = wait_for(lambda: version_status(http, missing["document_id"], missing["version_id"]))
        huge = wait_for(lambda: version_status(http, big["document_id"], big["version_id"]))

    assert indexed["status"] == "indexed"
    assert "Heup" in chunks_of(http, first["document_id"])["items"][0]["text"]
    assert same["status"] == "unchanged"  # fetched, compared, nothing embedded
    assert gone["status"] == "failed" and gone["error_code"] == "fetch_failed"
    assert "HTTP 404" in gone["error_message"]
    assert huge["status"] == "failed" and huge["error_code"] == "too_large"
