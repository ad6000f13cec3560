"""Downloading a CMS page the webhook sent by URL, within a size and a time limit.

A signed webhook is trusted to name pages, not to make the worker reach into the hospital's
network: a URL must name an allowed host and port (`CONTENT_FETCH_ALLOWED_HOSTS`; an entry
without a port allows the scheme's own), and a host not named there explicitly must resolve to
public addresses only (no loopback, private, link-local or cloud-metadata address, nor an IPv6
form that carries one: NAT64, 6to4, Teredo, IPv4-compatible). Every redirect is checked the
same way. Messages show the URL without query or credentials (`display_url`).

The connection goes to the very address that was checked (`PinnedTransport`): the host is
resolved once per request, the addresses judged, and the request sent to that IP with the
original `Host` header and TLS server name. Otherwise a host that answers a public address
to the check and 127.0.0.1 to the connect (DNS rebinding) would reach internal pages.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

import httpx

from shared.errors import PermanentError, TransientError
from shared.secrets import mask
from shared.urls import DEFAULT_PORTS, allow_list_entry, display_url

REFUSED = "fetch_refused"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
#: host -> its addresses (as text); `system_resolver` by default, a stand-in in tests.
Resolver = Callable[[str], list[str]]


def system_resolver(host: str) -> list[str]:
    """The host's addresses from the operating system's resolver."""
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise TransientError(
            f"The host {host} could not be resolved: {exc}.", code="fetch_unavailable"
        ) from exc
    return [str(info[4][0]).split("%")[0] for info in found]


def host_allowed(host: str, port: int, allowed_hosts: Sequence[str]) -> bool:
    """`host` and `port` are named by the allow-list: the host exactly or under a
    `.example.org` entry, on the entry's port (`cms.example:8443`) or, when the entry names
    none, on the scheme's own port (80, 443) only: allowing `localhost` allowed the API's
    own `/metrics` on :8000 too."""
    host = host.lower().rstrip(".")
    for entry in allowed_hosts:
        name, entry_port = allow_list_entry(entry)
        if entry_port is None and port not in DEFAULT_PORTS.values():
            continue
        if entry_port is not None and port != entry_port:
            continue
        if host == name or (name.startswith(".") and host.endswith(name)):
            return True
    return False


def check_url(url: str, allowed_hosts: Sequence[str], *, resolve: bool = True) -> str:
    """The URL's host, or a permanent `fetch_refused` error saying why it may not be fetched.

    With `resolve`, a host not named in the allow-list is looked up and every address it has
    must be public; without it (the API, which answers at once) only literal addresses and
    `localhost` are judged, and the worker checks again before it downloads.
    """
    host, _ = checked_addresses(url, allowed_hosts, system_resolver if resolve else None)
    return host


def checked_addresses(
    url: str, allowed_hosts: Sequence[str], resolver: Resolver | None
) -> tuple[str, list[Address]]:
    """The URL's host and the addresses it may be reached at (all public unless the host is
    listed), or `fetch_refused`. Without a resolver a name gives no addresses."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # not a number, or out of range
        port = -1
    if scheme not in DEFAULT_PORTS or not parts.hostname or port == -1:
        raise PermanentError(
            f"The page address {display_url(url)!r} is not an http or https URL.", code=REFUSED
        )
    host = parts.hostname
    effective_port = port if port is not None else DEFAULT_PORTS[scheme]
    listed = host_allowed(host, effective_port, allowed_hosts)
    if allowed_hosts and not listed:
        raise PermanentError(
            f"The page address names {host} on port {effective_port}, which is not in "
            "CONTENT_FETCH_ALLOWED_HOSTS; send the Markdown in page.body or ask the operators "
            "to allow the host and port.",
            code=REFUSED,
        )
    addresses = _addresses(host, resolver)
    if listed:
        return host, addresses  # named explicitly by the operators: an intranet CMS is fine
    for address in addresses:
        if not is_public(address):
            raise PermanentError(
                f"The page address {display_url(url)} points into a private network "
                f"({address}); only hosts listed in CONTENT_FETCH_ALLOWED_HOSTS may be internal.",
                code=REFUSED,
            )
    return host, addresses


