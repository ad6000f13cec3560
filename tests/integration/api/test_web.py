"""What the web page needs from the API beyond the first version: a title search (`q`), the
list of sources for the filter, chunk and token totals per document, and the page itself at
`/` with the upload limit written in and a strict Content-Security-Policy.

Real Postgres and Redis, no worker: chunks are written with the repository, as the chunk
stage would, to give the totals something to add up.
"""

from __future__ import annotations

import io
import uuid

import sqlalchemy as sa
from fastapi.testclient import TestClient

from shared import repository as repo
from shared.db import transaction
from shared.models import DocumentVersion
from tests.support.api import MARKDOWN, MAX_UPLOAD_BYTES, cms_event, post_event


def upload(client: TestClient, name: str, title: str | None = None) -> dict[str, str]:
    data = {"title": title} if title else {}
    response = client.post(
        "/v1/documents", files={"file": (name, io.BytesIO(MARKDOWN.encode()))}, data=data
    )
    assert response.status_code == 202, response.text
    return response.json()["documents"][0]


def listed(client: TestClient, **params: str) -> list[str]:
    response = client.get("/v1/documents", params=params)
    assert response.status_code == 200, response.text
    return sorted(item["external_id"] for item in response.json()["items"])


def test_search_by_title_or_file_name(client: TestClient) -> None:
    upload(client, "knie.md", title="Knieoperatie: voorbereiding")
    upload(client, "heup.md", title="Heupoperatie")
    upload(client, "50%_korting.md")

    assert listed(client, q="KNIE") == ["knie.md"]  # any case
    assert listed(client, q="operatie") == ["heup.md", "knie.md"]
    assert listed(client, q="heup.md") == ["heup.md"]  # the file name, when there is no title
    assert listed(client, q="50%_") == ["50%_korting.md"]  # wildcards taken literally
    assert listed(client, q="%") == ["50%_korting.md"]
    assert listed(client, q="_") == ["50%_korting.md"]
    assert listed(client, q="nothing like it") == []
    assert len(listed(client, q="  ")) == 3  # blank: no filter
    both = client.get("/v1/documents", params={"q": "operatie", "status": "received"}).json()
    assert both["total"] == 2
    assert client.get("/v1/documents", params={"q": "x" * 201}).status_code == 422
    assert client.get("/v1/documents", params={"q": "a\x00b"}).status_code == 422
    assert client.get("/v1/documents", params={"source": "\x00"}).status_code == 422


def test_sources_with_counts(client: TestClient) -> None:
    assert client.get("/v1/documents/sources").json() == {"items": []}
    upload(client, "knie.md")
    upload(client, "heup.md")
    assert post_event(client, cms_event("publish", "page-1")).status_code == 202
    assert client.get("/v1/documents/sources").json() == {
        "items": [{"source": "cms", "documents": 1}, {"source": "upload", "documents": 2}]
    }
    assert listed(client, source="upload") == ["heup.md", "knie.md"]


def test_sources_need_a_key(anonymous: TestClient, pg: str) -> None:
    assert anonymous.get("/v1/documents/sources").status_code == 401


def test_totals_count_the_current_versions_chunks(client: TestClient) -> None:
    accepted = upload(client, "knie.md")
    document_id = uuid.UUID(accepted["document_id"])
    version_id = uuid.UUID(accepted["version_id"])
    fresh = client.get("/v1/documents").json()["items"][0]
    assert (fresh["chunk_count"], fresh["token_count"], fresh["tokens_spent"]) == (0, 0, 0)

    rows = [
        {
            "document_id": document_id,
            "index": index,
            "point_id": uuid.uuid4(),
            "content_hash": f"{index:064d}",
            "text": f"chunk {index}",
            "token_count": tokens,
            "headings": ["Knieoperatie"],
            "kinds": ["text"],
            "char_start": 0,
            "char_end": 10,
            "page_start": None,
            "page_end": None,
            "extra": {},
        }
        for index, tokens in enumerate([120, 80, 45])
    ]
    with transaction() as session:
        repo.replace_chunks_of(session, {version_id: rows})
        session.execute(
            sa.update(DocumentVersion)
            .where(DocumentVersion.id == version_id)
            .values(chunk_count=len(rows))
        )
        repo.add_usages(session, {version_id: 300}, {version_id: 1}, {version_id: 3})
        document = repo.get_document(session, document_id)
        assert document is not None
        document[0].current_version_id = version_id  # as finalize does

    item = client.get("/v1/documents").json()["items"][0]
    assert (item["chunk_count"], item["token_count"], item["tokens_spent"]) == (3, 245, 300)
    detail = client.get(f"/v1/documents/{document_id}").json()
    assert (detail["chunk_count"], detail["token_count"], detail["tokens_spent"]) == (3, 245, 300)


def test_the_page_is_served_with_the_limit_and_a_strict_policy(anonymous: TestClient) -> None:
    page = anonymous.get("/")  # the page needs no key; its API calls do
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert f'<meta name="max-upload-bytes" content="{MAX_UPLOAD_BYTES}">' in page.text
    assert '<html lang="nl">' in page.text  # Dutch by default; the switch sets `lang` itself
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    for asset in (
        "i18n.js",
        "markdown.js",
        "app.js",
        "api.js",
        "ui.js",
        "upload.js",
        "documents.js",
        "document.js",
    ):
        assert f'src="/static/{asset}"' in page.text
        script = anonymous.get(f"/static/{asset}")
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert anonymous.get("/static/app.css").status_code == 200
    assert '<link rel="icon" href="/static/favicon.svg"' in page.text
    icon = anonymous.get("/static/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert anonymous.get("/static/missing.js").status_code == 404
    assert "/" not in anonymous.get("/openapi.json").json()["paths"]
