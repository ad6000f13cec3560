"""Which URLs may be shown as links: `http` and `https` with a host, nothing else.

A page's URL ends up as a link on the editors' page and in the chatbot's citations, where a
`javascript:` or `data:` URL would run in the reader's browser. The API refuses other schemes,
and the index only ever carries URLs that pass `safe_url` (older rows included).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

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


def display_url(url: str) -> str:
    """`url` as it may be shown in an error message or a log: without credentials, query or
    fragment (`https://u:pw@cms/p?access_token=x#a` -> `https://cms/p?***`), which may hold a
    token. Anything that does not parse is shown as `<URL>`."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<URL>"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return shown + ("?***" if parts.query else "")


DEFAULT_PORTS = {"http": 80, "https": 443}


def allow_list_entry(entry: str) -> tuple[str, int | None]:
    """A CONTENT_FETCH_ALLOWED_HOSTS entry as (host, port): `cms.example` -> (`cms.example`,
    None: the scheme's own port only), `cms.example:8443`, `.example.org:443`,
    `[fd00::1]:8080`. ValueError for a port that is not one."""
    text = entry.strip().lower()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:  # a name, or an IPv6 address without brackets (no port then)
        host, port = text, ""
    if not port:
        return host.rstrip("."), None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"CONTENT_FETCH_ALLOWED_HOSTS entry {entry!r}: {port!r} is not a port")
    return host.rstrip("."), int(port)
