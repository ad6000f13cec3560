"""The editors' page as the content team first sees it: in Dutch, with an English switch.

It drives the Dutch page end to end (sign in, upload, a new version made visible, the table,
a document's chunks as readable text with the overlap marked and the raw Markdown a click away,
a PDF chunk's pages, a failure explained in Dutch without a pointless "Opnieuw verwerken"),
refused front matter explained (at upload, and on a CMS page's failed version), switches to
English and back, and takes the Dutch screenshots the README shows.

Real API (uvicorn in a thread), a real Celery worker, Postgres, Redis, local Qdrant, the OpenAI
stand-in; Debian's Chromium.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from tests.support.api import (
    API_KEYS,
    EDITOR_KEY,
    WEBHOOK_SECRET,
    cms_event,
    signed_headers,
    use_settings,
)
from tests.support.dutch_words import english_words
from tests.support.pdfs import brochure_pdf, encrypted_pdf
from tests.support.pipeline import PipelineEnv
from tests.support.services import empty_redis_database, free_port, serve_http
from tests.support.web import DOCS, ServedApp, queue_item, screenshot, table_row
from tests.support.web import choose_files as choose_any
from tests.support.workers import wait_for

PIPELINE_MS = 90_000  # a stage run by a real worker on a shared 2-core machine
TITLE = "Heupoperatie"
#: The stand-in CMS's port, known before it starts: CONTENT_FETCH_ALLOWED_HOSTS names it.
CMS_PORT = free_port()
PDF_TITLE = "Knieoperatie - patiëntenfolder"  # from the PDF's own metadata
SENTENCES = [
    "U krijgt binnenkort een nieuwe heup en leest hier hoe u zich voorbereidt.",
    "Neem uw identiteitskaart, uw medicijnlijst en uw verzekeringspas mee.",
    "Stop zes uur voor de operatie met eten; heldere dranken mag u tot twee uur vooraf.",
    "Gebruikt u bloedverdunners, overleg dan met uw arts wanneer u daarmee stopt.",
    "De fysiotherapeut komt op de eerste dag langs en oefent met u het lopen met krukken.",
    "Bel de afdeling bij koorts boven 38,5 graden of als de wond gaat lekken.",
]


def heup_page() -> str:
    """One H1 long enough for several chunks (so later chunks start with overlap), with a list,
    a table, bold text and HTML that must stay text."""
    sections = []
    for number, name in enumerate(["Voorbereiding", "De operatie", "Herstel", "Thuis"]):
        paragraphs = [" ".join(SENTENCES[(number + k) % 6] for k in range(6)) for _ in range(3)]
        sections.append(f"## {name}\n\n" + "\n\n".join(paragraphs))
    sections[0] += "\n\n- Loop de eerste zes weken met **krukken**.\n- Doe elke dag de oefeningen."
    sections[1] += "\n\n| Tijd | Wat |\n|---|---|\n| 07:00 | Nuchter |\n| 08:30 | Operatie |"
    sections[2] += '\n\n<img src="x" onerror="document.title=\'hacked\'"> blijft tekst.'
    return f"# {TITLE}\n\n" + "\n\n".join(sections) + "\n"


@pytest.fixture
def site(pipeline: PipelineEnv, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    empty_redis_database(redis_url)
    settings = use_settings(
        monkeypatch,
        API_KEYS=API_KEYS,
        CMS_WEBHOOK_SECRET=WEBHOOK_SECRET,
        CONTENT_FETCH_ALLOWED_HOSTS=f"127.0.0.1:{CMS_PORT}",  # the front-matter test's CMS
    )
    pipeline.env["CONTENT_FETCH_ALLOWED_HOSTS"] = f"127.0.0.1:{CMS_PORT}"
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def api(base_url: str, path: str) -> dict:
    response = httpx.get(base_url + path, headers={"Authorization": f"Bearer {EDITOR_KEY}"})
    assert response.status_code == 200, response.text
    return response.json()


def choose_files(page: Page, *files: tuple[str, str, bytes]) -> None:
    choose_any(page, *files, zone="Sleep bestanden hierheen of kies bestanden")


def aanmelden(page: Page, base_url: str) -> None:
    page.goto(base_url + "/")
    expect(page.locator("html")).to_have_attribute("lang", "nl")
    expect(page.get_by_role("heading", name="Aanmelden", level=1)).to_be_visible()
    page.get_by_label("API-sleutel").fill(EDITOR_KEY)
    page.get_by_role("button", name="Aanmelden").click()
    expect(page.get_by_role("heading", name="Documenten uploaden", level=1)).to_be_focused()


def no_english(page: Page) -> None:
    """The visible page holds no English words (see test_dutch_words.py), here over a real
    document's life."""
    text = page.locator("body").inner_text()
    assert not english_words(text), (english_words(text), text)


