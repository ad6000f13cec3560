"""The content_url guard: a signed webhook may name pages, not reach into the network.

A real HTTP server on 127.0.0.1 plays the CMS (and the internal service it redirects to).
DNS answers come from a stand-in resolver (a rebinding DNS server is the edge simulated).
"""

from __future__ import annotations

import contextlib
import datetime
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from shared.adapters.fetch import check_url, checked_addresses, fetch, host_allowed
from shared.errors import PermanentError, TransientError
from tests.support.services import serve_http


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
    assert host_allowed("CMS.Ziekenhuis.example.", 443, allowed)
    assert host_allowed("wiki.intranet.example", 80, allowed)
    assert not host_allowed("intranet.example.evil.test", 443, allowed)
    assert not host_allowed("evilcms.ziekenhuis.example", 443, allowed)
    assert not host_allowed("anything.example", 443, [])


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://127.0.0.1/p", "127.0.0.1"),
        ("http://localhost/p", "localhost"),
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
    listed = [cms.removeprefix("http://")]  # 127.0.0.1:<port>
    body = fetch(cms + "/p/1.md", max_bytes=10_000, timeout=5, allowed_hosts=listed)
    assert body == b"# Page\n\ntext /p/1.md"


def test_an_unlisted_local_host_is_refused_before_any_request(cms: str) -> None:
    with pytest.raises(PermanentError) as caught:
        fetch(cms + "/p/1.md", max_bytes=10_000, timeout=5)
    assert caught.value.code == "fetch_refused"


def test_a_redirect_into_the_network_is_refused(cms: str) -> None:
    with pytest.raises(PermanentError) as caught:
        fetch(
            cms + "/moved",
            max_bytes=10_000,
            timeout=5,
            allowed_hosts=[cms.removeprefix("http://")],
        )
    assert caught.value.code == "fetch_refused"
    assert "localhost" in caught.value.message or "127.0.0.1" in caught.value.message


# --- DNS rebinding: the connection goes to the address that was checked ------------------


class _Internal(BaseHTTPRequestHandler):
    """An internal service on 127.0.0.1; records every request it answers."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        type(self).seen.append((self.path, self.headers.get("Host", "")))
        port = self.server.server_address[1]
        if self.path == "/moved":  # a relative redirect, then one to another name
            self.send_response(302)
            self.send_header("Location", "/p/2")
            self.end_headers()
            return
        if self.path == "/p/2":
            self.send_response(302)
            self.send_header("Location", f"http://elsewhere.example:{port}/secret")
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"internal secret " + self.headers.get("Host", "").encode())

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def internal() -> Iterator[str]:
    _Internal.seen = []
    with serve_http(_Internal) as url:
        yield url


def test_a_host_that_rebinds_to_loopback_is_never_connected_to(
    internal: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operating system's resolver answers a public address to the first lookup and
    127.0.0.1 to every later one (a rebinding DNS server)."""
    port = internal.rsplit(":", 1)[1]
    real = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "cms.rebind.example":
            return real(host, *args, **kwargs)
        lookups.append(host)
        address = "93.184.216.34" if len(lookups) == 1 else "127.0.0.1"
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with pytest.raises(TransientError) as caught:  # the checked public address: nobody there
        fetch(f"http://cms.rebind.example:{port}/secret", max_bytes=10_000, timeout=2)
    assert caught.value.code == "fetch_unavailable"
    assert _Internal.seen == [] and lookups == ["cms.rebind.example"]


def test_the_pinned_address_gets_the_original_host_header_on_every_redirect(
    internal: str,
) -> None:
    port = int(internal.rsplit(":", 1)[1])
    answers = {"cms.ziekenhuis.example": ["127.0.0.1"], "elsewhere.example": ["10.0.0.8"]}
    lookups: list[str] = []

    def resolver(host: str) -> list[str]:
        lookups.append(host)
        return answers[host]

    allowed = [f"cms.ziekenhuis.example:{port}"]
    url = f"http://cms.ziekenhuis.example:{port}"
    options: dict[str, Any] = {"max_bytes": 10_000, "timeout": 5, "resolver": resolver}
    body = fetch(url + "/p/1", allowed_hosts=allowed, **options)
    assert body == f"internal secret cms.ziekenhuis.example:{port}".encode()
    with pytest.raises(PermanentError) as caught:  # /moved -> /p/2 -> elsewhere.example
        fetch(url + "/moved", allowed_hosts=allowed, **options)
    assert "elsewhere.example" in caught.value.message
    hosts = [host for _, host in _Internal.seen]
    assert hosts == [f"cms.ziekenhuis.example:{port}"] * 3  # /p/1, /moved, /p/2
    assert lookups == ["cms.ziekenhuis.example"] * 3  # once per request, redirects included
    with pytest.raises(PermanentError):  # public names only, unless listed
        fetch(url + "/p/1", **options)


