"""Hide and show a document or one chunk (issue 29 item 4): the real API on Postgres, the
pipeline run in this process into local Qdrant (hashing embedder), searched over HTTP."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from shared.pipeline import wiring
from shared.pipeline.in_process import run_local
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, assert_problem, use_settings

READER_KEY = "reader-key-0123456789"
SECTIONS = {
    "Voorbereiding": "Neem uw identiteitskaart en medicijnlijst mee naar het ziekenhuis.",
    "Medicijnen": "Stop met acenocoumarol vijf dagen voor de knieoperatie, zegt de arts.",
    "Nazorg": "Koel de knie met ijs en loop elke dag met krukken door de gang.",
}


def markdown(sections: dict[str, str]) -> bytes:
    body = "".join(f"## {name}\n\n{text}\n\n" for name, text in sections.items())
    return f"# Knieoperatie\n\n{body}".encode()


@pytest.fixture
def settings(api_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return use_settings(
        monkeypatch,
        API_KEYS=f"editors:{EDITOR_KEY},readers:{READER_KEY}:read,search",
        QDRANT_PATH=str(tmp_path / "qdrant"),
        EMBEDDING_PROVIDER="hashing",
        HASHING_DIMENSIONS="256",
        CHUNK_TARGET_TOKENS="8",
        CHUNK_MAX_TOKENS="40",
        CHUNK_MIN_TOKENS="0",
        CHUNK_OVERLAP_TOKENS="0",
    )


@pytest.fixture
def editors(settings: Settings) -> Iterator[TestClient]:
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {EDITOR_KEY}"}
    ) as client:
        yield client


def ingest(client: TestClient, sections: dict[str, str]) -> str:
    """Upload `knie.md` and run its version through the pipeline here; the document id."""
    response = client.post(
        "/v1/documents", files={"file": ("knie.md", markdown(sections), "text/markdown")}
    )
    assert response.status_code == 202, response.text
    accepted = response.json()["documents"][0]
    run_local([uuid.UUID(accepted["version_id"])])
    detail = client.get(f"/v1/documents/{accepted['document_id']}").json()
    assert detail["status"] == "indexed", detail
    return str(accepted["document_id"])


def found(client: TestClient, query: str) -> list[str]:
    """The texts of the search's hits (hybrid, every candidate)."""
    response = client.post("/v1/search", json={"query": query, "top_k": 50, "candidates": 200})
    assert response.status_code == 200, response.text
    return [hit["text"] for hit in response.json()["hits"]]


def texts_with(hits: list[str], word: str) -> int:
    return sum(word in text for text in hits)


def chunk_index(client: TestClient, document_id: str, word: str) -> int:
    chunks = client.get(f"/v1/documents/{document_id}/chunks").json()["items"]
    return next(c["index"] for c in chunks if word in c["text"])


def test_a_hidden_document_leaves_search_until_shown(editors: TestClient) -> None:
    document_id = ingest(editors, SECTIONS)
    assert texts_with(found(editors, "acenocoumarol knieoperatie"), "acenocoumarol") == 1

    response = editors.post(f"/v1/documents/{document_id}/hide", json={"reason": "verouderd"})
    assert response.status_code == 200, response.text
    assert response.json() == {
        "document_id": document_id,
        "hidden": True,
        "chunk_index": None,
        "point_id": None,
        "index_updated": True,
    }
    assert found(editors, "acenocoumarol knieoperatie krukken identiteitskaart") == []
    detail = editors.get(f"/v1/documents/{document_id}").json()
    assert detail["hidden"] is True and detail["hidden_by"] == "editors"
    assert detail["hidden_reason"] == "verouderd"
    hidden_event = detail["events"][-1]
    assert hidden_event["to_status"] == "hidden" and hidden_event["actor"] == "editors"
    assert hidden_event["detail"] == "verouderd"
    chunks = editors.get(f"/v1/documents/{document_id}/chunks").json()["items"]
    assert chunks and all(c["hidden"] for c in chunks)
    listed = editors.get("/v1/documents").json()["items"]
    assert [d["hidden"] for d in listed] == [True]

    shown = editors.post(f"/v1/documents/{document_id}/show")  # no body: no reason
    assert shown.status_code == 200 and shown.json()["hidden"] is False
    assert texts_with(found(editors, "acenocoumarol knieoperatie"), "acenocoumarol") == 1
    detail = editors.get(f"/v1/documents/{document_id}").json()
    assert detail["hidden"] is False and detail["hidden_reason"] is None
    assert detail["events"][-1]["to_status"] == "shown"


def hidden_field(settings: Settings, point_id: str) -> object:
    """The `hidden` payload field of a point as the index holds it."""
    index = wiring.index_for(settings, wiring.embedder(settings))
    stored = index.retrieve([uuid.UUID(point_id)])
    return stored[0].payload.get("hidden") if stored else None


