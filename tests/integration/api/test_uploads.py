"""The upload API through HTTP: keys, limits, sniffing, file names, listing, one document.

Real Postgres and a real Redis broker (no worker here: versions stay `received`, and the
chain messages are seen waiting in Redis).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import redis
from fastapi.testclient import TestClient

from shared.pipeline.convert.docx import DOCX_MEDIA_TYPE
from tests.support.api import (
    BARE_KEY,
    EDITOR_KEY,
    MARKDOWN,
    MAX_UPLOAD_BYTES,
    assert_problem,
    count,
    rows,
    upload,
)
from tests.support.office_files import ARTICLE_PAGE, brochure_docx
from tests.support.pdfs import brochure_pdf

ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(200)


# --- keys ---------------------------------------------------------------------------------


def test_no_key_is_refused(anonymous: TestClient, pg: str) -> None:
    response = upload(anonymous, ("a.md", MARKDOWN.encode()))
    assert_problem(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert_problem(anonymous.get("/v1/documents"), 401)
    assert count(pg, "document_versions") == 0


def test_a_wrong_key_is_refused(anonymous: TestClient) -> None:
    wrong = {"Authorization": f"Bearer {EDITOR_KEY}x"}
    assert_problem(anonymous.get("/v1/documents", headers=wrong), 401)
    basic = {"Authorization": f"Basic {EDITOR_KEY}"}
    assert_problem(anonymous.get("/v1/documents", headers=basic), 401)


def test_a_key_in_the_query_string_is_refused(anonymous: TestClient, client: TestClient) -> None:
    assert_problem(anonymous.get(f"/v1/documents?api_key={EDITOR_KEY}"), 401)
    # Even next to a valid header: a key in a URL is a leaked key.
    body = assert_problem(client.get(f"/v1/documents?token={EDITOR_KEY}"), 401)
    assert "Authorization header" in body["detail"]


def test_health_and_metrics_are_open(anonymous: TestClient) -> None:
    assert anonymous.get("/healthz").json() == {"status": "ok"}
    ready = anonymous.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert set(ready.json()["checks"]) == {"database", "broker"}  # no QDRANT_URL: not checked
    assert anonymous.get("/metrics").status_code == 200


def test_the_key_name_is_recorded_as_uploader(anonymous: TestClient, pg: str) -> None:
    for key in (EDITOR_KEY, BARE_KEY):
        response = anonymous.post(
            "/v1/documents",
            files={"file": (f"{key}.md", MARKDOWN.encode())},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert response.status_code == 202, response.text
    uploaders = rows(pg, "SELECT uploaded_by FROM document_versions ORDER BY uploaded_by")
    assert [r[0] for r in uploaders] == ["api-key-2", "editors"]
    actors = rows(pg, "SELECT actor FROM events WHERE to_status = 'received' ORDER BY actor")
    assert [r[0] for r in actors] == ["api-key-2", "editors"]


# --- accepted uploads -----------------------------------------------------------------------


def test_an_upload_is_committed_then_sent(client: TestClient, pg: str, redis_url: str) -> None:
    response = upload(
        client,
        ("knie.md", MARKDOWN.encode()),
        title="Knieoperatie",
        source_url="https://ziekenhuis.example/knie",
        language="nl",
        tags=["orthopedie, knie", "folder"],
        metadata=json.dumps({"afdeling": "orthopedie"}),
    )
    assert response.status_code == 202, response.text
    (accepted,) = response.json()["documents"]
    assert accepted["status"] == "received"
    assert accepted["media_type"] == "text/markdown"
    assert response.headers["location"] == accepted["location"]
    assert accepted["location"] == f"/v1/documents/{accepted['document_id']}"

    (stored,) = rows(pg, "SELECT content, status, filename FROM document_versions")
    assert bytes(stored.content) == MARKDOWN.encode()
    assert (stored.status, stored.filename) == ("received", "knie.md")
    # The chain is waiting in the broker for a worker (queue `cpu` starts with convert).
    assert redis.Redis.from_url(redis_url).llen("cpu") == 1

    detail = client.get(accepted["location"]).json()
    assert detail["external_id"] == "knie.md"
    assert detail["source"] == "upload"
    assert detail["title"] == "Knieoperatie"
    assert detail["tags"] == ["orthopedie", "knie", "folder"]
    assert detail["metadata"] == {"afdeling": "orthopedie"}
    assert [v["status"] for v in detail["versions"]] == ["received"]
    assert detail["events"][0]["actor"] == "editors"
    assert detail["chunk_count"] == 0 and detail["error"] is None


def test_several_files_in_one_request(client: TestClient, pg: str) -> None:
    response = upload(client, ("a.md", b"# A\n\nText a."), ("b.md", b"# B\n\nText b."))
    assert response.status_code == 202, response.text
    names = sorted(d["filename"] for d in response.json()["documents"])
    assert names == ["a.md", "b.md"]
    assert count(pg, "documents") == 2
    one_id = upload(client, ("a.md", b"x"), ("b.md", b"y"), external_id="same")
    assert_problem(one_id, 422)
    same_name = upload(client, ("c.md", b"# C"), ("c.md", b"# C again"))
    assert_problem(same_name, 422)
    assert count(pg, "document_versions") == 2


def test_a_pdf_named_md_is_stored_as_pdf(client: TestClient, pg: str) -> None:
    response = upload(client, ("brochure.md", brochure_pdf()))
    assert response.status_code == 202, response.text
    assert response.json()["documents"][0]["media_type"] == "application/pdf"
    assert rows(pg, "SELECT media_type FROM document_versions")[0][0] == "application/pdf"


def test_word_and_html_files_are_accepted_by_their_bytes(client: TestClient, pg: str) -> None:
    response = upload(
        client, ("folder.docx", brochure_docx()), ("pagina.html", ARTICLE_PAGE.encode())
    )
    assert response.status_code == 202, response.text
    stored = {
        r.filename: r.media_type
        for r in rows(pg, "SELECT filename, media_type FROM document_versions")
    }
    assert stored == {"folder.docx": DOCX_MEDIA_TYPE, "pagina.html": "text/html"}


def test_an_executable_named_pdf_is_refused(client: TestClient, pg: str) -> None:
    body = assert_problem(upload(client, ("brochure.pdf", ELF)), 415)
    assert body["detected"] == "application/octet-stream"
    # One bad file refuses the whole request: nothing of it is stored.
    assert_problem(upload(client, ("ok.md", MARKDOWN.encode()), ("bad.pdf", ELF)), 415)
    assert count(pg, "documents") == 0


def test_a_path_as_file_name_is_kept_as_metadata_only(client: TestClient, pg: str) -> None:
    response = upload(client, ("../../etc/passwd", b"# Not a password file\n\nJust text."))
    assert response.status_code == 202, response.text
    assert response.json()["documents"][0]["filename"] == "passwd"
    (stored,) = rows(
        pg,
        "SELECT v.filename, d.external_id FROM document_versions v JOIN documents d "
        "ON d.id = v.document_id",
    )
    assert tuple(stored) == ("passwd", "passwd")
    windows = upload(client, ("..\\..\\boot.ini", b"# Boot"))
    assert windows.json()["documents"][0]["filename"] == "boot.ini"


# --- refused uploads ------------------------------------------------------------------------


def test_an_oversized_upload_is_refused_and_nothing_is_stored(client: TestClient, pg: str) -> None:
    big = b"# Big\n\n" + b"a" * (MAX_UPLOAD_BYTES + 1)
    body = assert_problem(upload(client, ("big.md", big)), 413)
    assert body["status"] == 413
    # Just under the request limit, but the file alone is over the upload limit.
    just_over = b"a" * (MAX_UPLOAD_BYTES + 10)
    assert_problem(upload(client, ("over.md", just_over)), 413)
    assert count(pg, "document_versions") == 0
    assert count(pg, "documents") == 0


def test_an_oversized_chunked_upload_is_refused_while_streaming(
    client: TestClient, pg: str
) -> None:
    """No Content-Length: the body is counted as it arrives and refused past the limit."""
    boundary = "test-boundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.md"\r\n'
        "Content-Type: text/markdown\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    sent = []

    def body():  # type: ignore[no-untyped-def]
        yield head
        for _ in range(40):  # 40 x 64 KiB = 2.5 MiB, ten times the limit
            sent.append(1)
            yield b"b" * 65536
        yield tail

    response = client.post(
        "/v1/documents",
        content=body(),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert_problem(response, 413)
    assert count(pg, "document_versions") == 0


@pytest.mark.parametrize(
    ("form", "fragment"),
    [
        ({"metadata": "{not json"}, "metadata is not valid JSON"),
        ({"metadata": "[1, 2]"}, "metadata must be a JSON object"),
        ({"language": "x" * 36}, "not valid"),
    ],
)
def test_invalid_fields_are_422_problems(
    client: TestClient, pg: str, form: dict[str, str], fragment: str
) -> None:
    body = assert_problem(upload(client, ("a.md", MARKDOWN.encode()), **form), 422)
    assert fragment in body["detail"]
    assert count(pg, "document_versions") == 0


def test_missing_file_and_empty_file(client: TestClient) -> None:
    body = assert_problem(client.post("/v1/documents", data={"title": "x"}), 422)
    assert body["errors"][0]["loc"] == ["body", "file"]
    assert_problem(upload(client, ("empty.md", b"")), 422)


# --- reading, deleting, re-ingesting --------------------------------------------------------


def test_listing_filters_and_pagination(client: TestClient) -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    ids = []
    for i in range(5):
        response = upload(client, (f"page-{i}.md", f"# Page {i}\n\nText {i}.".encode()))
        ids.append(response.json()["documents"][0]["document_id"])

    first = client.get("/v1/documents", params={"limit": 2}).json()
    assert first["total"] == 5 and len(first["items"]) == 2
    second = client.get("/v1/documents", params={"limit": 2, "offset": 2}).json()
    third = client.get("/v1/documents", params={"limit": 2, "offset": 4}).json()
    seen = [d["id"] for page in (first, second, third) for d in page["items"]]
    assert sorted(seen) == sorted(ids)  # every document exactly once
    assert seen[0] == ids[-1]  # newest change first

    assert client.get("/v1/documents", params={"status": "received"}).json()["total"] == 5
    assert client.get("/v1/documents", params={"status": "indexed"}).json()["total"] == 0
    assert client.get("/v1/documents", params={"source": "cms"}).json()["total"] == 0
    since = {"updated_since": before.isoformat()}
    assert client.get("/v1/documents", params=since).json()["total"] == 5
    later = {"updated_since": (datetime.now(UTC) + timedelta(hours=1)).isoformat()}
    assert client.get("/v1/documents", params=later).json()["total"] == 0
    assert_problem(client.get("/v1/documents", params={"status": "nonsense"}), 422)
    assert_problem(client.get("/v1/documents", params={"limit": 0}), 422)


def test_unknown_and_malformed_ids(client: TestClient) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    assert_problem(client.get(f"/v1/documents/{missing}"), 404)
    assert_problem(client.get(f"/v1/documents/{missing}/chunks"), 404)
    assert_problem(client.delete(f"/v1/documents/{missing}"), 404)
    assert_problem(client.post(f"/v1/documents/{missing}/reingest"), 404)
    assert_problem(client.get("/v1/documents/not-a-uuid"), 422)


def test_delete_and_reingest(client: TestClient, pg: str, redis_url: str) -> None:
    accepted = upload(client, ("knie.md", MARKDOWN.encode())).json()["documents"][0]
    location = accepted["location"]

    again = client.post(f"{location}/reingest")
    assert again.status_code == 202, again.text
    assert again.json()["version"] == 2 and again.json()["status"] == "received"
    detail = client.get(location).json()
    assert [v["status"] for v in detail["versions"]] == ["superseded", "received"]

    removed = client.delete(location)
    assert removed.status_code == 202
    assert removed.json() == {"document_id": accepted["document_id"], "status": "deleted"}
    assert client.get(location).json()["status"] == "deleted"
    assert client.get("/v1/documents").json()["total"] == 0
    assert client.get("/v1/documents", params={"status": "deleted"}).json()["total"] == 1
    assert_problem(client.post(f"{location}/reingest"), 409)
    deleted_by = rows(pg, "SELECT actor FROM events WHERE to_status = 'deleted'")
    assert [r[0] for r in deleted_by] == ["editors"]
    assert redis.Redis.from_url(redis_url).llen("io") == 1  # the delete task, waiting


def test_metrics_report_requests_and_documents(client: TestClient) -> None:
    upload(client, ("knie.md", MARKDOWN.encode()))
    client.get("/v1/documents/00000000-0000-4000-8000-000000000000")
    text = client.get("/metrics").text
    assert (
        'ingest_http_requests_total{method="POST",route="/v1/documents",status="202"} 1.0' in text
    )
    assert 'route="/v1/documents/{document_id}",status="404"' in text
    assert 'ingest_documents{status="received"} 1.0' in text
    assert "ingest_database_up 1.0" in text
    assert "ingest_embedding_tokens_spent_total 0.0" in text


def test_a_malformed_multipart_body_is_a_400_problem(client: TestClient, pg: str) -> None:
    """Found by schemathesis: a body that is not multipart at all, under a multipart type."""
    boundary = "9cc651cd2c8d168349f50fede4c361ac"
    response = client.post(
        "/v1/documents",
        content=f"--{boundary}\r\nFalse--{boundary}--\r\n".encode(),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert_problem(response, 400)
    assert count(pg, "document_versions") == 0


def test_the_original_file_of_a_version_downloads_as_uploaded(client: TestClient) -> None:
    original = brochure_docx()
    accepted = upload(client, ("Knie folder é.docx", original)).json()["documents"][0]
    path = f"/v1/documents/{accepted['document_id']}/versions/1/file"
    response = client.get(path)
    assert response.status_code == 200, response.text
    assert response.content == original
    assert response.headers["content-type"] == DOCX_MEDIA_TYPE
    disposition = response.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="Knie folder _.docx"')
    assert "filename*=UTF-8''Knie%20folder%20%C3%A9.docx" in disposition
    assert response.headers["x-content-type-options"] == "nosniff"
    assert_problem(client.get(path.replace("/1/", "/2/")), 404)
    assert_problem(client.get(f"/v1/documents/{uuid.uuid4()}/versions/1/file"), 404)


def test_an_uploaded_html_page_downloads_as_an_attachment_never_inline(client: TestClient) -> None:
    page = b"<!doctype html><html><body><h1>X</h1><script>alert(1)</script></body></html>"
    accepted = upload(client, ("x.html", page)).json()["documents"][0]
    response = client.get(f"/v1/documents/{accepted['document_id']}/versions/1/file")
    assert response.headers["content-disposition"].startswith("attachment;")
    assert response.headers["content-security-policy"] == "sandbox"
