"""What logs and error messages never show.

Keys are masked by their value, scoped or not, and no word is masked for being a scope name;
a URL's query string and credentials never reach an error message or a log line.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
import structlog

from shared import log
from shared.adapters.fetch import fetch
from shared.errors import PermanentError
from shared.secrets import mask
from shared.settings import Settings
from shared.urls import display_url
from tests.support.services import serve_http

EDITORS = "k1-editors-0123456789"
CHATBOT = "k2-chatbot-0123456789"
OLD = "k3-old-0123456789"
BARE = "k4-bare-0123456789"
KEYS = f"editors:{EDITORS}:upload,search,chatbot:{CHATBOT}:search,read,old:{OLD},{BARE}"


@pytest.fixture
def settings() -> Settings:
    return Settings(api_keys=KEYS, _env_file=None)  # type: ignore[call-arg]


def test_every_key_is_masked_by_its_value_scoped_or_not(settings: Settings) -> None:
    line = f"keys {EDITORS} {CHATBOT} {OLD} {BARE} tried"
    assert mask(line, settings) == "keys *** *** *** *** tried"


def test_scope_names_and_key_names_are_not_masked(settings: Settings) -> None:
    line = "POST /v1/search by chatbot (read, upload, search) for editors"
    assert mask(line, settings) == line


def test_keys_from_the_environment_are_masked_the_same_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("API_KEYS", KEYS)
    assert mask(f"GET /v1/search {CHATBOT}") == "GET /v1/search ***"


def test_http_query_strings_and_credentials_are_masked(settings: Settings) -> None:
    text = "fetched https://cms.example/p/1?access_token=tok-123&x=1 and http://u:pw@cms/p?a=b ok"
    masked = mask(text, settings)
    assert masked == "fetched https://cms.example/p/1?*** and http://u:***@cms/p?*** ok"
    assert mask("postgresql://u:pw@db/x?sslmode=require", settings).endswith("?sslmode=require")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://cms.example/p/1?access_token=tok-123", "https://cms.example/p/1?***"),
        ("https://user:pw@cms.example:8443/p#top", "https://cms.example:8443/p"),
        ("http://[::1]:8080/p?k=v", "http://[::1]:8080/p?***"),
        ("http://cms.example:99999/p", "<URL>"),
    ],
)
def test_urls_are_shown_without_what_may_hold_a_token(url: str, shown: str) -> None:
    assert display_url(url) == shown


class _Gone(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def captured_log(settings: Settings) -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    log.configure_logging(settings.model_copy(update={"log_level": "DEBUG"}), stream)
    yield stream
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


def test_a_failed_fetch_shows_no_token_in_its_error_or_the_log(captured_log: io.StringIO) -> None:
    """The probe's URL carried `?access_token=...`: it was in the version's error message and
    in the worker's log (httpx logs every request's URL)."""
    with serve_http(_Gone) as cms, pytest.raises(PermanentError) as caught:
        url = cms.replace("http://", "http://cmsuser:cmspass@") + "/p/1?access_token=tok-secret"
        listed = [cms.removeprefix("http://")]
        fetch(url, max_bytes=10_000, timeout=5, allowed_hosts=listed)
    logging.getLogger("worker").error("version failed: %s", caught.value.message)
    message, logged = caught.value.message, captured_log.getvalue()
    assert "HTTP 404" in message and "/p/1?***" in message
    assert "HTTP Request: GET" in logged  # httpx's own line is there, masked
    for secret in ("tok-secret", "access_token", "cmspass"):
        assert secret not in message and secret not in logged
