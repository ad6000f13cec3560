"""Edit a document's title, URL, language and labels from its page (issue 31 item 2), in
Chromium on the Dutch page: the change is a metadata version (0 tokens), the history says
which fields changed, and the chatbot's search cites the new title and finds the new label.
Real API on 127.0.0.1, a real Celery worker, Postgres, Redis, local Qdrant and the OpenAI
stand-in (the `pipeline` fixture). Writes docs/screenshot-edit-form.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from tests.support.api import API_KEYS, EDITOR_KEY, use_settings
from tests.support.pipeline import PipelineEnv
from tests.support.services import empty_redis_database
from tests.support.web import ServedApp, screenshot
from tests.support.workers import wait_for

PIPELINE_MS = 90_000  # a stage run by a real worker on a shared 2-core machine
HEUP = b"""# Heupoperatie

## Voorbereiding

Neem uw identiteitskaart, uw medicijnlijst en uw verzekeringspas mee naar het ziekenhuis.
Stop zes uur voor de operatie met eten.

## Herstel thuis

Loop de eerste zes weken met krukken en doe elke dag de oefeningen van de fysiotherapeut.
"""


@pytest.fixture
def site(pipeline: PipelineEnv, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    empty_redis_database(redis_url)
    settings = use_settings(monkeypatch, API_KEYS=API_KEYS)
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def client(base_url: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {EDITOR_KEY}"}
    return httpx.Client(base_url=base_url, headers=headers, timeout=30)


def test_edit_the_title_and_labels_from_the_page(
    dutch_page: Page, site: str, pipeline: PipelineEnv
) -> None:
    page = dutch_page
    with client(site) as api, pipeline.worker():
        files = [("file", ("heup.md", HEUP, "text/markdown"))]
        data = {"title": "Heup foldr", "tags": "orthopedie"}
        accepted = api.post("/v1/documents", files=files, data=data).json()["documents"][0]
        document_id = accepted["document_id"]

        def status() -> Any:
            detail = api.get(f"/v1/documents/{document_id}").json()
            return detail if detail["status"] == "indexed" else None

        wait_for(status, timeout=PIPELINE_MS / 1000, what="the upload to be indexed")
        paid = pipeline.embedded_inputs()

        page.goto(f"{site}/#/documents/{document_id}")
        page.get_by_label("API-sleutel").fill(EDITOR_KEY)
        page.get_by_role("button", name="Aanmelden").click()
        expect(page.get_by_role("heading", name="Heup foldr", level=1)).to_be_visible()
        page.get_by_role("button", name="Gegevens bewerken…").click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_role("heading")).to_have_text("Gegevens bewerken")
        expect(dialog.get_by_label("Titel", exact=True)).to_have_value("Heup foldr")
        expect(dialog.get_by_label("Labels, gescheiden door komma's")).to_have_value("orthopedie")
        dialog.get_by_label("Titel", exact=True).fill("Heupoperatie: voorbereiding en herstel")
        dialog.get_by_label("Labels, gescheiden door komma's").fill("orthopedie, heup")
        dialog.get_by_label("Bron-URL").fill("https://ziekenhuis.example/heup")
        screenshot(page, "edit-form")
        dialog.get_by_role("button", name="Opslaan").click()
        expect(dialog).to_be_hidden()
        expect(page.locator("#action-message")).to_contain_text("Opgeslagen: titel, URL, labels.")
        expect(page.get_by_role("heading", level=1)).to_have_text(
            "Heupoperatie: voorbereiding en herstel"
        )
        history = page.locator("#history")
        expect(history).to_contain_text("gegevens gewijzigd: titel, URL, labels")
        version = page.locator('#versions-table tr[data-version="2"]')
        expect(version).to_contain_text("gegevens gewijzigd")
        expect(version.locator(".badge")).to_have_text("geïndexeerd", timeout=PIPELINE_MS)
        expect(version.locator("td").nth(7)).to_have_text("0")  # tokens: nothing embedded
        expect(history).to_contain_text("zonder opnieuw te rekenen")
    assert pipeline.embedded_inputs() == paid

    with client(site) as api:  # the worker stopped: this process opens local Qdrant
        query = {"query": "heup herstel krukken", "top_k": 10, "filters": {"tags": ["heup"]}}
        hits = api.post("/v1/search", json=query).json()["hits"]
    assert hits and all(h["title"] == "Heupoperatie: voorbereiding en herstel" for h in hits)
    assert all("Heup foldr" not in h["citation"] for h in hits)
    assert all(h["citation_url"].startswith("https://ziekenhuis.example/heup#") for h in hits)
