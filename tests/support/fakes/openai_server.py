"""A stand-in for the OpenAI embeddings API: a real HTTP server on 127.0.0.1, standard library.

It speaks `POST /v1/embeddings` as the API does: the same limits answered with the same kind of
400s, `dimensions` and `encoding_format` (float, and base64, which the SDK asks for by default),
deterministic unit vectors seeded from the input, `usage` counted with cl100k_base, and
`x-ratelimit-*` headers. Tests can make it slow, make the next N requests answer 429 (with
Retry-After), 500 or `insufficient_quota`, and have it enforce a tokens-per-minute budget the way
the API does (a token bucket that starts full). It records every request.

Standalone: `python -m tests.support.fakes.openai_server --port 8765 --latency 0.3 --tpm 1000000`
prints its base URL and serves until interrupted; `GET /_fake/requests` returns its request log.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.fakes.openai_batches import FakeBatches, Outcome
from tests.support.fakes.openai_rules import (
    MODELS,
    ApiError,
    answer,
    parse_body,
    validate,
    vector_for,
)

__all__ = ["MODELS", "FakeOpenAI", "Outcome", "RecordedRequest", "vector_for"]

# Limits reported when no budget is enforced: large, so a client's limiter never waits on them.
NOMINAL_TPM = 100_000_000
NOMINAL_RPM = 1_000_000


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the stand-in saw it, and how it answered."""

    at: float
    status: int
    inputs: int
    tokens: int
    model: str | None
    dimensions: int | None
    encoding_format: str | None
    error_type: str | None = None


class _Bucket:
    """The API's per-minute budget: starts full, refills continuously."""

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.level = float(per_minute)
        self.stamp = time.monotonic()

    def refill(self) -> None:
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.capacity / 60)
        self.stamp = now

    def seconds_until(self, amount: float) -> float:
        return max(amount - self.level, 0.0) * 60 / self.capacity


def _duration(seconds: float) -> str:
    """The API's reset format: "20ms", "1.5s", "6m0s"."""
    if seconds < 1:
        return f"{int(seconds * 1000)}ms"
    if seconds < 60:
        return f"{seconds:.3g}s"
    return f"{int(seconds // 60)}m{int(seconds % 60)}s"


@dataclass(frozen=True)
class _Answer:
    body: Any


