"""The web page refuses clearly: a wrong key, a file over the upload limit, a file that is not
Markdown, text or PDF. Real API on 127.0.0.1 (uvicorn), real Postgres and Redis, Chromium.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, MARKDOWN, use_settings
from tests.support.web import (
    ServedApp,
    choose_files,
    queue_item,
    sign_in,
    submit_key,
)

SMALL_LIMIT = 4096
ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(200)


@pytest.fixture
def small_limit(api_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return use_settings(monkeypatch, MAX_UPLOAD_BYTES=str(SMALL_LIMIT))


@pytest.fixture
def site(small_limit: Settings) -> Iterator[str]:
    with ServedApp(create_app(small_limit)) as base_url:
        yield base_url


def test_a_wrong_key_is_refused(page: Page, site: str) -> None:
    submit_key(page, site, "not-a-key")
    expect(page.get_by_role("alert")).to_have_text("This key was refused. Check it and try again.")
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    expect(page.get_by_role("navigation", name="Main")).to_be_hidden()
    assert page.evaluate("sessionStorage.length") == 0  # a refused key is not kept


def test_a_key_refused_later_returns_to_sign_in(page: Page, site: str) -> None:
    """A key that stops working (rotated away) mid-session: back to sign-in, with the reason."""
    sign_in(page, site, EDITOR_KEY)
    expect(page.get_by_role("heading", name="Upload documents")).to_be_visible()
    page.evaluate("sessionStorage.setItem('ingest.apiKey', 'revoked-key')")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Documents").click()
    expect(page.get_by_role("alert")).to_have_text(
        "This key was refused. Check it and sign in again."
    )
    expect(page.get_by_label("API key")).to_be_focused()


def test_oversized_and_wrong_type_files_show_their_error(page: Page, site: str) -> None:
    sign_in(page, site, EDITOR_KEY)
    expect(page.get_by_text("up to 4 KB each")).to_be_visible()
    choose_files(
        page,
        ("big.md", "text/markdown", ("# Groot\n\n" + "tekst " * 2000).encode()),
        ("program.pdf", "application/pdf", ELF),
        ("knie.md", "text/markdown", MARKDOWN.encode()),
    )
    expect(queue_item(page, "big.md")).to_contain_text("Refused: too large (max 4 KB).")
    page.get_by_role("button", name="Upload 2 files").click()

    expect(queue_item(page, "program.pdf")).to_contain_text(
        "Refused: not a Markdown, text, PDF, Word (.docx) or HTML file"
    )
    expect(queue_item(page, "knie.md")).to_contain_text("Received as version 1.")
    expect(queue_item(page, "knie.md").get_by_role("link", name="Follow it")).to_be_visible()
    expect(page.locator("#announcer")).not_to_be_empty()
    assert queue_item(page, "knie.md").locator("progress").get_attribute("value") == "1"


def test_files_dropped_or_chosen_with_the_keyboard(page: Page, site: str) -> None:
    """The drop zone takes dropped files, and is a button that opens the file picker."""
    sign_in(page, site, EDITOR_KEY)
    dropped = page.evaluate_handle(
        """() => {
            const transfer = new DataTransfer();
            transfer.items.add(new File(["# Dropped\\n\\nText."], "dropped.md",
                                        {type: "text/markdown"}));
            return transfer;
        }"""
    )
    page.dispatch_event("#drop-zone", "drop", {"dataTransfer": dropped})
    expect(queue_item(page, "dropped.md")).to_contain_text("Ready to upload")

    drop_zone = page.get_by_role("button", name="Drop files here or choose files")
    drop_zone.focus()
    expect(drop_zone).to_be_focused()
    with page.expect_file_chooser() as chooser:
        page.keyboard.press("Enter")
    assert chooser.value.is_multiple()
    chooser.value.set_files(
        [{"name": "typed.md", "mimeType": "text/markdown", "buffer": MARKDOWN.encode()}]
    )
    page.get_by_role("button", name="Upload 2 files").click()
    for name in ("dropped.md", "typed.md"):
        expect(queue_item(page, name)).to_contain_text("Received as version 1.")
