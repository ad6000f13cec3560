"""`/metrics` for Prometheus: the API's HTTP traffic, and the pipeline's state read from
Postgres at scrape time (documents by status, tokens spent, failures by error code, average
stage durations). Postgres is the record, so any API replica reports the same figures; the
workers' own counters live in `shared.metrics`.

Each app gets its own registry, so several apps in one process (tests) never collide.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.health import dependency_checks
from api.problems import ApiProblem
from shared import repository as repo
from shared.db import transaction
from shared.models import utcnow
from shared.settings import Settings

log = logging.getLogger(__name__)

#: (stage label, column it starts at, column it ends at), for average stage durations.
STAGES = (
    ("queued", 0, 1),
    ("convert", 1, 2),
    ("chunk", 2, 3),
    ("embed", 3, 4),
    ("upsert", 4, 5),
    ("total", 0, 5),
)
RECENT_VERSIONS = 500

router = APIRouter(tags=["health"])


class HttpMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "ingest_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "ingest_http_request_duration_seconds",
            "Time to answer an HTTP request, by method and route template.",
            ["method", "route"],
            registry=registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
        )


class HttpMetricsMiddleware:
    """Counts every request by its route template (`/v1/documents/{document_id}`), not its
    path, so ids never explode the label set."""

    def __init__(self, app: ASGIApp, metrics: HttpMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.latency.labels(method, template).observe(time.perf_counter() - started)


class PipelineCollector(Collector):
    """One short read-only transaction per scrape; a database outage shows as `up 0`."""

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("ingest_database_up", "Whether the scrape could read Postgres.")
        try:
            with transaction() as session:
                by_status = repo.status_counts(session)
                tokens = repo.tokens_spent_total(session)
                failures = repo.failures_by_code(session)
                recent = repo.recent_stage_times(session, RECENT_VERSIONS)
                waiting_since = repo.oldest_waiting_since(session)
        except Exception as exc:
            log.warning("metrics scrape could not read the database: %r", exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up

        documents = GaugeMetricFamily(
            "ingest_documents", "Documents by status (their latest version's).", labels=["status"]
        )
        for status, count in sorted(by_status.items()):
            documents.add_metric([status], count)
        yield documents

        spent = CounterMetricFamily(
            "ingest_embedding_tokens_spent", "Embedding tokens spent, all versions."
        )
        spent.add_metric([], tokens)
        yield spent

        failed = GaugeMetricFamily(
            "ingest_failed_versions", "Versions that ended failed, by error code.", labels=["code"]
        )
        for code, count in sorted(failures.items()):
            failed.add_metric([code], count)
        yield failed

        yield _stage_averages(recent)

        oldest = GaugeMetricFamily(
            "ingest_oldest_waiting_seconds",
            "How long the oldest version no task holds has waited (0: nothing waits); alert "
            "when it grows: nothing is processing.",
        )
        waited = (utcnow() - waiting_since).total_seconds() if waiting_since else 0.0
        oldest.add_metric([], max(waited, 0.0))
        yield oldest


def _stage_averages(rows: list[Any]) -> GaugeMetricFamily:
    averages = GaugeMetricFamily(
        "ingest_stage_duration_seconds_avg",
        f"Average seconds per stage over the last {RECENT_VERSIONS} indexed versions.",
        labels=["stage"],
    )
    for stage, start, end in STAGES:
        spans = [
            (row[end] - row[start]).total_seconds()
            for row in rows
            if row[start] is not None and row[end] is not None
        ]
        if spans:
            averages.add_metric([stage], sum(spans) / len(spans))
    return averages


class DependencyCollector(Collector):
    """`ingest_dependency_up{dependency}`: the broker and the Qdrant server, probed at scrape
    time as `/readyz` probes them (they do not make the API unready; alert on this instead)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "ingest_dependency_up",
            "Whether the API reaches a dependency it does not need to take uploads.",
            labels=["dependency"],
        )
        for name, check in dependency_checks(self.settings).items():
            up.add_metric([name], 1 if check.ok else 0)
        yield up


class IndexBuildCollector(Collector):
    """`ingest serve` on the embedded index (it builds in a child process, minutes at 100,000
    points): `ingest_index_brute_force_points`, the points every search compares one by one
    until the next build, and `ingest_index_build_running`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def collect(self) -> Iterator[Metric]:
        from shared.pipeline import wiring

        try:
            index = wiring.index_for(self.settings, wiring.embedder(self.settings))
            state = index.build_state()
        except Exception as exc:  # a store out of reach: the dependency gauge says so
            log.warning("could not read the index's build state: %r", exc)
            return
        if state is None:
            return
        brute_force, running = state
        yield GaugeMetricFamily(
            "ingest_index_brute_force_points",
            "Points of the embedded index searched one by one until its next build.",
            value=brute_force,
        )
        yield GaugeMetricFamily(
            "ingest_index_build_running",
            "Whether the embedded index is being built (in a child process) now.",
            value=1 if running else 0,
        )


def new_registry(settings: Settings) -> tuple[CollectorRegistry, HttpMetrics]:
    registry = CollectorRegistry()
    registry.register(PipelineCollector())
    registry.register(DependencyCollector(settings))
    if not settings.redis_url and not settings.qdrant_url:  # `ingest serve` on Qdrant Edge
        registry.register(IndexBuildCollector(settings))
    return registry, HttpMetrics(registry)


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST.split(";")[0]: {}}}},
)
def metrics(request: Request) -> Response:
    """Open by default (a cluster-internal scrape); with `METRICS_KEY` set it asks for
    `Authorization: Bearer <METRICS_KEY>` (not an editors' key: Prometheus gets its own)."""
    settings: Settings = request.app.state.settings
    if settings.metrics_key is not None and not _metrics_key_matches(
        request.headers.get("authorization", ""), settings.metrics_key.get_secret_value()
    ):
        raise ApiProblem(
            401,
            "Send the METRICS_KEY as `Authorization: Bearer <key>` to read /metrics.",
            headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
        )
    registry: CollectorRegistry = request.app.state.metrics_registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


def _metrics_key_matches(authorization: str, key: str) -> bool:
    scheme, _, presented = authorization.partition(" ")
    digest = hashlib.sha256
    return scheme.lower() == "bearer" and hmac.compare_digest(
        digest(presented.strip().encode()).digest(), digest(key.encode()).digest()
    )
