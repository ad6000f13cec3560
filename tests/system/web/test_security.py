"""The editors' page makes links only of http(s) URLs: a `javascript:` source URL stored before
the API refused them is shown as text. Real API (uvicorn), Postgres, Redis, Chromium."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from shared import ingest
from shared.settings import Settings
from tests.support.api import EDITOR_KEY
from tests.support.versions import new_version
from tests.support.web import ServedApp


@pytest.fixture
def site(api_settings: Settings) -> Iterator[str]:
    with ServedApp(create_app(api_settings)) as base_url:
        yield base_url


def test_only_http_urls_become_links(page: Page, site: str) -> None:
    content = b"# Knie\n\nTekst.\n"
    registered = ingest.submit(
        new_version(content, "old-row", source_url="javascript:alert(document.domain)"),
        lambda _version_id: None,  # no worker needed: the page shows the record
    )
    page.goto(site + "/")
    checks = page.evaluate(
        """() => [
            "https://z.example/knie", "http://z.example/", "javascript:alert(1)",
            " JavaScript:alert(1)", "data:text/html,x", "vbscript:x", "//evil.example", "",
        ].map((url) => Ui.safeHref(url))"""
    )
    assert checks == ["https://z.example/knie", "http://z.example/"] + [None] * 6
    page.evaluate(f"sessionStorage.setItem('ingest.apiKey', '{EDITOR_KEY}')")
    page.goto(f"{site}/#/documents/{registered.document_id}")
    page.reload()
    link = page.locator("#document-facts a", has_text="javascript:")
    expect(link).to_be_visible()
    assert link.get_attribute("href") is None
