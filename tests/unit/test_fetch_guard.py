"""The content_url guard: a signed webhook may name pages, not reach into the network.

A real HTTP server on 127.0.0.1 plays the CMS (and the internal service it redirects to).
"""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from shared.adapters.fetch import check_url, fetch, host_allowed
from shared.errors import PermanentError
from tests.services import serve_http


class _Cms(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        port = self.server.server_address[1]
        if self.path == "/moved":  # a CMS page moved onto an address nobody listed
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{port}/secret")
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"# Page\n\ntext " + self.path.encode())

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def cms() -> Iterator[str]:
    with serve_http(_Cms) as url:
        yield url


def refusal(url: str, allowed: list[str], *, resolve: bool = True) -> str:
    with pytest.raises(PermanentError) as caught:
        check_url(url, allowed, resolve=resolve)
    assert caught.value.code == "fetch_refused"
    return caught.value.message


def test_hosts_are_matched_exactly_or_as_subdomains_of_a_dotted_entry() -> None:
    allowed = ["cms.ziekenhuis.example", ".intranet.example"]
    assert host_allowed("CMS.Ziekenhuis.example.", allowed)
    assert host_allowed("wiki.intranet.example", allowed)
    assert not host_allowed("intranet.example.evil.test", allowed)
    assert not host_allowed("evilcms.ziekenhuis.example", allowed)
    assert not host_allowed("anything.example", [])


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://127.0.0.1/p", "127.0.0.1"),
        ("http://localhost:8000/p", "localhost"),
        ("http://api.localhost/p", "api.localhost"),
        ("http://10.0.0.5/p", "10.0.0.5"),
        ("http://192.168.1.1/p", "192.168.1.1"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://[::1]/p", "::1"),
        ("http://[fd00::1]/p", "fd00::1"),
        ("http://0.0.0.0/p", "0.0.0.0"),
    ],
)
def test_internal_addresses_are_refused_unless_listed(url: str, host: str) -> None:
    assert "private network" in refusal(url, [], resolve=False)
    assert "private network" in refusal(url, [])
    assert check_url(url, [host]) == host  # the operators named it: an intranet CMS


def test_other_refusals_say_what_to_do() -> None:
    assert "not an http or https URL" in refusal("ftp://cms.example/p", [])
    assert "not an http or https URL" in refusal("http:///no-host", [])
    message = refusal("https://93.184.216.34/p", ["cms.ziekenhuis.example"])
    assert "CONTENT_FETCH_ALLOWED_HOSTS" in message and "page.body" in message
    assert check_url("https://93.184.216.34/p", []) == "93.184.216.34"  # public: allowed


def test_a_listed_host_is_fetched(cms: str) -> None:
    body = fetch(cms + "/p/1.md", max_bytes=10_000, timeout=5, allowed_hosts=["127.0.0.1"])
    assert body == b"# Page\n\ntext /p/1.md"


def test_an_unlisted_local_host_is_refused_before_any_request(cms: str) -> None:
    with pytest.raises(PermanentError) as caught:
        fetch(cms + "/p/1.md", max_bytes=10_000, timeout=5)
    assert caught.value.code == "fetch_refused"


def test_a_redirect_into_the_network_is_refused(cms: str) -> None:
    with pytest.raises(PermanentError) as caught:
        fetch(cms + "/moved", max_bytes=10_000, timeout=5, allowed_hosts=["127.0.0.1"])
    assert caught.value.code == "fetch_refused"
    assert "localhost" in caught.value.message or "127.0.0.1" in caught.value.message
