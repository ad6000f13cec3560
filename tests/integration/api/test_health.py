"""Readiness: ready means the database answers at the code's migration
head; the broker and Qdrant are reported (body and metrics) but do not take the API out of
service; an OpenAI provider without a key is refused at start."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from api.app import create_app
from shared.settings import Settings
from tests.support.api import use_settings
from tests.support.services import temporary_postgres_database


def test_a_broker_or_qdrant_that_is_down_is_reported_but_the_api_stays_ready(
    api_settings: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = use_settings(
        monkeypatch, REDIS_URL="redis://127.0.0.1:1/0", QDRANT_URL="http://127.0.0.1:1"
    )
    with TestClient(create_app(settings)) as http:
        response = http.get("/readyz")
        scraped = http.get("/metrics").text
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ready"] is True
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["broker"]["ok"] is False and body["checks"]["qdrant"]["ok"] is False
    assert 'ingest_dependency_up{dependency="broker"} 0.0' in scraped
    assert 'ingest_dependency_up{dependency="qdrant"} 0.0' in scraped


def test_the_broker_is_reported_up_in_metrics(api_settings: object) -> None:
    with TestClient(create_app(api_settings)) as http:  # type: ignore[arg-type]
        scraped = http.get("/metrics").text
    assert 'ingest_dependency_up{dependency="broker"} 1.0' in scraped


def test_a_database_without_the_schema_is_not_ready(
    api_settings: object, monkeypatch: pytest.MonkeyPatch, postgres_admin_url: str
) -> None:
    with temporary_postgres_database(postgres_admin_url) as empty:
        settings = use_settings(monkeypatch, DATABASE_URL=empty)
        with TestClient(create_app(settings)) as http:
            response = http.get("/readyz")
    assert response.status_code == 503
    database = response.json()["checks"]["database"]
    assert database["ok"] is False
    assert "without a schema" in database["detail"] and "ingest db upgrade" in database["detail"]


def test_the_openai_provider_without_a_key_is_a_configuration_error_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for key in (None, ""):
        if key is not None:
            monkeypatch.setenv("OPENAI_API_KEY", key)
        with pytest.raises(ValidationError, match="needs OPENAI_API_KEY"):
            Settings(embedding_provider="openai", _env_file=None)  # type: ignore[call-arg]
    assert Settings(embedding_provider="openai", openai_api_key="sk-x", _env_file=None)


def test_metrics_key_protects_metrics_and_an_editors_key_does_not_open_it(
    api_settings: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.api import EDITOR_KEY

    settings = use_settings(monkeypatch, METRICS_KEY="prometheus-scrape-key-0123")
    with TestClient(create_app(settings)) as http:
        assert http.get("/metrics").status_code == 401
        editors = {"Authorization": f"Bearer {EDITOR_KEY}"}
        assert http.get("/metrics", headers=editors).status_code == 401
        scrape = {"Authorization": "Bearer prometheus-scrape-key-0123"}
        answered = http.get("/metrics", headers=scrape)
        assert answered.status_code == 200 and "ingest_database_up" in answered.text
        assert http.get("/readyz").status_code == 200  # probes stay open
