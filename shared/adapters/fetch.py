"""Downloading a CMS page the webhook sent by URL, within a size and a time limit.

A signed webhook is trusted to name pages, not to make the worker reach into the hospital's
network: a URL must name an allowed host (`CONTENT_FETCH_ALLOWED_HOSTS`), and a host not named
there explicitly must resolve to public addresses only (no loopback, private, link-local or
cloud-metadata address). Every redirect is checked the same way.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx

from shared.errors import PermanentError, TransientError

REFUSED = "fetch_refused"


def host_allowed(host: str, allowed_hosts: Sequence[str]) -> bool:
    """`host` is named by the allow-list: exactly, or under a `.example.org` entry."""
    host = host.lower().rstrip(".")
    for entry in (entry.lower().rstrip(".") for entry in allowed_hosts):
        if host == entry or (entry.startswith(".") and host.endswith(entry)):
            return True
    return False


def check_url(url: str, allowed_hosts: Sequence[str], *, resolve: bool = True) -> str:
    """The URL's host, or a permanent `fetch_refused` error saying why it may not be fetched.

    With `resolve`, a host not named in the allow-list is looked up and every address it has
    must be public; without it (the API, which answers at once) only literal addresses and
    `localhost` are judged, and the worker checks again before it downloads.
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise PermanentError(f"The page address {url!r} is not an http or https URL.", code=REFUSED)
    host = parts.hostname
    listed = host_allowed(host, allowed_hosts)
    if allowed_hosts and not listed:
        raise PermanentError(
            f"The page address names {host}, which is not in CONTENT_FETCH_ALLOWED_HOSTS; "
            "send the Markdown in page.body or ask the operators to allow the host.",
            code=REFUSED,
        )
    if listed:
        return host  # named explicitly by the operators: an intranet CMS is fine
    for address in _addresses(host, resolve=resolve):
        if not address.is_global:
            raise PermanentError(
                f"The page address {url} points into a private network ({address}); only "
                "hosts listed in CONTENT_FETCH_ALLOWED_HOSTS may be internal.",
                code=REFUSED,
            )
    return host


def _addresses(host: str, *, resolve: bool) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    if host.lower().rstrip(".") == "localhost" or host.lower().endswith(".localhost"):
        return [ipaddress.ip_address("127.0.0.1")]
    if not resolve:
        return []
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise TransientError(
            f"The host {host} could not be resolved: {exc}.", code="fetch_unavailable"
        ) from exc
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]


def fetch(url: str, *, max_bytes: int, timeout: float, allowed_hosts: Sequence[str] = ()) -> bytes:
    """The bytes at `url`; a 4xx, an oversized page or a refused address is permanent, the
    rest is retried."""
    check_url(url, allowed_hosts)
    first = httpx.URL(url)

    def check_redirect(request: httpx.Request) -> None:
        if request.url != first:  # the first request was checked above
            check_url(str(request.url), allowed_hosts)

    deadline = time.monotonic() + timeout
    try:
        with (
            httpx.Client(
                timeout=timeout,
                follow_redirects=True,
                max_redirects=5,
                event_hooks={"request": [check_redirect]},
            ) as client,
            client.stream("GET", url) as response,
        ):
            if 400 <= response.status_code < 500:
                raise PermanentError(
                    f"The page could not be downloaded from {url}: HTTP {response.status_code}. "
                    "Check that it is published, then publish it again.",
                    code="fetch_failed",
                )
            if response.status_code >= 500:
                raise TransientError(
                    f"The CMS answered HTTP {response.status_code} for {url}.",
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
                        f"Downloading {url} took longer than {timeout:g} s.",
                        code="fetch_unavailable",
                    )
            return bytes(body)
    except httpx.HTTPError as exc:
        raise TransientError(f"Could not download {url}: {exc}", code="fetch_unavailable") from exc


def _too_large(url: str, max_bytes: int) -> PermanentError:
    return PermanentError(
        f"The page at {url} is larger than {max_bytes // 1024} KB (CONTENT_FETCH_MAX_BYTES).",
        code="too_large",
    )