def test_the_dutch_page_end_to_end(dutch_page: Page, site: str, pipeline: PipelineEnv) -> None:
    page = dutch_page
    aanmelden(page, site)
    expect(page).to_have_title("Uploaden \u2013 Content-verwerking")
    expect(page.locator("#drop-hint")).to_contain_text("per bestand")

    with pipeline.worker():
        choose_files(page, ("heupoperatie.md", "text/markdown", heup_page().encode()))
        page.get_by_label("Titel", exact=True).fill(TITLE)
        page.get_by_role("button", name="Uploaden", exact=True).click()
        expect(queue_item(page, "heupoperatie.md")).to_contain_text("Ontvangen als versie 1.")

        choose_files(
            page,
            ("folder.pdf", "application/pdf", brochure_pdf()),
            ("beveiligd.pdf", "application/pdf", encrypted_pdf()),
            ("leeg.md", "text/markdown", b""),
        )
        expect(queue_item(page, "leeg.md")).to_contain_text("Geweigerd: het bestand is leeg.")
        page.get_by_role("button", name="2 bestanden uploaden").click()
        for name in ("folder.pdf", "beveiligd.pdf"):
            expect(queue_item(page, name)).to_contain_text("Ontvangen als versie 1.")
        screenshot(page, "nl-upload")
        no_english(page)

        menu = page.get_by_role("navigation", name="Hoofdmenu")
        menu.get_by_role("link", name="Documenten").click()
        expect(page).to_have_title("Documenten \u2013 Content-verwerking")
        badge = table_row(page, TITLE).locator(".badge")
        expect(badge).to_have_text("geïndexeerd", timeout=PIPELINE_MS)
        expect(table_row(page, PDF_TITLE).locator(".badge")).to_have_text(
            "geïndexeerd", timeout=PIPELINE_MS
        )
        expect(table_row(page, "beveiligd.pdf").locator(".badge")).to_have_text(
            "mislukt", timeout=PIPELINE_MS
        )
        expect(page.locator("#documents-summary")).to_have_text("3 documenten, 1 mislukt.")
        page.get_by_label("Status", exact=True).select_option(label="mislukt")
        expect(page.locator("#documents-table tbody tr")).to_have_count(1)
        page.get_by_label("Status", exact=True).select_option("")
        screenshot(page, "nl-documents")
        no_english(page)

        # A failure the file itself causes: explained in Dutch, its code kept, no re-ingest.
        page.get_by_role("link", name="beveiligd.pdf", exact=True).click()
        error = page.locator("#document-error")
        expect(error).to_contain_text("De nieuwste versie kon niet worden geïndexeerd")
        expect(error).to_contain_text("wachtwoord")
        expect(error).to_contain_text("Foutcode: pdf_encrypted")
        expect(error).to_contain_text("Opnieuw verwerken helpt hier niet")
        expect(page.get_by_role("button", name="Opnieuw verwerken")).to_be_hidden()
        expect(page.get_by_role("button", name="Verwijderen…")).to_be_visible()
        screenshot(page, "nl-document-failed")
        no_english(page)

        # A PDF chunk: the pages of its own text.
        page.get_by_role("link", name="Alle documenten").click()
        page.get_by_role("link", name=PDF_TITLE, exact=True).click()
        expect(page.get_by_role("button", name="Opnieuw verwerken")).to_be_visible()
        pdf_id = page.url.split("#/documents/")[1]
        pdf_chunks = api(site, f"/v1/documents/{pdf_id}/chunks")["items"]
        expect(page.locator("article.chunk")).to_have_count(len(pdf_chunks))
        for chunk, shown in zip(
            pdf_chunks, page.locator("article.chunk .chunk-pages").all(), strict=True
        ):
            first, last = chunk["page_start"], chunk["page_end"]
            words = f"pagina {first}" if first == last else f"pagina's {first}\u2013{last}"
            expect(shown).to_have_text(f" \u00b7 {words}")
            expect(shown).to_have_attribute("title", re.compile("eigen tekst"))
        # The original file, as uploaded, one click away.
        with page.expect_download() as downloading:
            page.get_by_role("button", name="Het originele bestand van versie 1 downloaden").click()
        download = downloading.value
        assert download.suggested_filename == "folder.pdf"
        assert Path(download.path()).read_bytes() == brochure_pdf()

        # The Markdown page: readable text, overlap marked, raw Markdown a click away.
        page.get_by_role("link", name="Alle documenten").click()
        page.get_by_role("link", name=TITLE, exact=True).click()
        expect(page.get_by_role("heading", name=TITLE, level=1)).to_be_visible()
        expect(page.locator("#history")).to_contain_text("geüpload door editors")
        heup_id = page.url.split("#/documents/")[1]
        chunks = api(site, f"/v1/documents/{heup_id}/chunks")["items"]
        assert len(chunks) >= 3
        articles = page.locator("article.chunk")
        expect(articles).to_have_count(len(chunks))
        expect(articles.first.locator(".chunk-overlap")).to_have_count(0)
        for chunk, article in zip(chunks, articles.all(), strict=True):
            overlap = article.locator(".chunk-overlap")
            if chunk["overlap_tokens"]:
                expect(overlap).to_contain_text(
                    f"Overlap met het vorige stuk ({chunk['overlap_tokens']} woorddelen)"
                )
            else:
                expect(overlap).to_have_count(0)
        assert any(chunk["overlap_tokens"] for chunk in chunks)
        own = page.locator(".chunk-own")
        expect(own.locator("li").filter(has_text="Loop de eerste zes weken")).to_have_count(1)
        expect(own.locator("li strong")).to_have_text("krukken")
        expect(own.locator("table th").first).to_have_text("Tijd")
        expect(own.locator("table td").filter(has_text="Operatie")).to_have_count(1)
        expect(own.locator("h5, h6").filter(has_text="Herstel").first).to_be_visible()
        expect(page.locator(".chunks img")).to_have_count(0)  # HTML in a chunk stays text
        expect(own.filter(has_text='<img src="x"')).to_have_count(1)
        assert page.title() != "hacked"
        raw = articles.first.locator(".chunk-raw")
        expect(raw.locator("pre")).to_be_hidden()
        raw.get_by_text("Markdown bekijken").click()
        expect(raw.locator("pre")).to_be_visible()
        expect(raw.locator("pre")).to_contain_text("## Voorbereiding")
        screenshot(page, "nl-document", height=1500)
        no_english(page)
        with_overlap = next(i for i, chunk in enumerate(chunks) if chunk["overlap_tokens"])
        articles.nth(with_overlap).screenshot(path=str(DOCS / "screenshot-nl-chunk.png"))

        # The same bytes again: unchanged, said so (not a new version).
        page.get_by_role("link", name="Uploaden").click()
        choose_files(page, ("heupoperatie.md", "text/markdown", heup_page().encode()))
        with page.expect_response(lambda r: r.request.method == "POST") as answered:
            page.get_by_role("button", name="Uploaden", exact=True).click()
        repeated = answered.value.json()["documents"][0]
        assert repeated["status"] == "unchanged" and repeated["same_as_version"] == 1
        assert repeated["note"] == (
            "Unchanged: same content as version 1; nothing was processed again."
        )
        expect(queue_item(page, "heupoperatie.md").last).to_contain_text(
            "Ongewijzigd: zelfde inhoud als versie 1; er is niets opnieuw verwerkt."
        )
        unchanged = api(site, f"/v1/documents/{heup_id}")["versions"][-1]
        assert unchanged["number"] == 2 and unchanged["status"] == "unchanged"

        # The same name again: a visible new version.
        changed = heup_page().encode() + b"\nNieuw.\n"
        choose_files(page, ("heupoperatie.md", "text/markdown", changed))
        page.get_by_role("button", name="Uploaden", exact=True).click()
        expect(queue_item(page, "heupoperatie.md").last).to_contain_text(
            re.compile(
                r"Ontvangen als versie 3\. Nieuwe versie van \u201cHeupoperatie\u201d, "
                r"geüpload door editors op .*2026"
            )
        )
        no_english(page)


