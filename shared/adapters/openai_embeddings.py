"""The OpenAI embedder: full requests, one shared rate limiter, our own retry loop, usage counted.

The SDK runs with `max_retries=0` and the retry loop is ours, because the SDK's loop would retry
a 429 `insufficient_quota` (which never heals by waiting) and hide the response headers the
limiter learns from. Any OpenAI-compatible server works through `base_url`.

A rate-limit answer (429, not `insufficient_quota`) asks us to wait, it is not a failure: it
is waited out (its `Retry-After`) up to `RATE_LIMITED_WAITS` times per allowed retry, apart
from the `max_retries` that errors and timeouts get: counted together, a burst of 429s after
a few 500s would use up one request's retries and fail every page of its batch.

The SDK (~0.4-0.65 s to import: its hundreds of response types) is imported with the first
request, not with this module: a command that builds an embedder for its model and size but
embeds nothing (`ingest run` of unchanged files, the index build) never pays it.
"""

from __future__ import annotations

import base64
import binascii
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from shared.errors import PermanentError, TransientError
from shared.metrics import EMBEDDING_REQUESTS, EMBEDDING_RETRIES, EMBEDDING_TOKENS
from shared.pipeline.embed.base import EmbedResult, check_inputs, pack_batches
from shared.ratelimit import LocalRateLimiter, RateLimiter
from shared.tokens import encode_all

if TYPE_CHECKING:
    import openai

logger = logging.getLogger("shared.embed")

