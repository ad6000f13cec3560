"""A Word file and an HTML page on the Dutch page (issue 31 item 1): uploaded through the
page's form, converted by a real Celery worker with their headings, list and table kept (the
HTML page's navigation, header and footer dropped), and their chunks shown as the editor reads
them. Real API (uvicorn), Postgres, Redis, the OpenAI stand-in, Chromium. Writes
docs/screenshot-nl-word-chunks.png and docs/screenshot-nl-html-chunks.png."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from shared.settings import Settings
from tests.support.api import API_KEYS, EDITOR_KEY, use_settings
from tests.support.office_files import ARTICLE_PAGE, brochure_docx
from tests.support.pipeline import PipelineEnv
from tests.support.services import empty_redis_database
from tests.support.web import DOCS, ServedApp, choose_files, queue_item, table_row

PIPELINE_MS = 90_000  # a stage run by a real worker on a shared 2-core machine
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
FILES = {
    "folder.docx": (DOCX, brochure_docx("Knieoperatie (Word)"), "nl-word-chunks"),
    "pagina.html": ("text/html", ARTICLE_PAGE.encode(), "nl-html-chunks"),
}


@pytest.fixture
def site(
    pipeline: PipelineEnv, redis_url: str, api_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    empty_redis_database(redis_url)
    settings = use_settings(monkeypatch, API_KEYS=API_KEYS)
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def test_a_word_file_and_an_html_page_show_their_structure_in_the_chunks(
    dutch_page: Page, site: str, pipeline: PipelineEnv
) -> None:
    page = dutch_page
    page.goto(site + "/")
    page.get_by_label("API-sleutel").fill(EDITOR_KEY)
    page.get_by_role("button", name="Aanmelden").click()
    with pipeline.worker():
        choose_files(
            page,
            *((name, kind, data) for name, (kind, data, _) in FILES.items()),
            zone="Sleep bestanden hierheen of kies bestanden",
        )
        page.get_by_role("button", name="2 bestanden uploaden").click()
        for name in FILES:
            expect(queue_item(page, name)).to_contain_text("Ontvangen als versie 1.")
        menu = page.get_by_role("navigation", name="Hoofdmenu")
        menu.get_by_role("link", name="Documenten").click()
        for title in ("Knieoperatie (Word)", "Knieoperatie"):
            expect(table_row(page, title).locator(".badge")).to_have_text(
                "geïndexeerd", timeout=PIPELINE_MS
            )

    for title, name in (("Knieoperatie (Word)", "folder.docx"), ("Knieoperatie", "pagina.html")):
        menu.get_by_role("link", name="Documenten").click()
        table_row(page, title).get_by_role("link").first.click()
        view = page.locator("#chunks")
        expect(view.locator("article.chunk").first).to_be_visible()
        expect(view.get_by_text("Voorbereiding").first).to_be_visible()
        expect(view.locator("li", has_text="Neem uw medicijnlijst mee")).to_be_visible()
        expect(view.locator("td", has_text="6 uur voor de operatie")).to_be_visible()
        expect(view).not_to_contain_text("Afdelingen")  # the HTML page's navigation
        expect(view).not_to_contain_text("cookiebeleid")  # and its footer
        kinds = " ".join(view.locator(".chunk-meta").all_inner_texts())
        assert "lijst" in kinds and "tabel" in kinds, kinds
        view.screenshot(path=str(DOCS / f"screenshot-{FILES[name][2]}.png"))
