"""Which URLs may be shown as links: `http` and `https` with a host, nothing else.

A page's URL ends up as a link on the editors' page and in the chatbot's citations, where a
`javascript:` or `data:` URL would run in the reader's browser. The API refuses other schemes,
and the index only ever carries URLs that pass `safe_url` (older rows included).
"""

from __future__ import annotations

from urllib.parse import urlsplit

SAFE_SCHEMES = frozenset({"http", "https"})


def safe_url(url: str | None) -> str | None:
    """`url` if it is an http(s) URL with a host, else None."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in SAFE_SCHEMES or not parts.hostname:
        return None
    return url.strip()


def require_safe_url(url: str | None, field: str) -> str | None:
    """`url` unchanged (None or empty stays as is) or a ValueError naming the rule."""
    if url is None or not url.strip():
        return url
    if safe_url(url) is None:
        raise ValueError(f"{field} must be an http or https URL with a host name.")
    return url
