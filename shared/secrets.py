"""Masking secrets in whatever the service prints: log lines (`shared.log`) and the errors of
the `ingest` command. Passwords in URLs (`scheme://user:***@host`) and the query strings of
http(s) URLs (`https://cms/p?***`: a token rides there) are masked wherever they appear; the
configured secrets (API keys, the webhook secret, the passwords of the configured URLs, raw
and URL-encoded) are masked as literal text, since a library may print them bare.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit

from shared.api_keys import key_entries
from shared.settings import Settings

MASK = "***"
#: `scheme://user:password@`: the password runs to the last `@` of the token.
URL_CREDENTIALS = re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://[^\s:/@\"']*:)[^\s\"']+@")
#: An http(s) URL's query string: it may carry a token (`?access_token=...`); masked whole.
HTTP_QUERY = re.compile(r"(?P<head>\bhttps?://[^\s?#\"'<>]+)\?[^\s#\"'<>]*", re.IGNORECASE)
#: Shorter values are not masked as literal text (they would mask ordinary words).
MIN_SECRET_LENGTH = 6
SECRET_VARIABLES = (
    "OPENAI_API_KEY",
    "QDRANT_API_KEY",
    "CMS_WEBHOOK_SECRET",
    "METRICS_KEY",
    "DATABASE_PASSWORD",
    "REDIS_PASSWORD",
    "API_KEYS",
    "DATABASE_URL",
    "REDIS_URL",
    "QDRANT_URL",
)


def mask(text: str, settings: Settings | None = None) -> str:
    """`text` with URL passwords, http(s) query strings and the configured secrets replaced
    by `***`.

    Without `settings` (they may be what failed to load) the secrets come from the
    environment variables of the same names."""
    text = URL_CREDENTIALS.sub(rf"\g<head>{MASK}@", text)
    text = HTTP_QUERY.sub(rf"\g<head>?{MASK}", text)
    raw = _raw_values(settings) if settings is not None else _environment_values()
    for secret in _secrets(raw):
        text = text.replace(secret, MASK)
    return text


def _raw_values(settings: Settings) -> tuple[str, ...]:
    values = [settings.database_url, settings.redis_url or "", settings.qdrant_url or ""]
    for secret in (
        settings.openai_api_key,
        settings.qdrant_api_key,
        settings.cms_webhook_secret,
        settings.database_password,
        settings.redis_password,
    ):
        values.append(secret.get_secret_value() if secret is not None else "")
    values.extend(entry.secret for entry in key_entries(settings.api_keys))
    values.append(settings.metrics_key.get_secret_value() if settings.metrics_key else "")
    return tuple(values)


def _environment_values() -> tuple[str, ...]:
    values = [os.environ.get(name, "") for name in SECRET_VARIABLES if name != "API_KEYS"]
    entries = os.environ.get("API_KEYS", "").split(",")
    return (*values, *(entry.secret for entry in key_entries(entries)))


@lru_cache(maxsize=16)
def _secrets(raw: tuple[str, ...]) -> tuple[str, ...]:
    """Literal secrets in `raw` values: keys and API keys (`shared.api_keys` took them out of
    their entries: a name or a scope is never masked) as given, passwords of URLs (decoded and
    encoded); longest first so none is masked only in part."""
    found: set[str] = set()
    for value in raw:
        if "://" in value:
            try:
                password = urlsplit(value).password
            except ValueError:
                password = None
            if password:
                found.update({password, unquote(password), quote(unquote(password), safe="")})
            continue
        found.add(value.strip())
    return tuple(sorted((s for s in found if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True))
