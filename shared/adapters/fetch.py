"""Downloading a CMS page the webhook sent by URL, within a size and a time limit."""

from __future__ import annotations

import time

import httpx

from shared.errors import PermanentError, TransientError


def fetch(url: str, *, max_bytes: int, timeout: float) -> bytes:
    """The bytes at `url`; a 4xx or an oversized page is permanent, the rest is retried."""
    if not url.lower().startswith(("http://", "https://")):
        raise PermanentError(
            f"The page address {url!r} is not an http(s) URL.", code="fetch_failed"
        )
    deadline = time.monotonic() + timeout
    try:
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as response:
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
