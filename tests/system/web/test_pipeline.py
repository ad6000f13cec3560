"""The content team's page end to end: sign in, upload a Markdown page and PDFs, watch them
reach `indexed` in the table (live), search and filter, open one and read its chunks and
history, see a failure in plain words, re-ingest, delete after a confirmation.

Real API on 127.0.0.1 (uvicorn in a thread), a real Celery worker subprocess, Postgres, Redis,
local Qdrant and the OpenAI stand-in (the `pipeline` fixture); Debian's Chromium. The page in
English here; `test_dutch.py` drives the Dutch one and takes the README's screenshots.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from api.app import create_app
from tests.support.api import API_KEYS, EDITOR_KEY, WEBHOOK_SECRET, use_settings
from tests.support.pdfs import BROCHURE_TITLE, brochure_pdf, encrypted_pdf
from tests.support.pipeline import PipelineEnv
from tests.support.services import empty_redis_database
from tests.support.web import (
    ServedApp,
    choose_files,
    queue_item,
    sign_in,
    table_row,
)

PIPELINE_MS = 90_000  # a stage run by a real worker on a shared 2-core machine
PDF_TITLE = "Knieoperatie: voorbereiding en herstel"

HEUP = """# Heupoperatie

U krijgt binnenkort een nieuwe heup. Op deze pagina leest u hoe u zich voorbereidt, wat er
op de dag van de operatie gebeurt en hoe het herstel thuis verloopt.

## Voorbereiding

Neem uw identiteitskaart, uw medicijnlijst en uw verzekeringspas mee naar het ziekenhuis.
Stop zes uur voor de operatie met eten. Heldere dranken mag u tot twee uur vooraf drinken.
Gebruikt u bloedverdunners? Overleg dan met uw arts wanneer u daarmee stopt.

## De operatie

De operatie duurt ongeveer anderhalf uur. U krijgt een ruggenprik of een algehele narcose.
Na de operatie gaat u naar de uitslaapkamer en daarna naar de verpleegafdeling.

## Herstel thuis

