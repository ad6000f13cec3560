"""Bearer API keys: `Authorization: Bearer <key>`, keys from `settings.api_keys`.

Entries are `name:key` or a bare key (named `api-key-N`). The presented key is compared with
every configured key in constant time, without stopping at the first match, so timing tells
nothing about which key (or how much of one) matched. The key's name is the actor written
into the version's events ("uploaded by"). Keys in the query string are refused outright:
URLs end up in logs and browser histories.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.problems import ApiProblem

#: Query parameters that look like someone put a credential into the URL.
CREDENTIAL_PARAMETERS = frozenset({"api_key", "apikey", "key", "token", "access_token"})

bearer = HTTPBearer(auto_error=False, description="An API key from the API_KEYS setting.")


@dataclass(frozen=True)
class ApiKey:
    name: str
    digest: bytes  # SHA-256 of the key: equal lengths for the constant-time comparison


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def parse_keys(entries: list[str]) -> list[ApiKey]:
    """`["editors:s3cret", "bare"]` -> named keys; a bare key gets the name `api-key-N`."""
    keys = []
    for number, entry in enumerate(entries, start=1):
        name, sep, secret = entry.partition(":")
        if not sep:
            name, secret = f"api-key-{number}", entry
        if secret:
            keys.append(ApiKey(name.strip() or f"api-key-{number}", _digest(secret)))
    return keys


def match_key(keys: list[ApiKey], presented: str) -> str | None:
    """The name of the key equal to `presented`, comparing against all keys every time."""
    candidate = _digest(presented)
    found: str | None = None
    for key in keys:
        if hmac.compare_digest(key.digest, candidate) and found is None:
            found = key.name
    return found


def _unauthorized(detail: str) -> ApiProblem:
    return ApiProblem(401, detail, headers={"WWW-Authenticate": 'Bearer realm="ingest"'})


def require_key(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None = Depends(bearer),  # noqa: B008
) -> str:
    """FastAPI dependency: the caller's key name, or 401."""
    if CREDENTIAL_PARAMETERS & {name.lower() for name in request.query_params}:
        raise _unauthorized("API keys are accepted only in the Authorization header.")
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise _unauthorized("An API key is required: send `Authorization: Bearer <key>`.")
    name = match_key(request.app.state.api_keys, credentials.credentials)
    if name is None:
        raise _unauthorized("The API key is not valid.")
    return name
