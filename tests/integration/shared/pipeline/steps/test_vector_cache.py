"""Identical text is embedded once: a chunk whose embedding input was embedded before, in any
document, takes the cached vector (no request, no tokens); another model embeds anew."""

from __future__ import annotations

import uuid

import pytest

from shared import repository as repo
from shared.db import transaction
from shared.pipeline import indexing, steps
from shared.settings import get_settings
from tests.support.pipeline import PipelineEnv, page
from tests.support.steps import register, to_embedding

PAGE = page(sections=8)  # several chunks


def embed(content: str, external_id: str) -> uuid.UUID:
    version_id = register(content.encode(), external_id)
    to_embedding(version_id)
    steps.embed_versions([version_id], "embed", take_waiting=False)
    return version_id


def vectors_of(version_id: uuid.UUID) -> dict[str, tuple[bytes, bool]]:
    with transaction() as session:
        rows = repo.chunks_with_vectors_of(session, [version_id])
    return {row.text: (row.vector, row.embedded) for row in rows}


def test_a_copied_page_takes_its_vectors_from_the_cache(pipeline: PipelineEnv) -> None:
    first = embed(PAGE, "knie")
    sent = len(pipeline.fake.requests)
    assert sent > 0

    copy = embed(PAGE, "afdeling-a/knie")

    assert len(pipeline.fake.requests) == sent  # not one request for the copy
    version = pipeline.version(copy)
    assert (version.tokens_spent, version.chunks_embedded, version.embedding_requests) == (0, 0, 0)
    original, copied = vectors_of(first), vectors_of(copy)
    assert copied.keys() == original.keys()
    for text, (vector, embedded) in copied.items():
        assert vector == original[text][0] and vector is not None
        assert embedded is False  # reused, not sent


def test_a_changed_heading_is_another_input_for_its_chunk_only(pipeline: PipelineEnv) -> None:
    embed(PAGE, "knie")
    sent = len(pipeline.fake.requests)

    other = embed(PAGE.replace("## Step 7", "## Stap 7"), "andere-knie")

    assert len(pipeline.fake.requests) == sent + 1
    version = pipeline.version(other)
    assert version.chunk_count is not None and version.chunk_count > 2
    assert version.chunks_embedded == 1 and version.tokens_spent > 0  # the last section only


def test_another_model_does_not_reuse_the_vectors(
    pipeline: PipelineEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    embed(PAGE, "knie")
    sent = len(pipeline.fake.requests)

    monkeypatch.setenv("EMBEDDING_MODEL", "text-embedding-3-small")
    get_settings.cache_clear()
    again = embed(PAGE, "afdeling-a/knie")

    assert len(pipeline.fake.requests) > sent
    version = pipeline.version(again)
    assert version.tokens_spent > 0 and version.chunks_embedded == version.chunk_count


def test_the_cache_key_names_provider_model_and_size(pipeline: PipelineEnv) -> None:
    from shared.pipeline import wiring

    embedder = wiring.embedder(get_settings())
    key = indexing.cache_key(embedder, "Bezoek is welkom.")
    assert key == indexing.cache_key(embedder, "Bezoek is welkom.")
    assert key != indexing.cache_key(embedder, "Bezoek is welkom!")
    with transaction() as session:
        repo.remember_vectors(session, embedder.model, embedder.dimensions, {key: b"\x00" * 4})
        repo.remember_vectors(session, embedder.model, embedder.dimensions, {key: b"\x01" * 4})
        assert repo.cached_vectors(session, [key, "0" * 64]) == {key: b"\x00" * 4}
