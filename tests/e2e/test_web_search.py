"""The web page's "Probeer een vraag" box in Chromium: hits with citations and highlights,
and a key without the search scope told so in words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from shared.settings import Settings
from tests.e2e.api_support import EDITOR_KEY, use_settings
from tests.e2e.web_support import ServedApp, screenshot, sign_in
from tests.retrieval_support import fill_index

pytestmark = pytest.mark.e2e
UPLOAD_KEY = "uploader-key-0123456789"


@pytest.fixture
def served(
    api_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    settings = use_settings(
        monkeypatch,
        API_KEYS=f"editors:{EDITOR_KEY},uploads:{UPLOAD_KEY}:upload",
        QDRANT_PATH=str(tmp_path / "qdrant"),
        EMBEDDING_PROVIDER="hashing",
        HASHING_DIMENSIONS="256",
    )
    fill_index(settings)
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def ask(page: Page, base_url: str, key: str, question: str) -> None:
    sign_in(page, base_url, key)
    page.goto(base_url + "/#/documents")
    page.get_by_label("Vraag van een patiënt").fill(question)
    page.get_by_role("button", name="Zoeken").click()


def test_a_question_shows_passages_with_citations_and_highlights(page: Page, served: str) -> None:
    ask(page, served, EDITOR_KEY, "Wanneer stop ik met acenocoumarol?")
    hits = page.locator("#ask-hits li.ask-hit")
    expect(hits).to_have_count(3)
    expect(page.locator("#ask-message")).to_contain_text("3 passages gevonden")
    link = page.get_by_role("link", name="Knieoperatie: Voorbereiding")
    expect(link).to_have_attribute("href", "https://zkh.example/knie#voorbereiding")
    expect(hits.locator("mark", has_text="acenocoumarol").first).to_be_visible()
    page.locator("#ask").scroll_into_view_if_needed()
    screenshot(page, "ask")


def test_a_key_without_the_search_scope_is_told_in_words(page: Page, served: str) -> None:
    ask(page, served, UPLOAD_KEY, "Wanneer is het bezoekuur?")
    expect(page.locator("#ask-message")).to_contain_text("mag niet zoeken")
    expect(page.locator("#ask-hits li")).to_have_count(0)