ALIASED = "---\nbase: &b knie\ntags: *b\n---\n# Knieoperatie\n\nTekst.\n"  # refused front matter


class _Cms(BaseHTTPRequestHandler):
    """A CMS page whose front matter uses a YAML alias: only the worker sees it."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(ALIASED.encode())

    def log_message(self, *_: Any) -> None:
        pass


def test_refused_front_matter_is_explained_and_not_offered_again(
    dutch_page: Page, site: str, pipeline: PipelineEnv
) -> None:
    page = dutch_page
    aanmelden(page, site)
    # An upload is refused at once, in Dutch.
    choose_files(page, ("ankers.md", "text/markdown", ALIASED.encode()))
    page.get_by_role("button", name="Uploaden", exact=True).click()
    expect(queue_item(page, "ankers.md")).to_contain_text(
        "De front matter (de YAML tussen de ---regels bovenaan) is geweigerd: geen YAML-ankers"
    )

    # A CMS page fetched by the worker fails its version; the same bytes again cannot help.
    with serve_http(_Cms, CMS_PORT) as cms, pipeline.worker():
        event = json.dumps(
            cms_event("publish", "knie-ankers", body=None, content_url=cms + "/p/knie.md")
        ).encode()
        sent = httpx.post(site + "/v1/webhooks/cms", content=event, headers=signed_headers(event))
        assert sent.status_code == 202, sent.text
        document_id = sent.json()["document_id"]
        wait_for(
            lambda: api(site, f"/v1/documents/{document_id}")["status"] == "failed",
            timeout=PIPELINE_MS / 1000,
            what="the CMS page to fail",
        )
    page.goto(f"{site}/#/documents/{document_id}")
    error = page.locator("#document-error")
    expect(error).to_contain_text("geen YAML-ankers of -aliassen (&naam, *naam)")
    expect(error).to_contain_text("Foutcode: front_matter_refused")
    expect(error).to_contain_text("Opnieuw verwerken helpt hier niet")
    expect(page.get_by_role("button", name="Opnieuw verwerken")).to_be_hidden()
    page.get_by_role("button", name="English").click()
    expect(error).to_contain_text("uses YAML anchors and aliases (&b ... *b)")  # the server's
    expect(error).to_contain_text("Re-ingesting cannot help here")
    expect(page.get_by_role("button", name="Re-ingest")).to_be_hidden()


def test_the_english_switch_and_back(dutch_page: Page, site: str) -> None:
    page = dutch_page
    aanmelden(page, site)
    switch = page.get_by_role("button", name="English")
    expect(switch).to_have_attribute("lang", "en")
    switch.click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.get_by_role("heading", name="Upload documents", level=1)).to_be_visible()
    expect(page.locator("#drop-hint")).to_contain_text("each")
    expect(page).to_have_title("Upload \u2013 Content ingestion")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Documents").click()
    expect(page.get_by_role("heading", name="Documents", level=1)).to_be_visible()
    expect(page.locator("#documents-table tbody")).to_contain_text("No documents yet")
    expect(page.get_by_label("Status", exact=True).locator("option").nth(1)).to_have_text(
        "received"
    )

    page.reload()  # the choice is remembered
    expect(page.get_by_role("heading", name="Documents", level=1)).to_be_visible()
    page.get_by_role("button", name="Nederlands").click()
    expect(page.locator("html")).to_have_attribute("lang", "nl")
    expect(page.get_by_role("heading", name="Documenten", level=1)).to_be_visible()
    expect(page.locator("#documents-table tbody")).to_contain_text("Nog geen documenten")
    expect(page.get_by_label("Status", exact=True).locator("option").nth(1)).to_have_text(
        "ontvangen"
    )


def test_the_favicon_is_served(dutch_page: Page, site: str) -> None:
    dutch_page.goto(site + "/")
    href = dutch_page.locator('link[rel="icon"]').get_attribute("href")
    assert href == "/static/favicon.svg"
    assert httpx.get(site + href).status_code == 200
