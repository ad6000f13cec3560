"""The web page's "Probeer een vraag" box in Chromium: hits with citations and highlights,
in Dutch and, after the switch, in English; a key without the search scope told so in words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, use_settings
from tests.support.retrieval import fill_index
from tests.support.web import ServedApp, screenshot, sign_in

UPLOAD_KEY = "uploader-key-0123456789"
SEARCH_KEY = "chatbot-key-0123456789"


@pytest.fixture
def served(
    api_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    settings = use_settings(
        monkeypatch,
        API_KEYS=f"editors:{EDITOR_KEY},uploads:{UPLOAD_KEY}:upload,read,chatbot:{SEARCH_KEY}:search",
        QDRANT_PATH=str(tmp_path / "qdrant"),
        EMBEDDING_PROVIDER="hashing",
        HASHING_DIMENSIONS="256",
    )
    fill_index(settings)
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def aanmelden(page: Page, base_url: str, key: str) -> None:
    """Sign in on the Dutch page and open the Documents view, where the box is."""
    page.goto(base_url + "/")
    page.get_by_label("API-sleutel").fill(key)
    page.get_by_role("button", name="Aanmelden").click()
    expect(page.get_by_role("heading", name="Documenten uploaden", level=1)).to_be_focused()
    page.goto(base_url + "/#/documents")


def test_the_box_in_dutch_then_in_english(dutch_page: Page, served: str) -> None:
    page = dutch_page
    aanmelden(page, served, EDITOR_KEY)
    box = page.get_by_role("region", name="Probeer een vraag")
    expect(box.get_by_role("heading", name="Probeer een vraag", level=2)).to_be_visible()
    expect(box).to_contain_text("Stel een vraag zoals een patiënt die zou stellen.")
    form = box.get_by_role("search", name="Probeer een vraag")
    question = form.get_by_role("searchbox", name="Vraag van een patiënt")
    expect(question).to_have_attribute("placeholder", re.compile("^Bijvoorbeeld: "))
    question.fill("Wanneer stop ik met acenocoumarol?")
    form.get_by_role("button", name="Zoeken", exact=True).click()

    hits = box.get_by_role("list", name="Gevonden passages").get_by_role("listitem")
    expect(hits).to_have_count(3)
    expect(page.locator("#ask-message")).to_contain_text("3 passages gevonden in ")
    link = box.get_by_role("link", name="Knieoperatie: Voorbereiding")
    expect(link).to_have_attribute("href", "https://zkh.example/knie#voorbereiding")
    expect(hits.locator("mark", has_text="acenocoumarol").first).to_be_visible()
    # One numbering, the list's (the source order); the rank by relevance a small label.
    expect(box.locator("ol#ask-hits")).to_have_count(1)
    expect(hits.first.locator(".ask-rank")).to_have_text("nr. 1 op relevantie")
    expect(hits.first.locator(".ask-cite .ask-rank")).to_be_visible()
    expect(hits.locator(".ask-rank")).to_have_count(3)
    expect(hits.first).not_to_have_class(re.compile(r"\bweak\b"))
    expect(page.locator("#ask-message")).not_to_contain_text("Geen passage")
    expect(hits.first.locator("summary")).to_have_text("Hele passage tonen")
    hits.first.locator("summary").click()
    box.scroll_into_view_if_needed()
    screenshot(page, "ask")  # the README shows it

    # The switch: the box's own words and the answer on screen follow, the hits stay.
    page.get_by_role("button", name="English").click()
    box = page.get_by_role("region", name="Try a question")
    expect(box.get_by_role("heading", name="Try a question", level=2)).to_be_visible()
    expect(box).to_contain_text("Ask a question the way a patient would.")
    form = box.get_by_role("search", name="Try a question")
    question = form.get_by_role("searchbox", name="A patient's question")
    expect(question).to_have_value("Wanneer stop ik met acenocoumarol?")
    expect(question).to_have_attribute("placeholder", re.compile("^For example: "))
    expect(form.get_by_role("button", name="Search", exact=True)).to_be_visible()
    hits = box.get_by_role("list", name="Passages found").get_by_role("listitem")
    expect(hits).to_have_count(3)
    expect(page.locator("#ask-message")).to_contain_text("3 passages found in ")
    expect(hits.first).to_contain_text("no. 1 by relevance")
    expect(hits.first.locator("summary")).to_have_text("Show the whole passage")
    expect(hits.first.locator("details")).to_have_attribute("open", "")
    expect(hits.locator("mark", has_text="acenocoumarol").first).to_be_visible()
    expect(box).not_to_contain_text("gevonden")


def test_a_passage_in_two_documents_is_shown_once_with_ook_in(
    dutch_page: Page, served: str
) -> None:
    page = dutch_page
    aanmelden(page, served, EDITOR_KEY)
    box = page.get_by_role("region", name="Probeer een vraag")
    box.get_by_role("searchbox", name="Vraag van een patiënt").fill("Wanneer is bezoek welkom?")
    box.get_by_role("button", name="Zoeken", exact=True).click()

    hits = box.get_by_role("list", name="Gevonden passages").get_by_role("listitem")
    visiting = hits.filter(has_text="15.00 tot 20.00")
    expect(visiting).to_have_count(1)
    also = visiting.locator(".ask-also")
    expect(also).to_have_text(re.compile(r"^Ook in: Bezoektijden$"))
    expect(also.get_by_role("link", name="Bezoektijden")).to_have_attribute(
        "href", re.compile(r"^https://zkh\.example/(bezoek|afdelingen)#bezoektijden$")
    )


def test_a_key_without_the_search_scope_is_told_in_words(page: Page, served: str) -> None:
    sign_in(page, served, UPLOAD_KEY)
    page.goto(served + "/#/documents")
    page.get_by_role("searchbox", name="A patient's question").fill("When may I visit?")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#ask-message")).to_contain_text("This API key may not search.")
    expect(page.locator("#ask-hits li")).to_have_count(0)
    page.get_by_role("button", name="Nederlands").click()
    expect(page.locator("#ask-message")).to_contain_text("Deze API-sleutel mag niet zoeken.")


def test_a_key_without_the_read_scope_is_told_in_dutch(dutch_page: Page, served: str) -> None:
    """The chatbot's search-only key may not read the documents: signing in
    with it on the editors' page says why, in Dutch."""
    page = dutch_page
    page.goto(served + "/")
    page.get_by_label("API-sleutel").fill(SEARCH_KEY)
    page.get_by_role("button", name="Aanmelden").click()
    expect(page.locator("#signin-message")).to_contain_text("de bevoegdheid 'read' ontbreekt")


