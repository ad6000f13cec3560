"""The entries of the API_KEYS setting: `name:key`, `name:key:scope1,scope2` or a bare key.

Read here, in `shared`, because two places need the same reading: the API, which checks the
keys (`api.auth`), and the log masking (`shared.secrets`), which must hide each key's value,
scoped or not, and never a name or a scope.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What a scoped key may be allowed: read (documents, versions, events, chunks, files),
#: search (`POST /v1/search`), upload, delete, reingest.
SCOPES = frozenset({"read", "search", "upload", "delete", "reingest"})


@dataclass(frozen=True)
class KeyEntry:
    name: str
    secret: str
    scopes: frozenset[str] | None  # None: every scope (entries without scopes)


def _group_scopes(entries: list[str]) -> list[str]:
    """API_KEYS is split on commas, which also separate a key's scopes: a bare scope name
    right after a scoped entry (`chatbot:k:search,upload` -> `chatbot:k:search`, `upload`)
    belongs to that entry."""
    grouped: list[str] = []
    for entry in entries:
        part = entry.strip()
        if grouped and ":" not in part and part in SCOPES and grouped[-1].count(":") >= 2:
            grouped[-1] = f"{grouped[-1]},{part}"
        else:
            grouped.append(part)
    return grouped


def key_entries(entries: list[str]) -> list[KeyEntry]:
    """`["editors:s3cret", "chatbot:k2:search", "bare"]` -> entries; a bare key gets the name
    `api-key-N`; entries without a key are left out. Scopes are returned as written (the API
    refuses unknown ones at start-up)."""
    found = []
    for number, entry in enumerate(_group_scopes(entries), start=1):
        name, sep, rest = entry.partition(":")
        if not sep:
            name, rest = f"api-key-{number}", entry
        secret, sep, scope_list = rest.partition(":")
        scopes = None
        if sep:
            scopes = frozenset(s.strip() for s in scope_list.split(",") if s.strip())
        if secret.strip():
            found.append(KeyEntry(name.strip() or f"api-key-{number}", secret.strip(), scopes))
    return found
