"""The OpenAI embedder against the stand-in server, through the real `openai` SDK.

The stand-in (tests/support/fakes/openai_server.py) is a real HTTP server with the API's limits,
errors and headers; nothing of ours is mocked.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openai
import pytest
from prometheus_client import REGISTRY

from shared.adapters.openai_embeddings import QUOTA_MESSAGE, OpenAIEmbedder
from shared.errors import PermanentError, TransientError
from shared.pipeline.embed import make_embedder
from shared.ratelimit import LocalRateLimiter
from shared.settings import Settings
from shared.tokens import count_tokens
from tests.support.fakes.openai_server import FakeOpenAI, vector_for

MODEL = "text-embedding-3-large"
ROOT = Path(__file__).resolve().parents[5]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def embedder_for(fake: FakeOpenAI, **options: object) -> OpenAIEmbedder:
    """Fast backoff so the retry tests take milliseconds; Retry-After is still honoured."""
    settings: dict[str, object] = {
        "api_key": "sk-test",
        "base_url": fake.base_url,
        "backoff_base_seconds": 0.01,
        "backoff_max_seconds": 0.05,
    }
    settings.update(options)
    return OpenAIEmbedder(**settings)  # type: ignore[arg-type]


def text_of_tokens(prefix: str, tokens: int) -> str:
    """A text of exactly `tokens` cl100k tokens (" hello" is one token)."""
    text = prefix + " hello" * (tokens - count_tokens(prefix))
    assert count_tokens(text) == tokens
    return text


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_2500_inputs_become_two_full_requests(fake: FakeOpenAI) -> None:
    inputs = [f"Chunk number {i} about knee surgery." for i in range(2500)]
    result = embedder_for(fake).embed(inputs)
    assert [r.inputs for r in fake.requests] == [2048, 452]
    assert result.requests == 2
    assert len(result.vectors) == 2500


def test_40_inputs_of_8000_tokens_respect_the_300k_request_cap(fake: FakeOpenAI) -> None:
    inputs = [text_of_tokens(f"Document {i}:", 8000) for i in range(40)]
    result = embedder_for(fake).embed(inputs)
    assert [r.tokens for r in fake.requests] == [37 * 8000, 3 * 8000]
    assert all(r.status == 200 for r in fake.requests)
    assert result.tokens == 40 * 8000


def test_an_input_over_8192_tokens_is_refused_before_any_request(fake: FakeOpenAI) -> None:
    inputs = ["A short chunk.", text_of_tokens("Too long:", 8193)]
    with pytest.raises(PermanentError) as caught:
        embedder_for(fake).embed(inputs)
    assert caught.value.code == "input_too_long"
    assert "8193 tokens" in caught.value.message
    assert fake.requests == []


def test_vectors_come_back_in_input_order_even_when_the_api_shuffles_them() -> None:
    inputs = [f"Paragraph {i}: rest after the operation." for i in range(300)]
    with FakeOpenAI(shuffle_data=True) as fake:
        result = embedder_for(fake, batch_size=100).embed(inputs)
    assert len(fake.requests) == 3
    for text, vector in zip(inputs, result.vectors, strict=True):
        np.testing.assert_allclose(vector, vector_for(text, 1536, MODEL), rtol=1e-6)


def test_a_text_that_occurs_twice_is_sent_and_paid_once(fake: FakeOpenAI) -> None:
    inputs = ["Same text.", "Other text.", "Same text."]
    result = embedder_for(fake).embed(inputs)
    assert [r.inputs for r in fake.requests] == [2]
    assert result.vectors[0] == result.vectors[2] != result.vectors[1]
    assert result.tokens == count_tokens("Same text.") + count_tokens("Other text.")


def test_one_input_is_counted_without_a_thread_pool(fake: FakeOpenAI) -> None:
    """A search embeds one question: tiktoken's `encode_batch` would start a thread pool for
    it (0.3 ms, and up to 4 ms when the cores are busy, on every search)."""
    started: list[str] = []
    threading.settrace(lambda *_: started.append(threading.current_thread().name))
    try:
        result = embedder_for(fake).embed(["Mag ik eten voor de operatie?"])
    finally:
        threading.settrace(None)  # type: ignore[arg-type]  # None removes it, as documented
    assert result.tokens == count_tokens("Mag ik eten voor de operatie?")
    assert not [name for name in started if name.startswith("ThreadPoolExecutor")], started


def test_tokens_come_from_the_api_usage_and_are_exported_as_a_metric(fake: FakeOpenAI) -> None:
    before = metric("ingest_embedding_tokens_total", model=MODEL)
    inputs = ["Knieoperatie > Voorbereiding\nNeem uw identiteitskaart mee.", "Tweede chunk."]
    result = embedder_for(fake).embed(inputs)
    assert result.tokens == fake.tokens_accepted() == sum(count_tokens(t) for t in inputs)
    assert metric("ingest_embedding_tokens_total", model=MODEL) - before == result.tokens


def test_429_with_retry_after_1_is_waited_out_then_succeeds(fake: FakeOpenAI) -> None:
    fake.rate_limit_next(1, retry_after=1)
    started = time.monotonic()
    result = embedder_for(fake).embed(["Breathe in slowly."])
    assert time.monotonic() - started >= 1.0  # Retry-After honoured, not the 10 ms backoff
    assert fake.statuses() == [429, 200]
    assert result.requests == 2


def test_rate_limit_answers_are_waited_out_apart_from_the_error_retries(
    fake: FakeOpenAI,
) -> None:
    # One retry allowed: a 500 uses it; the 429s after it are waits, not failures (they used
    # to count too, and failed the request, and with it every page of the batch).
    fake.fail_next(1, status=500)
    fake.rate_limit_next(3, retry_after=0.01)
    result = embedder_for(fake, max_retries=1).embed(["Drink enough water."])
    assert fake.statuses() == [500, 429, 429, 429, 200]
    assert result.requests == 5


def test_waits_are_bounded_and_errors_still_fail_after_max_retries(fake: FakeOpenAI) -> None:
    fake.rate_limit_next(6, retry_after=0.01)  # a 7th request would get its 200
    with pytest.raises(TransientError) as caught:
        embedder_for(fake, max_retries=1).embed(["Drink enough water."])
    assert caught.value.code == "embedding_unavailable"
    # 4 waits per allowed retry, then the 429s count as errors: 4 waits + 1 retry + 1 first.
    assert fake.statuses() == [429] * 6
    fake.fail_next(2, status=500)
    with pytest.raises(TransientError):
        embedder_for(fake, max_retries=1).embed(["Drink enough water."])
    assert fake.statuses()[6:] == [500, 500]


def test_five_500s_then_success(fake: FakeOpenAI) -> None:
    before = metric("ingest_embedding_retries_total", model=MODEL, reason="server_error")
    fake.fail_next(5, status=500)
    result = embedder_for(fake).embed(["Take the tablets with water."])
    assert fake.statuses() == [500] * 5 + [200]
    assert result.requests == 6
    assert len(result.vectors[0]) == 1536
    assert (
        metric("ingest_embedding_retries_total", model=MODEL, reason="server_error") - before == 5
    )


def test_insufficient_quota_fails_at_once_without_retries(fake: FakeOpenAI) -> None:
    fake.quota_exhausted_next(5)
    with pytest.raises(PermanentError) as caught:
        embedder_for(fake).embed(["Anything."])
    assert caught.value.code == "embedding_quota"
    assert caught.value.message == QUOTA_MESSAGE
    assert fake.statuses() == [429]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"object": "list", "data": [], "usage": {"total_tokens": 3}}, "0 vectors for 1 inputs"),
        ({"object": "list", "data": "nonsense"}, "not a list of embeddings"),
        ({"data": [{"index": 0, "embedding": "not base64!"}]}, "not a list of embeddings"),
    ],
)
def test_a_malformed_answer_fails_the_request_clearly_without_retries(
    fake: FakeOpenAI, body: object, said: str
) -> None:
    fake.answer_next(body)
    with pytest.raises(PermanentError) as caught:
        embedder_for(fake).embed(["Anything."])
    assert caught.value.code == "embedding_invalid_response"
    assert said in caught.value.message
    assert fake.statuses() == [200]


def test_vectors_read_from_base64_equal_the_api_s_floats(fake: FakeOpenAI) -> None:
    texts = ["Eerste zin.", "Second sentence.", "Eerste zin."]
    vectors = embedder_for(fake).embed(texts).vectors
    for text, vector in zip(texts, vectors, strict=True):
        assert isinstance(vector, list) and isinstance(vector[0], float)
        assert vector == vector_for(text, 1536).tolist()  # the default model and size
    assert fake.requests[0].inputs == 2 and fake.requests[0].encoding_format == "base64"


def test_a_refused_request_is_not_retried_and_says_why(fake: FakeOpenAI) -> None:
    with pytest.raises(PermanentError) as caught:
        embedder_for(fake, dimensions=4000).embed(["Anything."])
    assert caught.value.code == "embedding_rejected"
    assert "(400)" in caught.value.message and "dimensions" in caught.value.message
    assert fake.statuses() == [400]


def test_an_unknown_model_is_refused_with_the_api_message(fake: FakeOpenAI) -> None:
    with pytest.raises(PermanentError) as caught:
        embedder_for(fake, model="text-embedding-4-imaginary").embed(["Anything."])
    assert caught.value.code == "embedding_rejected"
    assert "does not exist" in caught.value.message
    assert fake.statuses() == [404]


def test_exhausted_retries_are_transient_so_the_stage_runs_again_later(fake: FakeOpenAI) -> None:
    fake.fail_next(10, status=503)
    with pytest.raises(TransientError) as caught:
        embedder_for(fake, max_retries=2).embed(["Anything."])
    assert caught.value.code == "embedding_unavailable"
    assert caught.value.retryable
    assert fake.statuses() == [503, 503, 503]


def test_a_search_question_gives_up_sooner_than_a_stage(fake: FakeOpenAI) -> None:
    """A person waits for a search: `query_retries` retries, not the stages' `max_retries`,
    each request within `query_timeout_seconds`."""
    embedder = embedder_for(fake, max_retries=8, query_retries=1, query_timeout_seconds=0.3)
    fake.fail_next(2, status=503)
    with pytest.raises(TransientError) as caught:
        embedder.embed_query(["Wanneer is bezoek welkom?"])
    assert caught.value.code == "embedding_unavailable"
    assert fake.statuses() == [503, 503]
    fake.latency = 1.0  # longer than the question's timeout, shorter than the stages'
    with pytest.raises(TransientError):
        embedder.embed_query(["Wanneer is bezoek welkom?"])
    fake.latency = 0.0
    assert len(embedder.embed_query(["Wanneer is bezoek welkom?"]).vectors) == 1
    assert len(embedder.embed(["Een passage."]).vectors) == 1


def test_timeouts_are_retried(fake: FakeOpenAI) -> None:
    fake.latency = 1.0
    with pytest.raises(TransientError) as caught:
        embedder_for(fake, max_retries=1, timeout_seconds=0.2).embed(["Slow."])
    assert "timeout" in caught.value.message
    deadline = time.monotonic() + 10
    while len(fake.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the server finishes the abandoned requests on its own threads
    assert len(fake.requests) == 2
    fake.latency = 0.0
    assert embedder_for(fake).embed(["Fast again."]).requests == 1


def test_the_rate_limit_headers_slow_a_misconfigured_limiter_down() -> None:
    limiter = LocalRateLimiter(1_000_000, 10_000, headroom=1.0)  # believes in 1M TPM
    inputs = [text_of_tokens(f"Part {i}:", 5000) for i in range(10)]
    with FakeOpenAI(tokens_per_minute=100_000) as fake:
        embedder_for(fake, limiter=limiter).embed(inputs)
    # Without the headers the bucket would hold 950,000 of its 1,000,000 tokens; the stand-in
    # reported about 50,000 left of its 100,000 and the bucket followed (plus a little refill).
    assert limiter.available()[0] < 150_000


def test_make_embedder_reaches_a_compatible_server_through_the_base_url(fake: FakeOpenAI) -> None:
    settings = Settings(
        openai_api_key="sk-test", openai_base_url=fake.base_url, embedding_dimensions=256
    )
    result = make_embedder(settings).embed(["Knieoperatie\nNuchter blijven."])
    assert len(result.vectors[0]) == 256
    assert fake.requests[0].dimensions == 256
    assert fake.requests[0].encoding_format == "base64"  # the SDK's default


class TestTheStandInRefusesLikeTheApi:
    """The stand-in's own limits, asked directly through the SDK, without our embedder."""

    @pytest.fixture
    def client(self, fake: FakeOpenAI) -> openai.OpenAI:
        return openai.OpenAI(api_key="sk-test", base_url=fake.base_url, max_retries=0)

    @pytest.mark.parametrize(
        ("inputs", "message"),
        [
            (["x"] * 2049, "maximum length 2048"),
            ([""], "'$.input' is invalid"),
            ([], "'$.input' is invalid"),
            (["hello" + " hello" * 8192], "maximum context length is 8192 tokens"),
            ([f"Part {i}" + " hello" * 7999 for i in range(38)], "max 300000 tokens per request"),
        ],
    )
    def test_limits_answer_400(
        self, client: openai.OpenAI, inputs: list[str], message: str
    ) -> None:
        with pytest.raises(openai.BadRequestError) as caught:
            client.embeddings.create(input=inputs, model=MODEL)
        assert message in caught.value.message

    def test_float_and_base64_give_the_same_vectors(self, client: openai.OpenAI) -> None:
        as_float = client.embeddings.create(
            input=["a", "b"], model=MODEL, dimensions=64, encoding_format="float"
        )
        as_base64 = client.embeddings.create(input=["a", "b"], model=MODEL, dimensions=64)
        for left, right in zip(as_float.data, as_base64.data, strict=True):
            assert len(left.embedding) == 64
            np.testing.assert_allclose(left.embedding, right.embedding, rtol=1e-6)
        assert as_float.usage.total_tokens == 2

    def test_dimensions_are_refused_for_models_without_them(self, client: openai.OpenAI) -> None:
        with pytest.raises(openai.BadRequestError) as caught:
            client.embeddings.create(input=["a"], model="text-embedding-ada-002", dimensions=256)
        assert "does not support specifying dimensions" in caught.value.message

    def test_rate_limit_headers_are_sent(self, client: openai.OpenAI) -> None:
        raw = client.embeddings.with_raw_response.create(input=["a"], model=MODEL)
        for kind in ("tokens", "requests"):
            assert int(raw.headers[f"x-ratelimit-remaining-{kind}"]) > 0
            assert int(raw.headers[f"x-ratelimit-limit-{kind}"]) > 0


