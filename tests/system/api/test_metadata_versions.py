"""A metadata edit reaches the index (issue 29 item 1): through HTTP with a real Celery
worker, Postgres, Redis, local Qdrant and the OpenAI stand-in (the `pipeline` fixture). A
title or label change, by PATCH, by the same bytes uploaded again or by the same CMS body, is
a metadata version: the points' payloads are rewritten, nothing is embedded, and search
cites the new title and finds the new label. Content and metadata edits sent together end
consistent."""

from __future__ import annotations

import io
import uuid
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from fastapi.testclient import TestClient

from shared.db import transaction
from shared.models import DocumentVersion, utcnow
from shared.pipeline.verify import verify
from tests.support.api import cms_event, post_event
from tests.support.pipeline import PipelineEnv
from tests.support.workers import wait_for
from tests.system.api import test_pipeline as base

# The fixtures and helpers of the HTTP pipeline tests, reused.
http = base.http
cms_port = base.cms_port
page = base.page
qdrant_points = base.qdrant_points
wait_status = base.wait_status

BODY = page("Heup", sections=4, seed=3).encode()


def send(http: TestClient, data: bytes, **fields: Any) -> dict[str, Any]:
    """Upload `heup.md` with form fields; the accepted version."""
    response = http.post(
        "/v1/documents", files={"file": ("heup.md", io.BytesIO(data))}, data=fields
    )
    assert response.status_code == 202, response.text
    accepted: dict[str, Any] = response.json()["documents"][0]
    return accepted


def patch(http: TestClient, document_id: str, **fields: Any) -> dict[str, Any]:
    response = http.patch(f"/v1/documents/{document_id}", json=fields)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def version_done(http: TestClient, document_id: str, version_id: str) -> dict[str, Any]:
    """Poll the document until the version has left the pipeline."""

    def done() -> dict[str, Any] | None:
        versions = http.get(f"/v1/documents/{document_id}").json()["versions"]
        found = next((v for v in versions if v["id"] == version_id), None)
        return found if found and found["status"] not in ("received", "upserting") else None

    found: dict[str, Any] = wait_for(done, timeout=60, what=f"version {version_id}")
    return found


def paid_inputs(pipeline: PipelineEnv) -> int:
    return pipeline.embedded_inputs()


def hits(http: TestClient, query: str, **filters: Any) -> list[dict[str, Any]]:
    """Search over HTTP (call with the worker stopped: local Qdrant is one process's)."""
    body = {"query": query, "top_k": 20, "filters": filters}
    response = http.post("/v1/search", json=body)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["hits"]
    return found


def test_title_and_label_edits_reach_the_index_without_a_token(
    http: TestClient, pipeline: PipelineEnv
) -> None:
    with pipeline.worker():
        first = send(http, BODY, title="Heup foldr", tags="orthopedie")
        document_id = first["document_id"]
        wait_status(http, document_id, "indexed")
        paid = paid_inputs(pipeline)
        requests = len(pipeline.fake.requests)

        edited = patch(http, document_id, title="Heupoperatie", tags=["orthopedie", "heup"])
        assert edited["changed"] == ["title", "tags"] and edited["status"] == "received"
        done = version_done(http, document_id, edited["version_id"])
        assert (done["kind"], done["status"], done["tokens_spent"]) == ("metadata", "indexed", 0)

        again = patch(http, document_id, title="Heupoperatie", tags=["orthopedie", "heup"])
        assert again["status"] == "unchanged" and again["version_id"] is None  # idempotent

        same_bytes = send(http, BODY, title="Heupoperatie: de folder")
        assert same_bytes["status"] == "received"  # not `unchanged`: the title is new
        assert same_bytes["kind"] == "metadata" and same_bytes["same_as_version"] == 1
        assert "metadata updated (title)" in same_bytes["note"]
        version_done(http, document_id, same_bytes["version_id"])
        detail = http.get(f"/v1/documents/{document_id}").json()
    assert paid_inputs(pipeline) == paid and len(pipeline.fake.requests) == requests
    assert detail["status"] == "indexed" and detail["version_count"] == 3
    assert detail["current_version_id"] == first["version_id"]  # the points' owner stays
    assert "metadata updated: title, tags" in [e["detail"] for e in detail["events"]]

    points = qdrant_points(pipeline, document_id)
    assert points and {p["title"] for p in points.values()} == {"Heupoperatie: de folder"}
    assert all(p["tags"] == ["orthopedie", "heup"] for p in points.values())
    assert verify().ok
    cited = hits(http, "heup operatie herstel")
    assert cited and all(h["title"] == "Heupoperatie: de folder" for h in cited)
    assert all("[Heup foldr" not in h["citation"] for h in cited)
    labelled = hits(http, "heup operatie herstel", tags=["heup"])
    assert labelled and {h["document_id"] for h in labelled} == {document_id}