def test_tls_to_the_pinned_address_names_the_host(tmp_path: Path) -> None:
    """Connected to the IP, the TLS handshake still says the host's name (SNI)."""
    names: list[str | None] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*self_signed(tmp_path, "cms.ziekenhuis.example"))
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)  # type: ignore[assignment,return-value]
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        server = threading.Thread(target=_handshake_once, args=(listener, context), daemon=True)
        server.start()
        with pytest.raises(TransientError) as caught:  # our certificate is nobody's CA's
            fetch(
                f"https://cms.ziekenhuis.example:{port}/p/1",
                max_bytes=10_000,
                timeout=5,
                allowed_hosts=[f"cms.ziekenhuis.example:{port}"],
                resolver=lambda host: ["127.0.0.1"],
            )
        server.join(timeout=5)
    assert names == ["cms.ziekenhuis.example"]
    assert "CERTIFICATE_VERIFY_FAILED" in caught.value.message


def _handshake_once(listener: socket.socket, context: ssl.SSLContext) -> None:
    connection, _ = listener.accept()
    with contextlib.suppress(ssl.SSLError, OSError), connection:
        context.wrap_socket(connection, server_side=True).close()


def self_signed(folder: Path, name: str) -> tuple[str, str]:
    """A throw-away certificate and key for `name` (PEM files in `folder`)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_file), str(key_file)


# --- an allow-list entry names a port too ---------------------------------------------------


def test_a_listed_host_is_allowed_on_its_schemes_port_only() -> None:
    """With `localhost` listed, the API's own /metrics on :8000 was fetched and indexed."""
    assert check_url("http://localhost/p", ["localhost"]) == "localhost"
    assert check_url("https://localhost/p", ["localhost"]) == "localhost"
    message = refusal("http://localhost:8000/metrics", ["localhost"])
    assert "port 8000" in message and "CONTENT_FETCH_ALLOWED_HOSTS" in message
    assert check_url("http://localhost:8000/p", ["localhost:8000"]) == "localhost"
    assert "port 80," in refusal("http://localhost/p", ["localhost:8000"])
    assert check_url("https://wiki.intra.example:8443/p", [".intra.example:8443"], resolve=False)
    assert check_url("http://[fd00::1]:8080/p", ["[fd00::1]:8080"]) == "fd00::1"
    assert "port 8081" in refusal("http://[fd00::1]:8081/p", ["[fd00::1]:8080"])


def test_a_listed_host_on_another_port_is_never_requested(cms: str) -> None:
    port = int(cms.rsplit(":", 1)[1])
    with pytest.raises(PermanentError) as caught:
        fetch(cms + "/p/1.md", max_bytes=10_000, timeout=5, allowed_hosts=["127.0.0.1"])
    assert caught.value.code == "fetch_refused" and f"port {port}" in caught.value.message


def test_an_entry_with_a_bad_port_stops_the_settings() -> None:
    from shared.settings import Settings

    with pytest.raises(ValueError, match="is not a port"):
        Settings(content_fetch_allowed_hosts="cms.example:http", _env_file=None)  # type: ignore[call-arg]


# --- IPv6 transition forms carry an IPv4 address ---------------------------------------------

TRANSITION_FORMS = [
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254 (cloud metadata)
    "64:ff9b:1::a00:1",  # local-use NAT64
    "::7f00:1",  # IPv4-compatible ::127.0.0.1
    "::a00:5",  # IPv4-compatible ::10.0.0.5
    "::ffff:7f00:1",  # IPv4-mapped
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::",  # 6to4 of 169.254.169.254
    "fec0::1",  # site-local
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
]


@pytest.mark.parametrize("address", TRANSITION_FORMS)
def test_ipv6_transition_forms_of_internal_addresses_are_refused(address: str) -> None:
    """As a literal in the URL and as a name's DNS answer (a stand-in resolver: nothing is
    sent anywhere)."""
    assert "private network" in refusal(f"http://[{address}]/p", [], resolve=False)
    with pytest.raises(PermanentError) as caught:
        checked_addresses("http://cms.evil.example/p", [], lambda host: [address])
    assert caught.value.code == "fetch_refused"


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::808:808", "::ffff:808:808", "2002:808:808::1", "2606:4700:4700::1111"],
)
def test_transition_forms_of_public_addresses_stay_allowed(address: str) -> None:
    host, addresses = checked_addresses("http://cms.example/p", [], lambda host: [address])
    assert host == "cms.example" and str(addresses[0]) == address


def test_a_name_answering_a_nat64_loopback_is_never_connected_to(internal: str) -> None:
    """The stand-in resolver answers NAT64 of 127.0.0.1: refused before any connection."""
    port = internal.rsplit(":", 1)[1]
    with pytest.raises(PermanentError) as caught:
        fetch(
            f"http://cms.evil.example:{port}/secret",
            max_bytes=10_000,
            timeout=2,
            resolver=lambda host: ["64:ff9b::7f00:1"],
        )
    assert caught.value.code == "fetch_refused" and _Internal.seen == []