def test_a_hidden_chunk_stays_hidden_in_a_new_version_while_its_text_is_unchanged(
    editors: TestClient, settings: Settings
) -> None:
    document_id = ingest(editors, SECTIONS)
    medicines = chunk_index(editors, document_id, "acenocoumarol")
    response = editors.post(
        f"/v1/documents/{document_id}/chunks/{medicines}/hide",
        json={"reason": "dosering klopt niet"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["chunk_index"] == medicines and response.json()["index_updated"]
    point_id = response.json()["point_id"]

    hits = found(editors, "acenocoumarol knieoperatie krukken identiteitskaart")
    assert texts_with(hits, "acenocoumarol") == 0  # only that chunk is gone
    assert texts_with(hits, "krukken") == 1 and texts_with(hits, "identiteitskaart") == 1
    event = editors.get(f"/v1/documents/{document_id}").json()["events"][-1]
    assert (event["to_status"], event["actor"]) == ("chunk_hidden", "editors")
    assert event["detail"] == f"chunk {medicines}: dosering klopt niet"
    chunks = editors.get(f"/v1/documents/{document_id}/chunks").json()["items"]
    assert [c["hidden"] for c in chunks] == [c["index"] == medicines for c in chunks]
    assert chunks[medicines]["hidden_reason"] == "dosering klopt niet"

    # A new version: another section changed, the hidden chunk's text is not.
    ingest(editors, {**SECTIONS, "Nazorg": "Koel de knie met ijs en fiets elke dag een stukje."})
    hits = found(editors, "acenocoumarol knieoperatie ijs fiets")
    assert texts_with(hits, "acenocoumarol") == 0 and texts_with(hits, "fiets") == 1
    assert editors.get(f"/v1/documents/{document_id}").json()["hidden_chunks"] == 1
    assert hidden_field(settings, point_id) is True  # the new version's upsert kept it

    # Its text changed: a new chunk, visible.
    changed = {**SECTIONS, "Medicijnen": "Stop met acenocoumarol drie dagen voor de operatie."}
    ingest(editors, changed)
    assert texts_with(found(editors, "acenocoumarol drie dagen"), "acenocoumarol") == 1
    assert editors.get(f"/v1/documents/{document_id}").json()["hidden_chunks"] == 0


def test_a_shown_chunk_returns_and_the_index_payload_follows(
    editors: TestClient, settings: Settings
) -> None:
    document_id = ingest(editors, SECTIONS)
    medicines = chunk_index(editors, document_id, "acenocoumarol")
    point_id = editors.post(f"/v1/documents/{document_id}/chunks/{medicines}/hide").json()[
        "point_id"
    ]
    assert hidden_field(settings, point_id) is True  # the index itself, not only the record

    by_id = editors.post(f"/v1/documents/{document_id}/chunks/{point_id}/show")
    assert by_id.status_code == 200 and by_id.json()["chunk_index"] == medicines
    assert texts_with(found(editors, "acenocoumarol knieoperatie"), "acenocoumarol") == 1
    assert hidden_field(settings, point_id) is False


def test_hide_refusals_are_problem_details(editors: TestClient, settings: Settings) -> None:
    document_id = ingest(editors, SECTIONS)
    assert_problem(editors.post(f"/v1/documents/{uuid.uuid4()}/hide"), 404)
    assert_problem(editors.post(f"/v1/documents/{document_id}/chunks/99/hide"), 404)
    assert_problem(editors.post(f"/v1/documents/{document_id}/chunks/{uuid.uuid4()}/hide"), 404)
    assert_problem(editors.post(f"/v1/documents/{document_id}/hide", json={"why": "x"}), 422)
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {READER_KEY}"}
    ) as readers:
        assert_problem(readers.post(f"/v1/documents/{document_id}/hide"), 403)
    assert editors.get(f"/v1/documents/{document_id}").json()["hidden"] is False


def test_ingest_status_shows_what_is_hidden(editors: TestClient) -> None:
    from typer.testing import CliRunner

    from worker.cli.main import app

    document_id = ingest(editors, SECTIONS)
    runner = CliRunner()
    assert "hidden from search" not in runner.invoke(app, ["status"]).stdout
    editors.post(f"/v1/documents/{document_id}/chunks/0/hide")
    editors.post(f"/v1/documents/{document_id}/hide", json={"reason": "verouderd"})

    overview = runner.invoke(app, ["status"])
    assert overview.exit_code == 0, overview.output
    assert "hidden from search: 1 document(s), 1 single chunk(s)" in overview.stdout
    one = runner.invoke(app, ["status", document_id])
    assert one.exit_code == 0, one.output
    assert "by editors: verouderd" in one.stdout
    assert "chunk_hidden" in one.stdout and "hidden" in one.stdout


@pytest.mark.filterwarnings("ignore:Failed to obtain server version:UserWarning")
def test_a_hide_holds_when_the_index_cannot_be_reached(
    editors: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    document_id = ingest(editors, SECTIONS)
    medicines = chunk_index(editors, document_id, "acenocoumarol")
    point_id = editors.get(f"/v1/documents/{document_id}/chunks").json()["items"][medicines][
        "point_id"
    ]
    # A Qdrant server nobody listens on: the record changes, the payload cannot.
    away = use_settings(monkeypatch, QDRANT_URL="http://127.0.0.1:9")
    with TestClient(
        create_app(away), headers={"Authorization": f"Bearer {EDITOR_KEY}"}
    ) as unreachable:
        response = unreachable.post(f"/v1/documents/{document_id}/chunks/{medicines}/hide")
    assert response.status_code == 200, response.text
    assert response.json()["index_updated"] is False

    monkeypatch.delenv("QDRANT_URL")
    back = use_settings(monkeypatch)
    assert hidden_field(back, point_id) is False  # the index did not hear of it...
    with TestClient(create_app(back), headers={"Authorization": f"Bearer {EDITOR_KEY}"}) as client:
        hits = found(client, "acenocoumarol knieoperatie krukken")
        assert texts_with(hits, "acenocoumarol") == 0  # ...search leaves it out by the record
        assert texts_with(hits, "krukken") == 1
        ingest(client, {**SECTIONS, "Nazorg": "Fiets elke dag een stukje."})
    assert hidden_field(back, point_id) is True  # the next version's upsert wrote it