class FakeOpenAI:
    """The stand-in server. Use as a context manager, or `start()` and `stop()`."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        tokens_per_minute: int | None = None,
        requests_per_minute: int | None = None,
        shuffle_data: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.shuffle_data = shuffle_data
        self._lock = threading.Lock()
        self._tokens = _Bucket(tokens_per_minute) if tokens_per_minute else None
        self._requests_bucket = _Bucket(requests_per_minute) if requests_per_minute else None
        self._scripted: deque[ApiError | _Answer] = deque()
        self._log: list[RecordedRequest] = []
        self._arrived = 0
        self._address = (host, port)
        self._server: ThreadingHTTPServer | None = None
        #: `/v1/files` and `/v1/batches` (the Batch API): see `openai_batches`.
        self.batches = FakeBatches()
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _Server(self._address, handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the stand-in first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # --- controls ----------------------------------------------------------------------------
    def fail_next(self, n: int, status: int = 500) -> None:
        """The next `n` requests answer `status` with a server error body."""
        error = ApiError(
            status,
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
        )
        with self._lock:
            self._scripted.extend([error] * n)

    def rate_limit_next(self, n: int, retry_after: float = 1.0) -> None:
        """The next `n` requests answer 429 with `Retry-After: <retry_after>`."""
        error = ApiError(
            429,
            f"Rate limit reached. Please try again in {retry_after}s.",
            "tokens",
            "rate_limit_exceeded",
            headers={"retry-after": f"{retry_after:g}"},
        )
        with self._lock:
            self._scripted.extend([error] * n)

    def quota_exhausted_next(self, n: int) -> None:
        """The next `n` requests answer 429 `insufficient_quota`, as an account without credit."""
        error = ApiError(
            429,
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            "insufficient_quota",
        )
        with self._lock:
            self._scripted.extend([error] * n)

    def answer_next(self, body: Any) -> None:
        """The next request answers 200 with `body` (a malformed answer, for the tests)."""
        with self._lock:
            self._scripted.append(_Answer(body))

    # --- what happened -----------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    def statuses(self) -> list[int]:
        return [r.status for r in self.requests]

    def count(self, status: int) -> int:
        return sum(1 for r in self.requests if r.status == status)

    def arrived(self) -> int:
        """Requests received so far, answered or still in flight (`requests` holds answers)."""
        with self._lock:
            return self._arrived

    def tokens_accepted(self) -> int:
        return sum(r.tokens for r in self.requests if r.status == 200)

    # --- the API -----------------------------------------------------------------------------
    def handle(self, headers: dict[str, str], raw_body: bytes) -> tuple[int, dict[str, str], Any]:
        """Answer one `POST /v1/embeddings`: (status, headers, JSON body)."""
        with self._lock:
            self._arrived += 1
        if self.latency:
            time.sleep(self.latency)  # simulated processing time, not synchronisation
        body: dict[str, Any] = {}
        inputs: list[Any] = []
        tokens = 0
        try:
            if not headers.get("authorization", "").startswith("Bearer "):
                raise ApiError(401, "You didn't provide an API key.", "invalid_request_error")
            body = parse_body(raw_body)
            with self._lock:
                scripted = self._scripted.popleft() if self._scripted else None
            if isinstance(scripted, _Answer):
                self._record(200, body, 0, 0)
                return 200, self._limit_headers(), scripted.body
            if scripted is not None:
                raise scripted
            inputs, counts, model, dimensions, fmt = validate(body)
            tokens = sum(counts)
            limit_headers = self._take_budget(tokens, model)
            reply = answer(inputs, model, dimensions, fmt, tokens, self.shuffle_data)
            self._record(200, body, len(inputs), tokens)
            return 200, limit_headers, reply
        except ApiError as error:
            extra = {**self._limit_headers(), **error.headers}
            self._record(error.status, body, len(inputs), tokens, error.type)
            return error.status, extra, error.body

    def _take_budget(self, tokens: int, model: str) -> dict[str, str]:
        with self._lock:
            for bucket, amount, kind in (
                (self._tokens, tokens, "tokens"),
                (self._requests_bucket, 1, "requests"),
            ):
                if bucket is None:
                    continue
                bucket.refill()
                if bucket.level < amount:
                    wait = bucket.seconds_until(amount)
                    unit = "TPM" if kind == "tokens" else "RPM"
                    raise ApiError(
                        429,
                        f"Rate limit reached for {model} on {kind} per min ({unit}): Limit "
                        f"{int(bucket.capacity)}, Used {int(bucket.capacity - bucket.level)}, "
                        f"Requested {amount}. Please try again in {wait:.3f}s.",
                        kind,
                        "rate_limit_exceeded",
                        headers={
                            "retry-after-ms": str(int(wait * 1000) + 1),
                            "retry-after": str(int(wait) + 1),
                        },
                    )
            for bucket, amount in ((self._tokens, tokens), (self._requests_bucket, 1)):
                if bucket is not None:
                    bucket.level -= amount
            return self._limit_headers_locked()

    def _limit_headers(self) -> dict[str, str]:
        with self._lock:
            return self._limit_headers_locked()

    def _limit_headers_locked(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for bucket, kind, nominal in (
            (self._tokens, "tokens", NOMINAL_TPM),
            (self._requests_bucket, "requests", NOMINAL_RPM),
        ):
            if bucket is None:
                limit, remaining, reset = nominal, nominal, 0.0
            else:
                bucket.refill()
                limit, remaining = int(bucket.capacity), max(int(bucket.level), 0)
                reset = bucket.seconds_until(bucket.capacity)
            headers[f"x-ratelimit-limit-{kind}"] = str(limit)
            headers[f"x-ratelimit-remaining-{kind}"] = str(remaining)
            headers[f"x-ratelimit-reset-{kind}"] = _duration(reset)
        return headers

    def _record(
        self,
        status: int,
        body: dict[str, Any],
        inputs: int,
        tokens: int,
        error_type: str | None = None,
    ) -> None:
        entry = RecordedRequest(
            time.monotonic(),
            status,
            inputs,
            tokens,
            body.get("model"),
            body.get("dimensions"),
            body.get("encoding_format"),
            error_type,
        )
        with self._lock:
            self._log.append(entry)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body go out in two writes; with Nagle's algorithm the body waits
    # for the client to ACK the headers, which a keep-alive client delays by 40 ms: every
    # request then took ~45 ms instead of ~4 (`embed` in bench/search.py). The API answers
    # without such a stall, so neither does the stand-in.
    disable_nagle_algorithm = True
    fake: FakeOpenAI

    def do_GET(self) -> None:
        """`GET /_fake/requests`: the request log, for tests and benchmarks in other processes."""
        if self._batch_api("GET", b""):
            return
        if self.path.rstrip("/") != "/_fake/requests":
            self._send(404, {}, {"error": {"message": f"Unknown path {self.path}"}})
            return
        log = [
            {"at": r.at, "status": r.status, "inputs": r.inputs, "tokens": r.tokens}
            for r in self.fake.requests
        ]
        self._send(200, {}, {"requests": log})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        if self._batch_api("POST", raw):
            return
        if self.path.rstrip("/") != "/v1/embeddings":
            self._send(
                404,
                {},
                {
                    "error": {
                        "message": f"Unknown path {self.path}",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
            return
        headers = {key.lower(): value for key, value in self.headers.items()}
        status, extra, body = self.fake.handle(headers, raw)
        self._send(status, extra, body)

    def _batch_api(self, method: str, raw: bytes) -> bool:
        """Answer `/v1/files...` and `/v1/batches...`; False for any other path."""
        path = self.path.split("?")[0].rstrip("/")
        if not path.startswith(("/v1/files", "/v1/batches")):
            return False
        headers = {key.lower(): value for key, value in self.headers.items()}
        if not headers.get("authorization", "").startswith("Bearer "):
            error = ApiError(401, "You didn't provide an API key.", "invalid_request_error")
            self._send(401, {}, error.body)
            return True
        status, body = self.fake.batches.route(method, path, headers, raw)
        if isinstance(body, bytes):
            self.fake.batches.wait_if_stalled()
        if isinstance(body, bytes) and self.fake.batches.take_break():
            self.send_response(status)
            self.send_header("content-type", "application/octet-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])  # half of it, then the connection closes
            self.wfile.flush()
            self.close_connection = True
            return True
        self._send(status, {}, body)
        return True

    def _send(self, status: int, headers: dict[str, str], body: Any) -> None:
        binary = isinstance(body, bytes)
        payload = body if binary else json.dumps(body).encode()
        self.send_response(status)
        self.send_header(
            "content-type", "application/octet-stream" if binary else "application/json"
        )
        self.send_header("content-length", str(len(payload)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `FakeOpenAI.requests` instead of access logs."""


def main() -> None:
    import os
    from pathlib import Path

    cache = Path(__file__).resolve().parents[4] / "shared" / "tiktoken-cache"
    if cache.is_dir():
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache))
    parser = argparse.ArgumentParser(description="Stand-in for the OpenAI embeddings API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    parser.add_argument("--tpm", type=int, default=None, help="tokens-per-minute budget")
    parser.add_argument("--rpm", type=int, default=None, help="requests-per-minute budget")
    args = parser.parse_args()
    fake = FakeOpenAI(
        latency=args.latency,
        tokens_per_minute=args.tpm,
        requests_per_minute=args.rpm,
        host=args.host,
        port=args.port,
    )
    fake.start()
    print(fake.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
