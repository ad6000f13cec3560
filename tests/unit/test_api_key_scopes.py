"""API_KEYS entries with scopes: `name:key:scope1,scope2`; entries without keep full access."""

from __future__ import annotations

import pytest

from api.auth import find_key, match_key, parse_keys
from shared.settings import Settings


def test_scopes_survive_the_comma_split_of_the_setting() -> None:
    entries = Settings(api_keys="editors:k1:upload,search,chatbot:k2:search,old:k3,bare").api_keys
    keys = {key.name: key for key in parse_keys(entries)}
    assert keys["editors"].scopes == {"upload", "search"}
    assert keys["chatbot"].scopes == {"search"}
    assert keys["old"].scopes is None and keys["old"].allows("delete")
    assert keys["api-key-4"].scopes is None  # a bare key: full access
    assert not keys["chatbot"].allows("upload")
    assert match_key(list(keys.values()), "k2") == "chatbot"
    assert find_key(list(keys.values()), "nope") is None


def test_an_unknown_scope_is_refused_not_ignored() -> None:
    with pytest.raises(ValueError, match="unknown scope serch"):
        parse_keys(["chatbot:k2:serch"])