def test_a_cms_title_change_with_the_same_body_reaches_the_index(
    http: TestClient, pipeline: PipelineEnv
) -> None:
    body = page("Knie", sections=4, seed=5)
    with pipeline.worker():
        published = post_event(http, cms_event("publish", "page-7", body=body, title="Knie oud"))
        document_id = published.json()["document_id"]
        wait_status(http, document_id, "indexed")
        paid = paid_inputs(pipeline)
        updated = post_event(
            http, cms_event("update", "page-7", body=body, title="Knieoperatie", tags=["knie"])
        )
        assert updated.status_code == 202, updated.text
        assert updated.json()["status"] == "received"
        done = version_done(http, document_id, updated.json()["version_id"])
        assert done["kind"] == "metadata" and done["status"] == "indexed"
    assert paid_inputs(pipeline) == paid
    points = qdrant_points(pipeline, document_id)
    assert {p["title"] for p in points.values()} == {"Knieoperatie"}
    cited = hits(http, "knie operatie", tags=["knie"])
    assert cited and all(h["title"] == "Knieoperatie" for h in cited)


def test_content_and_metadata_edits_sent_together_end_consistent(
    http: TestClient, pipeline: PipelineEnv
) -> None:
    """Each round sends a new body and, right after, a title and label change: whichever
    runs first, the version that ends current carries the newest fields, and the index holds
    exactly the current chunks."""
    with pipeline.worker():
        first = send(http, BODY, title="Ronde 0")
        document_id = first["document_id"]
        wait_status(http, document_id, "indexed")
        last: dict[str, Any] = {}
        for round_ in range(1, 5):
            content = send(http, BODY + f"\n## Ronde {round_}\n\nNieuwe tekst {round_}.\n".encode())
            last = patch(http, document_id, title=f"Ronde {round_}", tags=[f"ronde-{round_}"])
            assert last["status"] == "received"
        wait_for(
            lambda: (
                http.get(f"/v1/documents/{document_id}").json()["current_version_id"]
                == content["version_id"]
            ),
            timeout=90,
            what="the last content version to be current",
        )
        version_done(http, document_id, last["version_id"])
        detail = http.get(f"/v1/documents/{document_id}").json()
    assert detail["title"] == "Ronde 4" and detail["tags"] == ["ronde-4"]
    points = qdrant_points(pipeline, document_id)
    assert points and {p["version_id"] for p in points.values()} == {content["version_id"]}
    assert {p["title"] for p in points.values()} == {"Ronde 4"}
    assert all(p["tags"] == ["ronde-4"] for p in points.values())
    assert verify().ok
    assert uuid.UUID(document_id)


def lease(version_id: str, owner: str | None, seconds: float = 0) -> None:
    """Another task's live lease on a version (as a slow task holds one), or none."""
    until = utcnow() + timedelta(seconds=seconds) if owner else None
    with transaction() as session:
        session.execute(
            sa.update(DocumentVersion)
            .where(DocumentVersion.id == uuid.UUID(version_id))
            .values(lease_owner=owner, lease_expires_at=until)
        )


def upserted(version_id: str) -> bool:
    """The upsert step has built the version's points (it notes which fields they carry)."""
    with transaction() as session:
        version = session.get(DocumentVersion, uuid.UUID(version_id))
        return version is not None and version.fields_revision is not None


def test_a_title_changed_between_upsert_and_finalize_reaches_the_new_points(
    http: TestClient, pipeline: PipelineEnv
) -> None:
    """The race the finalize rule is for, made certain: another task holds a version of the
    document, so the new content version waits in finalize (busy) after its upsert wrote its
    points with the old title. The title changes then; its relabel writes the points current
    at that moment (the old version's). Once the other task lets go, finalize writes the
    newest title on the new points before it makes them current."""
    with pipeline.worker():
        first = send(http, BODY, title="Oud")
        document_id = first["document_id"]
        wait_status(http, document_id, "indexed")
        lease(first["version_id"], "a-slow-task", seconds=60)
        second = send(http, BODY + b"\n## Koorts\n\nBel de afdeling bij koorts.\n")
        wait_for(lambda: upserted(second["version_id"]), timeout=60, what="the upsert")
        edited = patch(http, document_id, title="Nieuw", tags=["nieuw"])
        version_done(http, document_id, edited["version_id"])
        detail = http.get(f"/v1/documents/{document_id}").json()
        assert detail["current_version_id"] == first["version_id"]  # still waiting
        lease(first["version_id"], None)
        wait_for(
            lambda: (
                http.get(f"/v1/documents/{document_id}").json()["current_version_id"]
                == second["version_id"]
            ),
            timeout=60,
            what="the new content to be current",
        )
    points = qdrant_points(pipeline, document_id)
    assert points and {p["version_id"] for p in points.values()} == {second["version_id"]}
    assert {p["title"] for p in points.values()} == {"Nieuw"}
    assert all(p["tags"] == ["nieuw"] for p in points.values())
    assert verify().ok
