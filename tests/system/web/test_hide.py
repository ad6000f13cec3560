"""Hide and show from the page (issue 31 item 3), in Chromium on the Dutch page: the editor
types a reason, the document and a chunk get a "verborgen" badge, the history says who and
why, and the search leaves them out until shown again."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Page, expect

from api.app import create_app
from shared.pipeline.in_process import run_local
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, use_settings
from tests.support.web import DOCS, ServedApp

MARKDOWN = (
    b"# Knieoperatie\n\n## Voorbereiding\n\nNeem uw identiteitskaart en medicijnlijst mee.\n\n"
    b"## Medicijnen\n\nStop met acenocoumarol vijf dagen voor de knieoperatie.\n\n"
    b"## Nazorg\n\nLoop elke dag met krukken door de gang.\n"
)


@pytest.fixture
def settings(api_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return use_settings(
        monkeypatch,
        API_KEYS=f"editors:{EDITOR_KEY}",
        QDRANT_PATH=str(tmp_path / "qdrant"),
        EMBEDDING_PROVIDER="hashing",
        HASHING_DIMENSIONS="256",
        CHUNK_TARGET_TOKENS="8",
        CHUNK_MAX_TOKENS="40",
        CHUNK_MIN_TOKENS="0",
        CHUNK_OVERLAP_TOKENS="0",
    )


@pytest.fixture
def api(settings: Settings) -> Iterator[TestClient]:
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {EDITOR_KEY}"}
    ) as client:
        yield client


@pytest.fixture
def served(settings: Settings) -> Iterator[str]:
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def ingested(api: TestClient) -> str:
    response = api.post("/v1/documents", files={"file": ("knie.md", MARKDOWN, "text/markdown")})
    accepted = response.json()["documents"][0]
    run_local([uuid.UUID(accepted["version_id"])])
    return str(accepted["document_id"])


def found(api: TestClient, word: str) -> int:
    query = {"query": f"{word} knieoperatie", "top_k": 50, "candidates": 200}
    hits = api.post("/v1/search", json=query).json()["hits"]
    return sum(word in hit["text"] for hit in hits)


def hide_with_reason(page: Page, opener_name: str, reason: str) -> None:
    page.get_by_role("button", name=opener_name, exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_text("De chatbot gebruikt het niet meer")).to_be_visible()
    dialog.get_by_label("Reden (komt in de geschiedenis)").fill(reason)
    dialog.get_by_role("button", name="Verbergen", exact=True).click()
    expect(dialog).to_be_hidden()


def test_hide_and_show_a_document_and_a_chunk_from_the_page(
    dutch_page: Page, served: str, api: TestClient
) -> None:
    page = dutch_page
    document_id = ingested(api)
    assert found(api, "krukken") == 1
    page.goto(served + "/")
    page.get_by_label("API-sleutel").fill(EDITOR_KEY)
    page.get_by_role("button", name="Aanmelden").click()
    expect(page.get_by_role("heading", name="Documenten uploaden", level=1)).to_be_focused()
    page.goto(f"{served}/#/documents/{document_id}")
    expect(page.locator("#chunks article.chunk")).to_have_count(3)

    hide_with_reason(page, "Verbergen…", "Verouderde informatie")
    facts = page.locator("#document-facts")
    expect(facts.locator(".badge", has_text="verborgen")).to_be_visible()
    expect(facts).to_contain_text("verborgen door editors")
    expect(facts).to_contain_text("Verouderde informatie")
    history = page.locator("#history")
    expect(history.locator("li").first).to_contain_text("Verborgen voor de chatbot")
    expect(history.locator("li").first).to_contain_text("door editors")
    expect(history.locator("li").first).to_contain_text("Verouderde informatie")
    expect(page.locator("#action-message")).to_have_text("Verborgen voor de chatbot.")
    assert found(api, "krukken") == 0

    page.get_by_role("button", name="Tonen", exact=True).click()
    expect(history.locator("li").first).to_contain_text("Weer getoond aan de chatbot")
    expect(facts).to_contain_text("Zichtbaar in de antwoorden")
    assert found(api, "krukken") == 1

    medicines = page.locator("#chunks article.chunk", has_text="acenocoumarol")
    number = int(medicines.get_attribute("data-index") or 0) + 1
    hide_with_reason(page, f"Stuk {number} verbergen", "Dosering klopt niet")
    expect(medicines.locator(".badge", has_text="verborgen")).to_be_visible()
    expect(history.locator("li").first).to_contain_text("Stuk verborgen voor de chatbot")
    expect(history.locator("li").first).to_contain_text(f"stuk {number}: Dosering klopt niet")
    expect(facts).to_contain_text("1 stuk(ken) apart verborgen")
    assert found(api, "acenocoumarol") == 0 and found(api, "krukken") == 1
    expect(page.locator("#chunks .badge", has_text="verborgen")).to_have_count(1)
    medicines.screenshot(path=str(DOCS / "screenshot-nl-hidden-chunk.png"))  # the README's

    page.get_by_role("button", name=f"Stuk {number} weer tonen").click()
    expect(history.locator("li").first).to_contain_text("Stuk weer getoond aan de chatbot")
    expect(page.locator("#chunks .badge", has_text="verborgen")).to_have_count(0)
    assert found(api, "acenocoumarol") == 1
