"""What a document is, apart from where it is kept: what a document says about itself.

Plain rules, no SQL and no HTTP: the pipeline (`repository.describe_document`) and `ingest
eval`'s in-memory index read a document's front matter or PDF metadata through
`described_fields` and `described_tags`. Light to import: no SQLAlchemy, no converters.
"""

from __future__ import annotations

from typing import Any

from shared.tags import clean_tags
from shared.urls import safe_url

#: The longest title, URL or language a document's own description sets.
MAX_DESCRIBED_CHARS = 1000


# --- what a document says about itself ---------------------------------------------------


def described_fields(found: dict[str, Any]) -> dict[str, str]:
    """The title, source URL and language that front matter or PDF metadata give (`url` and
    `lang` are read too), trimmed to `MAX_DESCRIBED_CHARS`; a URL only if it is a link
    (`shared.urls.safe_url`). The names that give nothing are left out."""
    url = found.get("source_url") or found.get("url")
    url = safe_url(url) if isinstance(url, str) else None  # a link, or nothing
    return {
        name: value.strip()[:MAX_DESCRIBED_CHARS]
        for name, value in (
            ("title", found.get("title")),
            ("source_url", url),
            ("language", found.get("language") or found.get("lang")),
        )
        if isinstance(value, str) and value.strip()
    }


def described_tags(found: dict[str, Any]) -> list[str] | None:
    """The tags front matter gives, kept to the limits (`clean_tags`: a `TagError` past them);
    None when it gives no list. They are the document's only if it has none of its own."""
    tags = found.get("tags")
    return clean_tags(tags) if isinstance(tags, list) else None