def test_a_question_the_content_does_not_answer_says_so(dutch_page: Page, served: str) -> None:
    """All hits below the threshold (the API's `weak`): the box says there is no good
    answer and still lists the closest passages, greyed."""
    page = dutch_page
    aanmelden(page, served, EDITOR_KEY)
    box = page.get_by_role("region", name="Probeer een vraag")
    form = box.get_by_role("search", name="Probeer een vraag")
    form.get_by_role("searchbox", name="Vraag van een patiënt").fill(
        "Hoe lang duurt een staaroperatie?"
    )
    form.get_by_role("button", name="Zoeken", exact=True).click()
    message = page.locator("#ask-message")
    expect(message).to_contain_text("Geen passage die deze vraag goed beantwoordt.")
    expect(message).to_have_attribute("data-kind", "bad")
    hits = box.get_by_role("list", name="Gevonden passages").get_by_role("listitem")
    expect(hits).to_have_count(3)
    expect(box.locator("#ask-hits.weak")).to_have_count(1)
    expect(box.locator(".ask-hit.weak")).to_have_count(3)
    expect(hits.first).to_contain_text("past zwak bij de vraag")
    box.scroll_into_view_if_needed()
    screenshot(page, "weak-answer")  # the README shows it

    page.get_by_role("button", name="English").click()
    expect(message).to_contain_text("No passage answers this question well.")
    expect(page.locator("#ask-hits li").first).to_contain_text("matches the question weakly")

    # A question the content answers: the message counts the passages again, nothing greyed.
    page.get_by_role("button", name="Nederlands").click()
    form.get_by_role("searchbox", name="Vraag van een patiënt").fill(
        "Wanneer stop ik met acenocoumarol?"
    )
    form.get_by_role("button", name="Zoeken", exact=True).click()
    expect(message).to_contain_text("3 passages gevonden in ")
    expect(box.locator("#ask-hits.weak")).to_have_count(0)


def test_the_search_index_out_of_reach_is_said_in_dutch(
    dutch_page: Page, api_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Qdrant server that does not answer (a closed loopback port): the API's 503 problem
    (`index_unavailable`) is a sentence in Dutch in the box, not "the search did not work"."""
    settings = use_settings(
        monkeypatch, QDRANT_URL="http://127.0.0.1:1", EMBEDDING_PROVIDER="hashing"
    )
    page = dutch_page
    with ServedApp(create_app(settings)) as base_url:
        aanmelden(page, base_url, EDITOR_KEY)
        form = page.get_by_role("search", name="Probeer een vraag")
        form.get_by_role("searchbox", name="Vraag van een patiënt").fill("Wanneer is bezoek?")
        form.get_by_role("button", name="Zoeken", exact=True).click()
        expect(page.locator("#ask-message")).to_contain_text(
            "De zoekindex is nu niet bereikbaar. Er is niets verloren"
        )
