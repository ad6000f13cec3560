"""Bulk actions on documents (by ids or by the list's filter) and the list as CSV.
Real Postgres and Redis; versions stay `received` (no worker here)."""

from __future__ import annotations

import csv
import io
import uuid

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, rows, use_settings


def upload(http: TestClient, name: str, text: str, **form: str) -> str:
    files = [("file", (name, io.BytesIO(text.encode()), "text/markdown"))]
    answered = http.post("/v1/documents", files=files, data=form)
    assert answered.status_code == 202, answered.text
    return answered.json()["documents"][0]["document_id"]


def test_reingest_several_by_id_then_delete_all_of_a_filter(client: TestClient, pg: str) -> None:
    knie = upload(client, "knie.md", "# Knie\n\nTekst over de knie.\n")
    heup = upload(client, "heup.md", "# Heup\n\nTekst over de heup.\n")
    upload(client, "oog.md", "# Oog\n\nTekst over het oog.\n")

    missing = str(uuid.uuid4())
    answer = client.post(
        "/v1/documents/bulk", json={"action": "reingest", "ids": [knie, heup, missing]}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["done"] == 2
    outcomes = {item["document_id"]: item["outcome"] for item in body["items"]}
    assert outcomes == {knie: "done", heup: "done", missing: "not_found"}
    numbers = rows(
        pg,
        "SELECT d.external_id, count(*) AS n FROM document_versions v "
        "JOIN documents d ON d.id = v.document_id GROUP BY d.external_id",
    )
    assert {r.external_id: r.n for r in numbers} == {"knie.md": 2, "heup.md": 2, "oog.md": 1}

    deleted = client.post(
        "/v1/documents/bulk", json={"action": "delete", "filter": {"q": "e"}}
    ).json()
    assert deleted["done"] == 2  # knie.md and heup.md, not oog.md
    left = client.get("/v1/documents").json()
    assert [d["external_id"] for d in left["items"]] == ["oog.md"]


def test_bulk_refusals(
    client: TestClient, api_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    both = {"action": "reingest", "ids": [str(uuid.uuid4())], "filter": {}}
    assert client.post("/v1/documents/bulk", json=both).status_code == 422
    assert client.post("/v1/documents/bulk", json={"action": "hide!", "ids": []}).status_code == 422
    settings = use_settings(monkeypatch, API_KEYS=f"editors:{EDITOR_KEY}:read,upload,search")
    with TestClient(create_app(settings)) as limited:
        limited.headers["Authorization"] = f"Bearer {EDITOR_KEY}"
        refused = limited.post("/v1/documents/bulk", json={"action": "delete", "ids": []})
        not_reingest = limited.post("/v1/documents/bulk", json={"action": "reingest", "ids": []})
    assert refused.status_code == 403
    assert "delete" in refused.json()["detail"]
    assert not_reingest.status_code == 403  # each action needs its own scope
    assert not_reingest.json()["required_scope"] == "reingest"


def test_the_list_exports_as_csv_with_its_filter_and_no_formulas(client: TestClient) -> None:
    upload(client, "knie.md", "# Knie\n\nTekst.\n", title='=HYPERLINK("http://x")')
    upload(client, "heup.md", "# Heup\n\nTekst.\n", title="Heupoperatie")
    response = client.get("/v1/documents/export.csv")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"].startswith("attachment;")
    table = list(csv.DictReader(io.StringIO(response.text)))
    assert {r["external_id"] for r in table} == {"knie.md", "heup.md"}
    titles = {r["external_id"]: r["title"] for r in table}
    assert titles["knie.md"].startswith("'=")  # a spreadsheet shows it as text
    assert {r["status"] for r in table} == {"received"}
    only = list(csv.DictReader(io.StringIO(client.get("/v1/documents/export.csv?q=heup").text)))
    assert [r["title"] for r in only] == ["Heupoperatie"]


def test_a_nul_character_in_a_filter_is_a_422_not_a_database_error(client: TestClient) -> None:
    """Postgres text cannot hold NUL (schemathesis found the export's 500)."""
    for query in ("q=%00", "source=a%00b"):
        assert client.get(f"/v1/documents/export.csv?{query}").status_code == 422
    for field in ("q", "source"):
        body = {"action": "reingest", "filter": {field: "x\x00"}}
        assert client.post("/v1/documents/bulk", json=body).status_code == 422
