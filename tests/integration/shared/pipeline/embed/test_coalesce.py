"""Coalescing embedding inputs across versions, through the real SDK and the stand-in: full
requests across documents, several in flight, and a refused input failing only its version."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from shared.adapters.openai_embeddings import OpenAIEmbedder
from shared.pipeline.embed.coalesce import Answer, Limits, Pending, embed_pending
from shared.tokens import count_tokens
from tests.support.fakes.openai_server import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(latency=0.05) as server:
        yield server


def embedder(fake: FakeOpenAI) -> OpenAIEmbedder:
    # The client's own input check is opened up so the API's refusal can be exercised.
    return OpenAIEmbedder(
        api_key="sk-test", base_url=fake.base_url, max_input_tokens=100_000, max_retries=0
    )


def page(version: uuid.UUID, chunks: int, start: int) -> list[Pending]:
    texts = [f"Page {version} chunk {n} about the knee operation." for n in range(chunks)]
    return [Pending(start + n, version, text, count_tokens(text)) for n, text in enumerate(texts)]


def test_inputs_of_many_pages_fill_full_requests_and_repeats_go_once(fake: FakeOpenAI) -> None:
    versions = [uuid.uuid4() for _ in range(700)]
    pending = [item for n, v in enumerate(versions) for item in page(v, 3, n * 10)]
    boiler = "Bel ons op 088 123 45 67."  # the same footer on every page: sent once
    pending += [Pending(100_000 + n, v, boiler, 12) for n, v in enumerate(versions)]
    answers: list[Answer] = []

    failed = embed_pending(
        embedder(fake), pending, Limits(max_inputs=2048, in_flight=4), answers.append
    )

    assert failed == {}
    assert sorted(r.inputs for r in fake.requests) == [53, 2048]  # 2100 + 1 unique inputs
    stored = {cid for answer in answers for cid in answer.vectors}
    assert stored == {item.chunk_id for item in pending}
    assert sum(answer.chunks[v] for answer in answers for v in answer.chunks) == len(pending)
    billed = sum(r.tokens for r in fake.requests)
    assert sum(n for answer in answers for n in answer.tokens.values()) == billed


def test_a_refused_input_fails_only_its_own_version(fake: FakeOpenAI) -> None:
    good, bad, other = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    too_long = "hello " * 9000  # over the API's 8192 tokens per input
    pending = [
        *page(good, 2, 0),
        Pending(10, bad, too_long, count_tokens(too_long)),
        *page(other, 2, 20),
    ]
    answers: list[Answer] = []

    failed = embed_pending(
        embedder(fake), pending, Limits(max_input_tokens=100_000), answers.append
    )

    assert set(failed) == {bad} and failed[bad].code == "embedding_rejected"
    stored = {cid for answer in answers for cid in answer.vectors}
    assert stored == {0, 1, 20, 21}
    assert [r.status for r in fake.requests].count(400) == 2  # the batch, then the page alone


def test_inputs_refused_before_sending_cost_nothing(fake: FakeOpenAI) -> None:
    good, empty = uuid.uuid4(), uuid.uuid4()
    pending = [*page(good, 2, 0), Pending(5, empty, "", 0)]
    answers: list[Answer] = []

    failed = embed_pending(embedder(fake), pending, Limits(), answers.append)

    assert set(failed) == {empty} and failed[empty].code == "empty_input"
    assert [r.inputs for r in fake.requests] == [2]
