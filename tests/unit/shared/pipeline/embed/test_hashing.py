"""The offline hashing embedder: deterministic, normalised, lexical, and says so."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from shared.errors import PermanentError
from shared.pipeline.embed import hashing as hashing_embedder
from shared.pipeline.embed import make_embedder
from shared.pipeline.embed.hashing import HashingEmbedder
from shared.settings import Settings
from shared.tokens import count_tokens


def test_vectors_are_deterministic_unit_length_and_of_the_configured_dimension() -> None:
    texts = ["Knieoperatie > Voorbereiding\nNeem uw identiteitskaart mee.", "!!!", "één"]
    first = HashingEmbedder(256).embed(texts)
    second = HashingEmbedder(256).embed(texts)
    assert first.vectors == second.vectors
    for vector in first.vectors:
        assert len(vector) == 256
        assert np.linalg.norm(vector) == pytest.approx(1.0)


def test_texts_sharing_words_are_closer_than_unrelated_texts() -> None:
    embedder = HashingEmbedder(1536)
    knee, knee_again, lungs = embedder.embed(
        [
            "Preparing for knee surgery: bring your identity card",
            "Knee surgery preparation: bring the identity card and medication list",
            "Asthma inhalers help the airways in the lungs",
        ]
    ).vectors
    assert np.dot(knee, knee_again) > np.dot(knee, lungs) + 0.2


def test_tokens_are_the_cl100k_count_and_no_request_is_made() -> None:
    texts = ["hello world", "Neem uw identiteitskaart mee."]
    result = HashingEmbedder(64).embed(texts)
    assert result.tokens == sum(count_tokens(t) for t in texts)
    assert result.requests == 0


def test_empty_input_is_refused_like_the_api_does() -> None:
    with pytest.raises(PermanentError) as caught:
        HashingEmbedder(64).embed(["fine", ""])
    assert caught.value.code == "empty_input"


def test_it_is_named_lexical_and_logs_once_that_it_is_not_for_production(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hashing_embedder, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="shared.embed"):
        embedder = HashingEmbedder(32)
        HashingEmbedder(32)
    assert "lexical" in embedder.name
    messages = [r.getMessage() for r in caplog.records if r.name == "shared.embed"]
    assert len(messages) == 1
    assert "lexical" in messages[0] and "not for production" in messages[0]


def test_make_embedder_picks_hashing_without_an_api_key_and_openai_with_one() -> None:
    hashing = make_embedder(Settings(embedding_provider="auto", hashing_dimensions=128))
    assert "lexical" in hashing.name and hashing.dimensions == 128
    openai = make_embedder(
        Settings(
            embedding_provider="auto",
            openai_api_key="sk-test",
            openai_base_url="http://127.0.0.1:9/v1",
            embedding_dimensions=256,
        )
    )
    assert openai.name == "openai"
    assert (openai.model, openai.dimensions) == ("text-embedding-3-large", 256)