def test_the_sdk_is_imported_with_the_first_request_not_with_the_embedder(
    fake: FakeOpenAI,
) -> None:
    """A command that makes the embedder for its model and size but embeds nothing (`ingest
    run` of unchanged files) does not pay the SDK's import (~0.4-0.65 s)."""
    code = (
        "import sys\n"
        "from shared.pipeline.embed import make_embedder\n"
        "from shared.settings import Settings\n"
        f"settings = Settings(embedding_provider='openai', openai_base_url={fake.base_url!r},"
        " openai_api_key='sk-test', redis_url=None)\n"
        "embedder = make_embedder(settings)\n"
        "print('before', 'openai' in sys.modules)\n"
        "print('vectors', len(embedder.embed(['knie']).vectors))\n"
        "print('after', 'openai' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["before", "False", "vectors", "1", "after", "True"]


def test_the_stand_in_runs_as_its_own_process_for_workers_and_benchmarks() -> None:
    command = [
        sys.executable,
        "-m",
        "tests.support.fakes.openai_server",
        "--port",
        "0",
        "--tpm",
        "50000",
    ]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        result = OpenAIEmbedder(api_key="sk-test", base_url=base_url).embed(["Over knieën."])
        with urllib.request.urlopen(base_url.removesuffix("/v1") + "/_fake/requests") as answer:
            log = json.load(answer)["requests"]
        assert [(r["status"], r["tokens"]) for r in log] == [(200, result.tokens)]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_stand_in_answers_a_keep_alive_client_without_a_delayed_ack_stall(
    fake: FakeOpenAI,
) -> None:
    """With Nagle's algorithm on its socket, the body waited for the client's delayed ACK of
    the headers: at least 40 ms a request (Linux's minimum), which benchmarks counted as ours."""
    embedder = embedder_for(fake)
    embedder.embed(["warm-up: the connection is opened and kept"])
    took = []
    for n in range(15):
        started = time.perf_counter()
        embedder.embed([f"vraag {n}"])
        took.append(time.perf_counter() - started)
    assert sorted(took)[len(took) // 2] < 0.030