QUOTA_MESSAGE = (
    "The OpenAI account has run out of credit (insufficient_quota). Add credit, then re-ingest."
)
#: Rate-limit answers waited out per allowed retry (`max_retries`): 0 retries, 0 waits.
RATE_LIMITED_WAITS = 4
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_DURATION_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """How long the API asks us to wait: `retry-after-ms`, `retry-after` (seconds or a date),
    else the `x-ratelimit-reset-*` durations ("1.5s", "6m0s"); None when it does not say."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(float(value) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            return max(float(value), 0.0)
        except ValueError:
            try:
                return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
            except (TypeError, ValueError):
                pass
    resets = [
        _parse_duration(headers.get(name))
        for name in ("x-ratelimit-reset-tokens", "x-ratelimit-reset-requests")
    ]
    known = [seconds for seconds in resets if seconds is not None]
    return max(known) if known else None


def _parse_duration(value: str | None) -> float | None:
    if not value:
        return None
    parts = _DURATION_PART.findall(value)
    if not parts:
        return None
    return sum(float(number) * _DURATION_SECONDS[unit] for number, unit in parts)


def _vector(embedding: str | list[float]) -> list[float]:
    """One embedding: base64 of little-endian float32 (as asked), or a JSON list of floats."""
    if isinstance(embedding, str):
        vector: list[float] = np.frombuffer(base64.b64decode(embedding), dtype="<f4").tolist()
        return vector
    return [float(value) for value in embedding]


def _api_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) else exc.message


class OpenAIEmbedder:
    """Embeds through `POST /v1/embeddings`, packing inputs to the API's limits."""

    name = "openai"

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        model: str = "text-embedding-3-large",
        dimensions: int = 1536,
        batch_size: int = 2048,
        max_request_tokens: int = 300_000,
        max_input_tokens: int = 8192,
        max_retries: int = 8,
        timeout_seconds: float = 60.0,
        limiter: RateLimiter | None = None,
        backoff_base_seconds: float = 0.5,
        backoff_max_seconds: float = 30.0,
        max_wait_seconds: float = 120.0,
        query_retries: int = 2,
        query_timeout_seconds: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not api_key and not base_url:
            raise PermanentError(
                "OPENAI_API_KEY is not set; set it, or unset EMBEDDING_PROVIDER to use the "
                "offline hashing embedder.",
                code="embedding_not_configured",
            )
        self.model = model
        self.dimensions = dimensions
        self.batch_size = min(batch_size, 2048)
        self.max_request_tokens = max_request_tokens
        self.max_input_tokens = max_input_tokens
        self.max_retries = max_retries
        self._limiter = limiter or LocalRateLimiter(1_000_000, 3_000)
        self._backoff_base = backoff_base_seconds
        self._backoff_max = backoff_max_seconds
        self._max_wait = max_wait_seconds
        self.query_retries = query_retries
        self.query_timeout = query_timeout_seconds
        self._sleep = sleep
        self._options: dict[str, Any] = {
            "api_key": api_key or "no-key",
            "base_url": base_url,
            "max_retries": 0,
            "timeout": timeout_seconds,
        }
        self._sdk: openai.OpenAI | None = None
        self._sdk_lock = threading.Lock()  # requests go out from several threads at once

    @property
    def _client(self) -> openai.OpenAI:
        """The SDK's client, made (and the SDK imported) with the first request."""
        if self._sdk is None:
            with self._sdk_lock:
                if self._sdk is None:
                    import openai

                    self._sdk = openai.OpenAI(**self._options)
        return self._sdk

    def embed_query(self, inputs: list[str]) -> EmbedResult:
        """A search's question: a person waits for the answer, so at most `query_retries`
        retries, each request `query_timeout_seconds` and no wait longer than that, instead of
        the stages' patience (`max_retries` with backoff: ~90 s before giving up)."""
        return self.embed(inputs, retries=self.query_retries, timeout=self.query_timeout)

    def embed(
        self, inputs: list[str], *, retries: int | None = None, timeout: float | None = None
    ) -> EmbedResult:
        """Vectors for `inputs` in order. A text that occurs twice is sent (and paid) once."""
        if not inputs:
            return EmbedResult(vectors=[], tokens=0, requests=0)
        unique = list(dict.fromkeys(inputs))
        counted = encode_all(unique)
        tokens_of = {text: len(ids) for text, ids in zip(unique, counted, strict=True)}
        check_inputs(inputs, [tokens_of[text] for text in inputs], self.max_input_tokens)
        counts = [tokens_of[text] for text in unique]

        vector_of: dict[str, list[float]] = {}
        tokens = requests = 0
        for batch in pack_batches(counts, self.batch_size, self.max_request_tokens):
            texts = [unique[i] for i in batch]
            vectors, used, sent = self._send(texts, sum(counts[i] for i in batch), retries, timeout)
            vector_of.update(zip(texts, vectors, strict=True))
            tokens += used
            requests += sent
        return EmbedResult(vectors=[vector_of[t] for t in inputs], tokens=tokens, requests=requests)

    def _send(
        self, texts: Sequence[str], tokens: int, retries: int | None, timeout: float | None
    ) -> tuple[list[list[float]], int, int]:
        """One request with retries: (vectors, tokens billed, requests sent)."""
        retries = self.max_retries if retries is None else retries
        client = self._client if timeout is None else self._client.with_options(timeout=timeout)
        failure = ""
        failures = waits = 0  # errors against max_retries; rate-limit answers waited out
        import openai  # imported by `_client` already: the exception types

        # `dimensions` exists only from text-embedding-3 on; older models have a fixed size.
        sized = self.model.startswith("text-embedding-3")
        dimensions: int | openai.Omit = self.dimensions if sized else openai.omit
        while True:
            self._limiter.acquire(tokens, 1)
            try:
                raw = client.embeddings.with_raw_response.create(
                    input=list(texts),
                    model=self.model,
                    encoding_format="base64",  # 4 bytes a float instead of ~20 in JSON
                    dimensions=dimensions,
                )
            except openai.RateLimitError as exc:
                self._limiter.observe_headers(exc.response.headers)
                if "insufficient_quota" in (exc.code, exc.type):
                    EMBEDDING_REQUESTS.labels(self.model, "error").inc()
                    raise PermanentError(QUOTA_MESSAGE, code="embedding_quota") from None
                reason, wait = "rate_limited", retry_after_seconds(exc.response.headers)
                failure = f"429 {_api_message(exc)}"
            except openai.APIStatusError as exc:
                if exc.status_code < 500 and exc.status_code != 408:
                    EMBEDDING_REQUESTS.labels(self.model, "error").inc()
                    raise PermanentError(
                        f"The embeddings API refused the request ({exc.status_code}): "
                        f"{_api_message(exc)}",
                        code="embedding_rejected",
                    ) from None
                reason, wait = "server_error", retry_after_seconds(exc.response.headers)
                failure = f"{exc.status_code} {_api_message(exc)}"
            except openai.APITimeoutError:
                reason, wait, failure = "timeout", None, "no answer within the timeout"
            except openai.APIConnectionError as exc:
                reason, wait, failure = "timeout", None, f"connection failed ({exc.message})"
            else:
                self._limiter.observe_headers(raw.headers)
                vectors, used = self._read(raw.http_response.content, len(texts), tokens)
                EMBEDDING_REQUESTS.labels(self.model, "ok").inc()
                EMBEDDING_TOKENS.labels(self.model).inc(used)
                return vectors, used, failures + waits + 1
            if reason == "rate_limited" and waits < RATE_LIMITED_WAITS * retries:
                waits += 1
                delay = self._delay(waits - 1, wait, timeout)
                logger.warning("Embedding request rate limited (%s); waiting %.2fs", failure, delay)
            elif failures < retries:
                failures += 1
                delay = self._delay(failures - 1, wait, timeout)
                logger.warning(
                    "Embedding request failed (%s); retry %d of %d in %.2fs",
                    failure,
                    failures,
                    self.max_retries,
                    delay,
                )
            else:
                break
            EMBEDDING_REQUESTS.labels(self.model, "retry").inc()
            EMBEDDING_RETRIES.labels(self.model, reason).inc()
            self._sleep(delay)
        EMBEDDING_REQUESTS.labels(self.model, "error").inc()
        raise TransientError(
            f"The embeddings API failed {failures + waits + 1} times in a row (last: {failure}); "
            "the embedding stage will be tried again later.",
            code="embedding_unavailable",
        )

    def _delay(self, attempt: int, asked: float | None, cap: float | None = None) -> float:
        """Seconds before the next try: what the API asked (plus up to 20% jitter so a fleet
        does not return at one instant), else exponential backoff with jitter; at most `cap`."""
        if asked is not None:
            return min(asked * random.uniform(1.0, 1.2), cap or self._max_wait)
        ceiling = min(cap or self._backoff_max, self._backoff_base * 2**attempt)
        return random.uniform(ceiling / 2, ceiling)

    def _read(self, body: bytes, expected: int, estimate: int) -> tuple[list[list[float]], int]:
        """The vectors of an answer, in input order, and the tokens billed. Read here (orjson,
        numpy) rather than through the SDK's response models, which cost more CPU than the
        rest of the embed stage for a full request."""
        try:
            answer = orjson.loads(body)
            data = sorted(answer["data"], key=lambda item: item["index"])
            vectors = [_vector(item["embedding"]) for item in data]
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, binascii.Error):
            raise PermanentError(
                "The embeddings API answered something that is not a list of embeddings.",
                code="embedding_invalid_response",
            ) from None
        if len(vectors) != expected:
            raise PermanentError(
                f"The embeddings API answered {len(vectors)} vectors for {expected} inputs.",
                code="embedding_invalid_response",
            )
        wrong = next((v for v in vectors if len(v) != self.dimensions), None)
        if wrong is not None:
            raise PermanentError(
                f"The model {self.model} returned vectors of {len(wrong)} dimensions, "
                f"not the configured {self.dimensions} (EMBEDDING_DIMENSIONS).",
                code="embedding_dimensions",
            )
        usage = answer.get("usage") or {}
        used = int(usage.get("total_tokens") or 0) or estimate
        return vectors, used