- Loop de eerste zes weken met krukken.
- Doe elke dag de oefeningen van de fysiotherapeut.
- Bel de afdeling bij koorts boven 38,5 graden of als de wond gaat lekken.
"""


@pytest.fixture
def site(pipeline: PipelineEnv, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    empty_redis_database(redis_url)
    settings = use_settings(monkeypatch, API_KEYS=API_KEYS, CMS_WEBHOOK_SECRET=WEBHOOK_SECRET)
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def api(base_url: str, path: str) -> dict:
    response = httpx.get(base_url + path, headers={"Authorization": f"Bearer {EDITOR_KEY}"})
    assert response.status_code == 200, response.text
    return response.json()


def status_of(page: Page, title: str) -> Locator:
    return table_row(page, title).locator(".badge")


def test_upload_watch_inspect_delete(page: Page, site: str, pipeline: PipelineEnv) -> None:
    sign_in(page, site, EDITOR_KEY)
    expect(page.get_by_role("heading", name="Upload documents")).to_be_visible()

    with pipeline.worker():
        # One PDF with its details, then a Markdown page and a locked PDF together.
        choose_files(page, ("brochure.pdf", "application/pdf", brochure_pdf()))
        page.get_by_label("Title", exact=True).fill(PDF_TITLE)
        page.get_by_label("Source URL", exact=True).fill("https://ziekenhuis.example/knie")
        page.get_by_label("Language", exact=True).select_option("nl")
        page.get_by_label("Tags", exact=True).fill("orthopedie, knie")
        page.get_by_role("button", name="Upload", exact=True).click()
        expect(queue_item(page, "brochure.pdf")).to_contain_text("Received as version 1.")

        choose_files(
            page,
            ("heupoperatie.md", "text/markdown", HEUP.encode()),
            ("beveiligd.pdf", "application/pdf", encrypted_pdf()),
        )
        page.get_by_role("button", name="Upload 2 files").click()
        for name in ("heupoperatie.md", "beveiligd.pdf"):
            expect(queue_item(page, name)).to_contain_text("Received as version 1.")

        page.get_by_role("navigation", name="Main").get_by_role("link", name="Documents").click()
        expect(table_row(page, PDF_TITLE)).to_be_visible()
        # The table follows the stages by itself: no reload, no clicks.
        expect(status_of(page, PDF_TITLE)).to_have_text("indexed", timeout=PIPELINE_MS)
        expect(status_of(page, "heupoperatie.md")).to_have_text("indexed", timeout=PIPELINE_MS)
        expect(status_of(page, "beveiligd.pdf")).to_have_text("failed", timeout=PIPELINE_MS)
        expect(page.locator("#documents-summary")).to_have_text("3 documents, 1 failed.")
        markdown_row = table_row(page, "heupoperatie.md")
        # Cells: select, title, source, status, last change, chunks, tokens.
        assert int(markdown_row.locator("td").nth(5).inner_text()) >= 1  # chunks
        assert int(markdown_row.locator("td").nth(6).inner_text().replace(",", "")) > 50
        expect(markdown_row.locator("td").nth(2)).to_have_text("upload")

        # Search by title, filter by status and source.
        page.get_by_label("Search by title", exact=True).fill("knieoperatie")
        expect(page.locator("#documents-table tbody tr")).to_have_count(1)
        expect(table_row(page, PDF_TITLE)).to_be_visible()
        page.get_by_label("Search by title", exact=True).fill("")
        expect(page.locator("#documents-table tbody tr")).to_have_count(3)
        page.get_by_label("Status", exact=True).select_option("failed")
        expect(page.locator("#documents-table tbody tr")).to_have_count(1)
        expect(table_row(page, "beveiligd.pdf")).to_be_visible()
        page.get_by_label("Status", exact=True).select_option("")
        page.get_by_label("Source", exact=True).select_option("upload")
        expect(page.locator("#documents-table tbody tr")).to_have_count(3)

        # The failure, in words an editor can act on.
        page.get_by_role("link", name="beveiligd.pdf", exact=True).click()
        error = page.locator("#document-error")
        expect(error).to_contain_text("The latest version could not be indexed")
        expect(error).to_contain_text(re.compile("password", re.IGNORECASE))
        expect(error).not_to_contain_text("Traceback")

        # One document: facts, versions, history and its chunks.
        page.get_by_role("link", name="All documents").click()
        page.get_by_role("link", name=PDF_TITLE, exact=True).click()
        expect(page.get_by_role("heading", name=PDF_TITLE, level=1)).to_be_visible()
        facts = page.locator("#document-facts")
        expect(facts).to_contain_text("orthopedie, knie")
        expect(facts).to_contain_text("https://ziekenhuis.example/knie")
        history = page.locator("#history")
        expect(history).to_contain_text("uploaded by editors")
        for stage in ("converting", "chunking", "embedding", "upserting", "indexed"):
            expect(history.locator(f'li[data-status="{stage}"]')).to_have_count(1)
        chunks = page.locator("article.chunk")
        expect(chunks.first).to_be_visible()
        detail = api(site, "/v1/documents/" + page.url.split("#/documents/")[1])
        expect(chunks).to_have_count(detail["chunk_count"])
        first = chunks.first
        expect(first.locator(".heading-path")).to_contain_text(BROCHURE_TITLE)
        expect(first.locator(".chunk-meta")).to_contain_text("tokens")
        expect(first.locator(".chunk-meta")).to_contain_text("page 1")
        expect(first.locator(".chunk-text")).not_to_be_empty()
        expect(page.locator("#versions-table tbody tr")).to_have_count(1)

        # Re-ingest: a second version that changes nothing (same bytes) and says so.
        page.get_by_role("button", name="Re-ingest").click()
        expect(page.locator("#action-message")).to_have_text(
            "Sent through the pipeline again as a new version."
        )
        expect(page.locator("#versions-table tbody tr")).to_have_count(2)
        expect(page.locator('#versions-table tr[data-version="2"] .badge')).to_have_text(
            re.compile("unchanged|indexed"), timeout=PIPELINE_MS
        )

        # Delete, after the confirmation; cancelling first leaves it alone.
        document_id = detail["id"]
        page.get_by_role("button", name="Delete…").click()
        dialog = page.get_by_role("dialog", name="Delete this document?")
        expect(dialog).to_be_visible()
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_be_hidden()
        assert api(site, f"/v1/documents/{document_id}")["status"] != "deleted"
        page.get_by_role("button", name="Delete…").click()
        dialog.get_by_role("button", name="Delete", exact=True).click()

        expect(page.get_by_role("heading", name="Documents", level=1)).to_be_visible()
        expect(page.locator("#flash")).to_have_text(f"Deleted “{PDF_TITLE}”.")
        expect(table_row(page, PDF_TITLE)).to_have_count(0)
        expect(page.locator("#documents-table tbody tr")).to_have_count(2)
    assert api(site, f"/v1/documents/{document_id}")["status"] == "deleted"
