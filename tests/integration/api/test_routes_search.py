"""`POST /v1/search` and API key scopes: real Postgres, local Qdrant, the hashing embedder."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, use_settings
from tests.support.retrieval import fill_index

SEARCH_KEY = "chatbot-key-0123456789"
UPLOAD_KEY = "uploader-key-0123456789"


@pytest.fixture
def search_settings(
    api_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    settings = use_settings(
        monkeypatch,
        API_KEYS=f"editors:{EDITOR_KEY},chatbot:{SEARCH_KEY}:search,uploads:{UPLOAD_KEY}:upload,read",
        QDRANT_PATH=str(tmp_path / "qdrant"),
        EMBEDDING_PROVIDER="hashing",
        HASHING_DIMENSIONS="256",
    )
    fill_index(settings)
    yield settings


def client_with(settings: Settings, key: str) -> TestClient:
    return TestClient(create_app(settings), headers={"Authorization": f"Bearer {key}"})


def test_search_answers_hits_citations_and_timings(search_settings: Settings) -> None:
    with client_with(search_settings, SEARCH_KEY) as chatbot:
        response = chatbot.post("/v1/search", json={"query": "acenocoumarol", "top_k": 2})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["hybrid"] is True and len(body["hits"]) == 2
    first = min(body["hits"], key=lambda h: h["rank"])
    assert first["citation"] == (
        "[Knieoperatie: Voorbereiding](https://zkh.example/knie#voorbereiding)"
    )
    assert first["sparse_score"] > 0 and "acenocoumarol" in first["passage"]
    assert set(body["timings_ms"]) == {"embed", "candidates", "rerank", "total"}


def test_a_passage_in_two_documents_is_one_hit_with_also_in(search_settings: Settings) -> None:
    with client_with(search_settings, SEARCH_KEY) as chatbot:
        response = chatbot.post("/v1/search", json={"query": "Wanneer is bezoek welkom?"})
    assert response.status_code == 200, response.text
    hits = [h for h in response.json()["hits"] if "15.00 tot 20.00" in h["text"]]
    assert len(hits) == 1
    (other,) = hits[0]["also_in"]
    assert {hits[0]["external_id"], other["external_id"]} == {"bezoek.md", "afdelingen.md"}
    assert other["citation"] == f"[Bezoektijden]({other['citation_url']})"
    assert other["citation_url"].startswith("https://zkh.example/")
    assert set(other) == {
        "document_id",
        "external_id",
        "title",
        "citation",
        "citation_url",
        "section",
    }


def test_search_filters_over_http(search_settings: Settings) -> None:
    with client_with(search_settings, EDITOR_KEY) as editors:  # no scopes: full access
        response = editors.post(
            "/v1/search",
            json={
                "query": "operatie",
                "filters": {"heading_prefix": "Knieoperatie > Na de operatie"},
            },
        )
    assert response.status_code == 200, response.text
    assert [h["headings"] for h in response.json()["hits"]] == [["Knieoperatie", "Na de operatie"]]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"query": "  "}, "empty"),
        ({"query": "x" * 1001}, "at most 1000"),
        ({"query": "x", "filters": {"colour": "red"}}, "colour"),
        ({"query": "x", "top_k": 0}, "top_k"),
    ],
)
def test_bad_search_requests_are_problem_details(
    search_settings: Settings, body: dict, detail: str
) -> None:
    with client_with(search_settings, SEARCH_KEY) as chatbot:
        response = chatbot.post("/v1/search", json=body)
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    assert detail in response.text


def test_a_search_only_key_may_not_upload_delete_or_reingest(search_settings: Settings) -> None:
    some_id = uuid.uuid4()
    with client_with(search_settings, SEARCH_KEY) as chatbot:
        refused = [
            chatbot.post(
                "/v1/documents", files={"file": ("a.md", b"# A\n\ntext\n", "text/markdown")}
            ),
            chatbot.delete(f"/v1/documents/{some_id}"),
            chatbot.post(f"/v1/documents/{some_id}/reingest"),
        ]
        assert chatbot.get("/v1/documents").status_code == 403  # reading needs `read`
    for response in refused:
        assert response.status_code == 403, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert "may not" in response.json()["detail"]
    with client_with(search_settings, UPLOAD_KEY) as uploads:
        assert uploads.post("/v1/search", json={"query": "bezoek"}).status_code == 403
    with client_with(search_settings, "wrong-key") as stranger:
        assert stranger.post("/v1/search", json={"query": "bezoek"}).status_code == 401


def test_openapi_documents_search_with_an_example(search_settings: Settings) -> None:
    with client_with(search_settings, SEARCH_KEY) as chatbot:
        document = chatbot.get("/openapi.json").json()
    operation = document["paths"]["/v1/search"]["post"]
    examples = operation["requestBody"]["content"]["application/json"]["examples"]
    assert examples["question"]["value"]["query"]
    assert {"403", "422"} <= set(operation["responses"])


def test_the_answer_says_whether_any_hit_answers_well(search_settings: Settings) -> None:
    """Each hit is marked `weak` by its cosine; the answer is `weak` when all are: the
    chatbot's "no good answer". The hashing embedder's threshold: words shared or not."""
    with client_with(search_settings, SEARCH_KEY) as chatbot:
        good = chatbot.post("/v1/search", json={"query": "Wanneer stop ik met acenocoumarol?"})
        absent = chatbot.post("/v1/search", json={"query": "Hoe lang duurt een staaroperatie?"})
    assert good.status_code == absent.status_code == 200
    good_body, absent_body = good.json(), absent.json()
    assert good_body["weak_threshold"] == absent_body["weak_threshold"] == 0.078
    assert good_body["weak"] is False
    best = min(good_body["hits"], key=lambda h: h["rank"])
    assert best["weak"] is False and best["dense_score"] >= 0.078
    assert absent_body["weak"] is True and absent_body["hits"]
    assert all(hit["weak"] for hit in absent_body["hits"])

    strict = search_settings.model_copy(update={"search_weak_threshold": 0.99})
    with client_with(strict, SEARCH_KEY) as chatbot:
        body = chatbot.post("/v1/search", json={"query": "acenocoumarol"}).json()
    assert body["weak"] is True and body["weak_threshold"] == 0.99


def test_openapi_documents_the_weak_fields(search_settings: Settings) -> None:
    with client_with(search_settings, SEARCH_KEY) as chatbot:
        schemas = chatbot.get("/openapi.json").json()["components"]["schemas"]
    assert {"weak", "weak_threshold"} <= set(schemas["SearchResponse"]["required"])
    assert "weak" in schemas["Hit"]["properties"]
