"""A signal when nothing processes: `/readyz` says whether workers answer
and how long the oldest version nobody holds has waited, `/metrics` has it as a gauge, and the
editors' page shows a Dutch banner once versions wait past PROCESSING_STALL_SECONDS.

Real API, Postgres and Redis; a real Celery worker for the "workers answer" case; Chromium.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from playwright.sync_api import Page, expect

from api import processing
from api.app import create_app
from shared.settings import Settings
from tests.support.api import API_KEYS, EDITOR_KEY, MARKDOWN, use_settings
from tests.support.pipeline import PipelineEnv
from tests.support.web import ServedApp


def forget_ping() -> None:
    """Ask the workers again on the next reading: the API keeps a ping's answer a while, and
    these tests start and stop workers."""
    processing._last_ping = None


def upload_and_age(http: httpx.Client | TestClient, pg: str, minutes: int) -> None:
    """Upload one page (no worker takes it) and make it look `minutes` old."""
    files = [("file", ("bezoek.md", io.BytesIO(MARKDOWN.encode()), "text/markdown"))]
    answered = http.post("/v1/documents", files=files)
    assert answered.status_code == 202, answered.text
    engine = sa.create_engine(pg)
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE document_versions SET updated_at = now() - make_interval(mins => :m)"),
            {"m": minutes},
        )
    engine.dispose()


def test_no_worker_and_old_waiting_versions_make_readyz_degraded_not_down(
    client: TestClient, pg: str
) -> None:
    forget_ping()
    body = client.get("/readyz").json()
    assert body["degraded"] is True  # no worker answers, even with nothing waiting
    assert body["processing"] == {
        "workers": "none",
        "oldest_waiting_seconds": None,
        "stalled": False,
    }

    upload_and_age(client, pg, minutes=20)
    response = client.get("/readyz")
    assert response.status_code == 200  # uploads are still taken and kept
    body = response.json()
    assert body["ready"] is True and body["degraded"] is True
    assert body["processing"]["workers"] == "none" and body["processing"]["stalled"] is True
    assert 1190 < body["processing"]["oldest_waiting_seconds"] < 1300
    gauge = next(
        line
        for line in client.get("/metrics").text.splitlines()
        if line.startswith("ingest_oldest_waiting_seconds ")
    )
    assert 1190 < float(gauge.split()[1]) < 1300


def test_an_answering_worker_is_counted(
    api_settings: Settings, pipeline: PipelineEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = use_settings(monkeypatch, REDIS_URL=pipeline.settings.redis_url)
    forget_ping()
    with pipeline.worker(), TestClient(create_app(settings)) as http:
        body = http.get("/readyz").json()
    forget_ping()
    assert body["processing"]["workers"] == "1", body
    assert body["degraded"] is False


@pytest.fixture
def stalled_site(api_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    settings = use_settings(monkeypatch, API_KEYS=API_KEYS, PROCESSING_STALL_SECONDS="300")
    forget_ping()
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def test_the_page_shows_a_dutch_banner_when_processing_stalls(
    dutch_page: Page, stalled_site: str, pg: str
) -> None:
    headers = {"Authorization": f"Bearer {EDITOR_KEY}"}
    with httpx.Client(base_url=stalled_site, headers=headers) as http:
        upload_and_age(http, pg, minutes=12)
    page = dutch_page
    page.goto(stalled_site + "/")
    page.get_by_label("API-sleutel").fill(EDITOR_KEY)
    page.get_by_role("button", name="Aanmelden").click()
    banner = page.locator("#stall-banner")
    expect(banner).to_be_visible()
    expect(banner).to_have_text(
        "De verwerking staat stil: nieuwe documenten wachten sinds 12 minuten en er draait "
        "geen verwerker. Uw uploads zijn bewaard; waarschuw de beheerder."
    )
