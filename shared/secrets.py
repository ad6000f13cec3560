"""Masking secrets in whatever the service prints: log lines (`shared.log`) and the errors of
the `ingest` command. Passwords in URLs (`scheme://user:***@host`) are masked wherever they
appear; the configured secrets (API keys, the webhook secret, the passwords of the configured
URLs, raw and URL-encoded) are masked as literal text, since a library may print them bare.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit

from shared.settings import Settings

MASK = "***"
#: `scheme://user:password@`: the password runs to the last `@` of the token.
URL_CREDENTIALS = re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://[^\s:/@\"']*:)[^\s\"']+@")
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
    """`text` with URL passwords and the configured secrets replaced by `***`.

    Without `settings` (they may be what failed to load) the secrets come from the
    environment variables of the same names."""
    text = URL_CREDENTIALS.sub(rf"\g<head>{MASK}@", text)
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
    values.append(",".join(settings.api_keys))
    values.append(settings.metrics_key.get_secret_value() if settings.metrics_key else "")
    return tuple(values)


def _environment_values() -> tuple[str, ...]:
    return tuple(os.environ.get(name, "") for name in SECRET_VARIABLES)


@lru_cache(maxsize=16)
def _secrets(raw: tuple[str, ...]) -> tuple[str, ...]:
    """Literal secrets in `raw` values: keys as given, passwords of URLs (decoded and
    encoded), each `name:key` pair's key; longest first so none is masked only in part."""
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
        for part in value.split(","):
            found.add(part.strip().split(":", 1)[-1].strip())
    return tuple(sorted((s for s in found if len(s) >= MIN_SECRET_LENGTH), key=len, reverse=True))
