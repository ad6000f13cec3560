"""Bearer API keys: `Authorization: Bearer <key>`, keys from `settings.api_keys`.

Entries are `name:key`, `name:key:scope1,scope2` or a bare key (named `api-key-N`). Scopes
limit what a key may do (`SCOPES`); an entry without scopes has full access, so keys configured
before scopes existed keep working. A route declares its scope once, with
`Depends(require_scope(...))`; `KeyBeforeBody` reads that declaration (`declared_scope`) and
refuses a key without it before the request's body is read, the dependency checks it again.
The presented key is compared with every configured key in constant time, without stopping
at the first match, so timing tells nothing about which key (or how much of one) matched.
The key's name is the actor written into the version's events ("uploaded by"). Keys in the
query string are refused outright: URLs end up in logs and browser histories.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.dependencies.models import Dependant
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.problems import ApiProblem
from shared.api_keys import SCOPES, key_entries

#: Query parameters that look like someone put a credential into the URL.
CREDENTIAL_PARAMETERS = frozenset({"api_key", "apikey", "key", "token", "access_token"})

bearer = HTTPBearer(auto_error=False, description="An API key from the API_KEYS setting.")

#: The attribute on a `require_scope` dependency that names its scope.
SCOPE_ATTRIBUTE = "required_scope"


@dataclass(frozen=True)
class ApiKey:
    name: str
    digest: bytes  # SHA-256 of the key: equal lengths for the constant-time comparison
    scopes: frozenset[str] | None = None  # None: every scope (entries without scopes)

    def allows(self, scope: str) -> bool:
        return self.scopes is None or scope in self.scopes


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def parse_keys(entries: list[str]) -> list[ApiKey]:
    """`["editors:s3cret", "chatbot:k2:search", "bare"]` -> keys (`shared.api_keys` reads the
    entries); an unknown scope is refused at start-up (ValueError), never ignored."""
    keys = []
    for entry in key_entries(entries):
        unknown = (entry.scopes or frozenset()) - SCOPES
        if unknown:
            raise ValueError(
                f"API_KEYS entry {entry.name!r}: unknown scope "
                f"{', '.join(sorted(unknown))}; known: {', '.join(sorted(SCOPES))}"
            )
        keys.append(ApiKey(entry.name, _digest(entry.secret), entry.scopes))
    return keys


def find_key(keys: list[ApiKey], presented: str) -> ApiKey | None:
    """The key equal to `presented`, comparing against all keys every time."""
    candidate = _digest(presented)
    found: ApiKey | None = None
    for key in keys:
        if hmac.compare_digest(key.digest, candidate) and found is None:
            found = key
    return found


def _unauthorized(detail: str) -> ApiProblem:
    return ApiProblem(401, detail, headers={"WWW-Authenticate": 'Bearer realm="ingest"'})


def check_bearer(keys: list[ApiKey], authorization: str | None) -> ApiKey:
    """The key an `Authorization: Bearer <key>` header presents, or a 401 saying what is
    wrong: the one check of a presented key, for `KeyBeforeBody` and the routes alike."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise _unauthorized("An API key is required: send `Authorization: Bearer <key>`.")
    key = find_key(keys, token.strip())
    if key is None:
        raise _unauthorized("The API key is not valid.")
    return key


def refuse_query_credentials(query_names: Iterable[str]) -> None:
    """401 when the URL carries something that looks like a key (`?api_key=...`)."""
    if CREDENTIAL_PARAMETERS & {name.lower() for name in query_names}:
        raise _unauthorized("API keys are accepted only in the Authorization header.")


def require_key(
    request: Request,
    # Declares the scheme in the OpenAPI document; the header itself is read by check_bearer.
    _credentials: HTTPAuthorizationCredentials | None = Depends(bearer),  # noqa: B008
) -> str:
    """FastAPI dependency: the caller's key name, or 401. `KeyBeforeBody` has already
    checked the key of a `/v1` request (`request.state.api_key`): it is not hashed again."""
    refuse_query_credentials(request.query_params)
    key: ApiKey | None = getattr(request.state, "api_key", None)
    if key is None:
        key = check_bearer(request.app.state.api_keys, request.headers.get("authorization"))
        request.state.api_key = key
    return key.name


def check_scope(key: ApiKey, scope: str, why: str = "") -> None:
    """403 naming the missing scope unless `key` allows `scope`; `why` names what asked for
    it (`allow_empty=true` asks for `delete`)."""
    if not key.allows(scope):
        raise ApiProblem(
            403,
            f"The API key {key.name!r} may not {scope}{why}: its scopes are "
            f"{', '.join(sorted(key.scopes or ())) or 'none'}. Ask for a key with the "
            f"{scope!r} scope.",
            required_scope=scope,
        )


def require_scope(scope: str) -> Callable[..., str]:
    """FastAPI dependency factory: the caller's key name, 401 without a key, 403 when the
    key's scopes do not include `scope`. The route's one declaration of its scope."""
    assert scope in SCOPES, scope

    def dependency(request: Request, name: str = Depends(require_key)) -> str:
        check_scope(request.state.api_key, scope)
        return name

    setattr(dependency, SCOPE_ATTRIBUTE, scope)
    return dependency


def declared_scope(dependant: Dependant) -> str | None:
    """The scope a route's dependencies require (`require_scope`), searched through nested
    dependencies; None when it requires none."""
    for dependency in dependant.dependencies:
        scope = getattr(dependency.call, SCOPE_ATTRIBUTE, None) or declared_scope(dependency)
        if scope:
            return str(scope)
    return None
