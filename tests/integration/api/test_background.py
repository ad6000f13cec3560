"""The app without a broker (`ingest serve`, and `ingest api` without REDIS_URL): every route
that sends work answers at once and the background runner does the work after it, on the
embedded default (SQLite, local Qdrant, hashing): uploads, CMS events, new fields (metadata
versions), reingest and deletes."""

from __future__ import annotations

import io
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from shared import migrate
from shared import repository as repo
from shared.adapters import edge_build
from shared.adapters.index import Point
from shared.adapters.qdrant_edge import EdgeIndex
from shared.db import transaction
from shared.models import DocumentVersion
from shared.pipeline import in_process, wiring
from shared.pipeline.background import Runner
from shared.settings import get_settings
from shared.states import Status
from tests.support.api import EDITOR_KEY, WEBHOOK_SECRET, cms_event, post_event, use_settings
from tests.support.versions import new_version
from tests.support.workers import wait_for

PAGE = (
    b"# Heupoperatie\n\n## Herstel\n\n"
    b"Na de heupoperatie oefent u dagelijks met de fysiotherapeut.\n"
)


@pytest.fixture
def http(embedded_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    use_settings(
        monkeypatch,
        API_KEYS=f"editors:{EDITOR_KEY}",
        CMS_WEBHOOK_SECRET=WEBHOOK_SECRET,
        SERVE_POLL_SECONDS="600",  # a wake-up, not the poll, must start the work
    )
    migrate.ensure_embedded_schema()
    app = create_app(get_settings())
    with TestClient(app, headers={"Authorization": f"Bearer {EDITOR_KEY}"}) as client:
        yield client


def version_of(http: TestClient, document_id: str, version_id: str) -> dict[str, Any] | None:
    versions = http.get(f"/v1/documents/{document_id}").json()["versions"]
    return next((v for v in versions if v["id"] == version_id), None)


def wait_done(http: TestClient, document_id: str, version_id: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        found = version_of(http, document_id, version_id)
        return found if found and found["status"] in ("indexed", "failed", "unchanged") else None

    found: dict[str, Any] = wait_for(done, timeout=60, what=f"version {version_id}")
    return found


def hits(http: TestClient, query: str) -> list[dict[str, Any]]:
    response = http.post("/v1/search", json={"query": query})
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["hits"]
    return found


def test_uploads_fields_reingest_and_deletes_are_done_in_the_background(
    http: TestClient,
) -> None:
    response = http.post("/v1/documents", files={"file": ("heup.md", io.BytesIO(PAGE))})
    assert response.status_code == 202, response.text
    accepted = response.json()["documents"][0]
    assert accepted["status"] == "received"  # answered before the work
    document_id = accepted["document_id"]
    assert wait_done(http, document_id, accepted["version_id"])["status"] == "indexed"
    assert {h["document_id"] for h in hits(http, "heupoperatie fysiotherapeut")} == {document_id}

    edited = http.patch(f"/v1/documents/{document_id}", json={"title": "Heup: na de operatie"})
    assert edited.status_code == 200, edited.text
    assert edited.json()["status"] == "received"
    relabelled = wait_done(http, document_id, edited.json()["version_id"])
    assert (relabelled["kind"], relabelled["status"]) == ("metadata", "indexed")
    cited = hits(http, "heupoperatie fysiotherapeut")
    assert cited and {h["title"] for h in cited} == {"Heup: na de operatie"}

    again = http.post(f"/v1/documents/{document_id}/reingest")
    assert again.status_code == 202, again.text
    assert wait_done(http, document_id, again.json()["version_id"])["status"] == "indexed"

    deleted = http.delete(f"/v1/documents/{document_id}")
    assert deleted.status_code == 202, deleted.text
    wait_for(
        lambda: not hits(http, "heupoperatie fysiotherapeut"),
        timeout=60,
        what="the deleted document's points to leave the index",
    )


def test_a_cms_publish_and_unpublish_are_done_in_the_background(http: TestClient) -> None:
    published = post_event(http, cms_event("publish", "page-9", body=PAGE.decode()))
    assert published.status_code == 202, published.text
    document_id = published.json()["document_id"]
    wait_for(
        lambda: http.get(f"/v1/documents/{document_id}").json()["status"] == "indexed",
        timeout=60,
        what="the published page to be indexed",
    )
    assert {h["document_id"] for h in hits(http, "heupoperatie fysiotherapeut")} == {document_id}
    unpublished = post_event(http, cms_event("unpublish", "page-9", body=None))
    assert unpublished.status_code in (200, 202), unpublished.text
    wait_for(
        lambda: not hits(http, "heupoperatie fysiotherapeut"),
        timeout=60,
        what="the unpublished page's points to leave the index",
    )


def test_the_runner_builds_the_index_in_a_child_process_while_requests_are_answered(
    embedded_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qdrant Edge holds the GIL for a whole HNSW build (minutes at 100,000 points): the
    runner of `ingest serve` builds in a child process on a copy and swaps it in, and this
    process answers searches all the while."""
    use_settings(
        monkeypatch,
        API_KEYS=f"editors:{EDITOR_KEY}",
        SERVE_POLL_SECONDS="0.2",
        EDGE_BUILD_THRESHOLD="2000",  # default 10,000
        EDGE_REBUILD_STEP="500",  # default 5,000
    )
    migrate.ensure_embedded_schema()
    settings = get_settings()
    index = wiring.index_for(settings, wiring.embedder(settings))
    assert isinstance(index, EdgeIndex)
    rng = np.random.default_rng(30)
    filler = [
        Point(uuid.uuid4(), rng.normal(size=index.dimensions).tolist(), {"document_id": "x"})
        for _ in range(2_000)
    ]
    index.upsert(filler)
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {EDITOR_KEY}"}
    ) as http:
        response = http.post("/v1/documents", files={"file": ("heup.md", io.BytesIO(PAGE))})
        assert response.status_code == 202, response.text
        answer = response.json()["documents"][0]
        assert wait_done(http, answer["document_id"], answer["version_id"])["status"] == "indexed"
        wait_for(lambda: index.holder.build is not None, timeout=30, what="a build to start")
        scraped = http.get("/metrics").text
        assert "ingest_index_build_running 1.0" in scraped, scraped
        assert "ingest_index_brute_force_points 2001.0" in scraped
        answered_during_build, deadline = 0, time.monotonic() + 240
        while index.holder.build is not None and time.monotonic() < deadline:
            assert hits(http, "heupoperatie fysiotherapeut"), "a search during the build"
            answered_during_build += 1
            time.sleep(0.1)  # pacing the searches (the child builds at a lower priority)

        def built() -> bool:
            with index.holder.reading() as shard:  # not during the swap
                return edge_build.unbuilt(shard) < 100

        wait_for(built, timeout=60, what="the swapped index")
        assert answered_during_build > 0
        assert "ingest_index_build_running 0.0" in http.get("/metrics").text
        assert index.count() == 2_001
        assert hits(http, "heupoperatie fysiotherapeut")[0]["document_id"] == answer["document_id"]


def test_the_runner_leaves_the_versions_an_ingest_run_holds_alone(
    embedded_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ingest run` beside `ingest serve` on one database (possible with a Qdrant server):
    the runner neither gives back nor takes up a version the run holds."""
    use_settings(monkeypatch, SERVE_POLL_SECONDS="600")
    migrate.ensure_embedded_schema()
    with transaction() as session:
        new = new_version(PAGE, "held-by-run")
        held = repo.register_version(session, new).version_id
        repo.claim(session, Status.CONVERTING, in_process.OWNER, timedelta(minutes=5), [held])
    with transaction() as session:
        claimed = session.get(DocumentVersion, held)
        assert claimed is not None
        before = (claimed.status, claimed.lease_owner, claimed.attempts)

    Runner(get_settings()).round()

    with transaction() as session:
        after = session.get(DocumentVersion, held)
        assert after is not None
        assert (after.status, after.lease_owner, after.attempts) == before
