"""The page's Markdown rendering of chunks and search passages: `:::tip` /
`:::warning` admonitions are boxes with a Dutch label, not raw `:::` lines; the rest stays
text built from nodes (never HTML). Real API (uvicorn), Chromium."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from shared.settings import Settings
from tests.support.web import ServedApp

CHUNK = """## Voorbereiding

:::warning Bloedverdunners
Stop **vijf dagen** voor de operatie met acenocoumarol.

- Bel de trombosedienst
- Neem uw medicijnlijst mee
:::

:::tip
Neem iets te lezen mee.
:::

Tot slot <img src=x onerror="document.title='hacked'"> blijft tekst.
"""


@pytest.fixture
def site(api_settings: Settings) -> Iterator[str]:
    with ServedApp(create_app(api_settings)) as base_url:
        yield base_url


def test_admonitions_render_as_boxes_with_their_kind_in_dutch(dutch_page: Page, site: str) -> None:
    page = dutch_page
    page.goto(site + "/")
    page.evaluate(
        """(text) => {
            const box = document.createElement('div');
            box.id = 'rendered';
            box.append(...Markdown.render(text));
            document.body.prepend(box);
        }""",
        CHUNK,
    )
    rendered = page.locator("#rendered")
    warning = rendered.locator("aside.md-admonition.md-warning")
    expect(warning.locator(".md-admonition-title")).to_have_text("Waarschuwing: Bloedverdunners")
    expect(warning.locator("strong")).to_have_text("vijf dagen")
    expect(warning.locator("li")).to_have_count(2)
    tip = rendered.locator("aside.md-admonition.md-tip")
    expect(tip.locator(".md-admonition-title")).to_have_text("Tip")
    expect(tip).to_contain_text("Neem iets te lezen mee.")
    expect(rendered).not_to_contain_text(":::")
    expect(rendered).to_contain_text("<img src=x")  # HTML stays text
    assert page.title() != "hacked"
