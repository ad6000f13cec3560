"""The bulk bar on the documents list, in Dutch: select two documents by
hand, delete them after one confirmation that names the count; select all of a filter and
re-process them; export the list as CSV. Real API (uvicorn), Postgres, Redis; Chromium."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from shared.settings import Settings
from tests.support.api import API_KEYS, EDITOR_KEY, use_settings
from tests.support.web import ServedApp, screenshot, table_row

TITLES = ["Knieoperatie", "Heupoperatie", "Staaroperatie"]


@pytest.fixture
def site(api_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    settings = use_settings(monkeypatch, API_KEYS=API_KEYS)
    with ServedApp(create_app(settings)) as base_url:
        headers = {"Authorization": f"Bearer {EDITOR_KEY}"}
        with httpx.Client(base_url=base_url, headers=headers) as http:
            for title in TITLES:
                files = [
                    ("file", (f"{title.lower()}.md", f"# {title}\n\nTekst.\n", "text/markdown"))
                ]
                assert (
                    http.post("/v1/documents", files=files, data={"title": title}).status_code
                    == 202
                )
        yield base_url


def test_select_two_and_delete_them_with_one_confirmation(dutch_page: Page, site: str) -> None:
    page = dutch_page
    page.goto(site + "/#/documents")
    page.get_by_label("API-sleutel").fill(EDITOR_KEY)
    page.get_by_role("button", name="Aanmelden").click()
    page.get_by_role("navigation", name="Hoofdmenu").get_by_role("link", name="Documenten").click()
    for title in TITLES[:2]:
        table_row(page, title).get_by_role("checkbox", name=f"{title} selecteren").check()
    expect(page.locator("#bulk-count")).to_have_text("2 geselecteerd")
    screenshot(page, "nl-bulk")
    page.get_by_role("button", name="2 verwijderen…").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("heading")).to_have_text("2 documenten verwijderen?")
    dialog.get_by_role("button", name="Verwijderen", exact=True).click()
    expect(page.locator("#flash")).to_have_text("2 documenten verwijderd.")
    expect(page.locator("#documents-table tbody tr")).to_have_count(1)
    expect(table_row(page, "Staaroperatie")).to_be_visible()

    with page.expect_download() as downloading:
        page.get_by_role("button", name="Lijst exporteren (CSV)").click()
    exported = Path(downloading.value.path()).read_text(encoding="utf-8")
    assert [r["title"] for r in csv.DictReader(io.StringIO(exported))] == ["Staaroperatie"]


def test_select_all_of_the_page_and_reprocess(dutch_page: Page, site: str) -> None:
    page = dutch_page
    page.goto(site + "/")
    page.get_by_label("API-sleutel").fill(EDITOR_KEY)
    page.get_by_role("button", name="Aanmelden").click()
    page.get_by_role("navigation", name="Hoofdmenu").get_by_role("link", name="Documenten").click()
    expect(page.locator("#documents-table tbody tr")).to_have_count(3)
    page.get_by_role("checkbox", name="Alle documenten op deze pagina selecteren").check()
    expect(page.locator("#bulk-count")).to_have_text("3 geselecteerd")
    page.get_by_role("button", name="3 opnieuw verwerken").click()
    expect(page.locator("#flash")).to_have_text("3 documenten worden opnieuw verwerkt.")
    expect(page.locator("#bulk-count")).to_have_text("")
    headers = {"Authorization": f"Bearer {EDITOR_KEY}"}
    listed = httpx.get(site + "/v1/documents", headers=headers).json()["items"]
    assert {d["version_count"] for d in listed} == {2}
