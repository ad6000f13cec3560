"""API_KEYS entries with scopes: `name:key:scope1,scope2`; entries without keep full access."""

from __future__ import annotations

import pytest

from api.auth import check_bearer, find_key, parse_keys
from api.problems import ApiProblem
from shared.settings import Settings


def test_scopes_survive_the_comma_split_of_the_setting() -> None:
    entries = Settings(api_keys="editors:k1:upload,search,chatbot:k2:search,old:k3,bare").api_keys
    keys = {key.name: key for key in parse_keys(entries)}
    assert keys["editors"].scopes == {"upload", "search"}
    assert keys["chatbot"].scopes == {"search"}
    assert keys["old"].scopes is None and keys["old"].allows("delete")
    assert keys["api-key-4"].scopes is None  # a bare key: full access
    assert not keys["chatbot"].allows("upload")
    assert check_bearer(list(keys.values()), "Bearer k2").name == "chatbot"
    assert find_key(list(keys.values()), "nope") is None


@pytest.mark.parametrize(
    ("header", "detail"),
    [
        (None, "An API key is required"),
        ("Basic k2", "An API key is required"),
        ("Bearer   ", "An API key is required"),
        ("Bearer nope", "The API key is not valid"),
    ],
)
def test_a_missing_or_wrong_bearer_key_is_a_401_that_says_which(
    header: str | None, detail: str
) -> None:
    keys = parse_keys(["chatbot:k2:search"])
    with pytest.raises(ApiProblem) as refused:
        check_bearer(keys, header)
    assert refused.value.status == 401
    assert refused.value.detail.startswith(detail)
    assert refused.value.headers == {"WWW-Authenticate": 'Bearer realm="ingest"'}


def test_an_unknown_scope_is_refused_not_ignored() -> None:
    with pytest.raises(ValueError, match="unknown scope serch"):
        parse_keys(["chatbot:k2:serch"])
