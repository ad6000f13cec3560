"""Helpers for the web page tests: the API served by uvicorn in a thread, Debian's Chromium
driven by Playwright, and the page's own steps (sign in, choose files).

A helper module (not a conftest); the test modules import the fixtures they use. The server is
the real app on 127.0.0.1 with the real Postgres and Redis; the browser is `/usr/bin/chromium`
(installed by `.ci/browser`; Playwright's own browser download does not work here).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn
from fastapi import FastAPI
from playwright.sync_api import Browser, ConsoleMessage, Locator, Page, expect, sync_playwright

from tests.support.paths import ROOT
from tests.support.system_tools import CHROMIUM, HAS_CHROMIUM, SETUP
from tests.support.workers import wait_for

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
LAPTOP = {"width": 1366, "height": 768}
DOCS = ROOT / "docs"  # the README shows the screenshots these tests take
TIMEOUT_MS = 10_000


class ServedApp:
    """`app` served by uvicorn on a free port of 127.0.0.1, in a daemon thread."""

    def __init__(self, app: FastAPI) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True, name="uvicorn")

    def __enter__(self) -> str:
        self.thread.start()
        wait_for(
            lambda: self.server.started or not self.thread.is_alive(),
            timeout=30,
            interval=0.02,
            what="uvicorn to listen",
        )
        if not self.server.started:
            raise RuntimeError("uvicorn did not start")
        host, port = self.server.servers[0].sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not HAS_CHROMIUM:
        pytest.skip(f"{CHROMIUM} is missing: {SETUP}")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@contextmanager
def open_tab(browser: Browser, language: str | None) -> Iterator[Page]:
    """A fresh tab at laptop size; a JavaScript error or console error fails the test. With a
    `language`, the page starts in it as if the editor had chosen it with the switch before."""
    context = browser.new_context(viewport=LAPTOP, locale="en-GB")
    context.set_default_timeout(TIMEOUT_MS)
    if language:
        context.add_init_script(f"localStorage.setItem('ingest.lang', '{language}')")
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(f"page error: {error}"))

    def console(message: ConsoleMessage) -> None:
        # Refused requests (401, 413, 415) are logged by Chromium itself; they are expected.
        if message.type == "error" and "Failed to load resource" not in message.text:
            errors.append(f"console: {message.text}")

    tab.on("console", console)
    # Subscribing to file choosers is sent fire-and-forget, so a picker opened right after
    # `expect_file_chooser` could beat the interception and never be reported (a CI flake).
    # Subscribing once, up front, makes every later wait find interception already on.
    tab.on("filechooser", lambda _chooser: None)
    yield tab
    context.close()
    assert errors == []


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """The page in English (the editor's switch, remembered): the tests written in English."""
    with open_tab(browser, "en") as tab:
        yield tab


@pytest.fixture
def dutch_page(browser: Browser) -> Iterator[Page]:
    """The page as a new editor first sees it: Dutch, the default."""
    with open_tab(browser, None) as tab:
        yield tab


def submit_key(page: Page, base_url: str, key: str) -> None:
    """Type a key into the sign-in form and send it; whether it is accepted is the caller's."""
    page.goto(base_url + "/")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()


def sign_in(page: Page, base_url: str, key: str) -> None:
    """Sign in and wait until the page has finished: it moves focus to the upload heading
    last, so a test that focuses something earlier would lose that focus to the page."""
    submit_key(page, base_url, key)
    expect(page.get_by_role("heading", name="Upload documents", level=1)).to_be_focused()


def choose_files(
    page: Page, *files: tuple[str, str, bytes], zone: str = "Drop files here or choose files"
) -> None:
    """Through the page's file picker (what the drop zone button, named `zone`, opens)."""
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name=zone).click()
    chooser.value.set_files(
        [{"name": name, "mimeType": mime, "buffer": data} for name, mime, data in files]
    )


def queue_item(page: Page, name: str) -> Locator:
    return page.locator(f'li.queue-item[data-file="{name}"]')


def table_row(page: Page, title: str) -> Locator:
    return page.locator("#documents-table tbody tr").filter(
        has=page.get_by_role("link", name=title, exact=True)
    )


def screenshot(page: Page, name: str, height: int | None = None) -> None:
    """The laptop-sized window, or the page's top `height` pixels for a long page."""
    DOCS.mkdir(exist_ok=True)
    path = str(DOCS / f"screenshot-{name}.png")  # the README shows the Dutch ones (`nl-*`)
    if height is None:
        page.screenshot(path=path)
    else:
        clip = {"x": 0, "y": 0, "width": LAPTOP["width"], "height": height}
        page.screenshot(path=path, full_page=True, clip=clip)
