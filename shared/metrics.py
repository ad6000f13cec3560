"""Prometheus counters of the embed stage, served by an `io` worker on `WORKER_METRICS_PORT`
(`worker/metrics_hooks.py`); the API's `/metrics` has its own registry (`api/metrics.py`)."""

from __future__ import annotations

from prometheus_client import Counter

EMBEDDING_TOKENS = Counter(
    "ingest_embedding_tokens_total",
    "Tokens billed by the embeddings API (from its `usage`), per model.",
    ["model"],
)
EMBEDDING_REQUESTS = Counter(
    "ingest_embedding_requests_total",
    "Requests sent to the embeddings API, by outcome: ok, retry (429/5xx/timeout), error.",
    ["model", "outcome"],
)
EMBEDDING_RETRIES = Counter(
    "ingest_embedding_retries_total",
    "Embedding requests retried, by reason: rate_limited, server_error, timeout.",
    ["model", "reason"],
)
EMBEDDING_BATCH_TOKENS = Counter(
    "ingest_embedding_batch_tokens_total",
    "Tokens billed through the Batch API (`ingest reindex --batch`, from each answered line's "
    "`usage`), per model.",
    ["model"],
)
EMBEDDING_BATCH_LINES = Counter(
    "ingest_embedding_batch_lines_total",
    "Batch API request lines read back, by outcome: ok, failed (then sent to the embeddings API).",
    ["model", "outcome"],
)