#: NAT64 (RFC 6052): the IPv4 address is the last 32 bits.
NAT64 = ipaddress.ip_network("64:ff9b::/96")
#: Local-use NAT64 (RFC 8215): a network of its own, never public.
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
#: IPv4-compatible (`::a.b.c.d`, deprecated): the last 32 bits, `::` and `::1` aside.
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 transition form carries (mapped, NAT64, IPv4-compatible,
    6to4, Teredo's client), which is where a connection to it ends up; None otherwise."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64 or (address in IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def is_public(address: Address) -> bool:
    """Whether `address` may be fetched from without being listed: global, judged by the
    IPv4 address inside an IPv6 transition form (`64:ff9b::7f00:1` is 127.0.0.1), and never
    a site-local (`fec0::/10`) or local-use NAT64 address."""
    if isinstance(address, ipaddress.IPv6Address) and (
        address.is_site_local or address in NAT64_LOCAL
    ):
        return False
    inner = embedded_ipv4(address)
    return (inner or address).is_global


def _addresses(host: str, resolver: Resolver | None) -> list[Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    if host.lower().rstrip(".") == "localhost" or host.lower().endswith(".localhost"):
        return [ipaddress.ip_address("127.0.0.1")]
    if resolver is None:
        return []
    return [ipaddress.ip_address(address) for address in resolver(host)]


class PinnedTransport(httpx.HTTPTransport):
    """Checks every request's URL (the first and each redirect), then connects to the address
    it checked: one lookup per request, so the check and the connection cannot disagree."""

    def __init__(self, allowed_hosts: Sequence[str], resolver: Resolver) -> None:
        super().__init__()
        self.allowed_hosts = allowed_hosts
        self.resolver = resolver

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host, addresses = checked_addresses(str(request.url), self.allowed_hosts, self.resolver)
        if not addresses:
            raise TransientError(f"The host {host} has no address.", code="fetch_unavailable")
        pinned = httpx.Request(
            request.method,
            request.url.copy_with(host=str(addresses[0])),
            headers=request.headers,  # `Host` stays the name the URL gave
            stream=request.stream,
            extensions={**request.extensions, "sni_hostname": host},
        )
        return super().handle_request(pinned)


def fetch(
    url: str,
    *,
    max_bytes: int,
    timeout: float,
    allowed_hosts: Sequence[str] = (),
    resolver: Resolver = system_resolver,
) -> bytes:
    """The bytes at `url`; a 4xx, an oversized page or a refused address is permanent, the
    rest is retried."""
    checked_addresses(url, allowed_hosts, None)  # a bad scheme or host: refused before a lookup
    deadline = time.monotonic() + timeout
    try:
        with (
            httpx.Client(
                timeout=timeout,
                follow_redirects=True,
                max_redirects=5,
                transport=PinnedTransport(allowed_hosts, resolver),
            ) as client,
            client.stream("GET", url) as response,
        ):
            if 400 <= response.status_code < 500:
                raise PermanentError(
                    f"The page could not be downloaded from {display_url(url)}: "
                    f"HTTP {response.status_code}. "
                    "Check that it is published, then publish it again.",
                    code="fetch_failed",
                )
            if response.status_code >= 500:
                raise TransientError(
                    f"The CMS answered HTTP {response.status_code} for {display_url(url)}.",
                    code="fetch_unavailable",
                )
            declared = int(response.headers.get("content-length") or 0)
            if declared > max_bytes:
                raise _too_large(url, max_bytes)
            body = bytearray()
            for part in response.iter_bytes():
                body.extend(part)
                if len(body) > max_bytes:
                    raise _too_large(url, max_bytes)
                if time.monotonic() > deadline:
                    raise TransientError(
                        f"Downloading {display_url(url)} took longer than {timeout:g} s.",
                        code="fetch_unavailable",
                    )
            return bytes(body)
    except httpx.HTTPError as exc:
        raise TransientError(
            f"Could not download {display_url(url)}: {mask(str(exc))}", code="fetch_unavailable"
        ) from exc


def _too_large(url: str, max_bytes: int) -> PermanentError:
    return PermanentError(
        f"The page at {display_url(url)} is larger than {max_bytes // 1024} KB "
        "(CONTENT_FETCH_MAX_BYTES).",
        code="too_large",
    )
