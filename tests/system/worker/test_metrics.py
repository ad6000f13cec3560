"""A worker serves its embedding counters on WORKER_METRICS_PORT (real worker, stand-in):
from its threads, or summed over its prefork children through PROMETHEUS_MULTIPROC_DIR."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from shared.states import Status
from tests.support.pipeline import PipelineEnv
from tests.support.workers import free_port, wait_for

PAGE = "# Knee surgery\n\n" + "\n\n".join(
    f"## Step {n}\n\nThe physiotherapist shows you exercise {n}." for n in range(1, 6)
)


@pytest.mark.parametrize("pool", ["threads", "prefork"])
def test_a_worker_serves_its_embedding_counters(
    pipeline: PipelineEnv, pool: str, tmp_path: Path
) -> None:
    port = free_port()
    pipeline.env["WORKER_METRICS_PORT"] = str(port)
    if pool == "prefork":
        stale = tmp_path / "prometheus" / "counter_99999.db"
        stale.parent.mkdir()
        stale.write_bytes(b"left by an earlier run")  # the worker empties the folder first
        pipeline.env["PROMETHEUS_MULTIPROC_DIR"] = str(stale.parent)
    url = f"http://127.0.0.1:{port}/metrics"

    def scrape() -> str | None:
        try:
            response = httpx.get(url, timeout=2)
        except httpx.TransportError:
            return None
        return response.text if response.status_code == 200 else None

    with pipeline.worker(pool=pool, concurrency=1):
        wait_for(lambda: scrape() is not None, timeout=30, what="the worker's /metrics")
        done = pipeline.wait_done(pipeline.submit(PAGE.encode(), "knee.md").version_id)
        text = scrape() or ""

    assert done.status == Status.INDEXED, done.error_message
    model = pipeline.env["EMBEDDING_MODEL"]
    tokens = re.search(rf'^ingest_embedding_tokens_total\{{model="{model}"\}} (\S+)$', text, re.M)
    assert tokens and float(tokens.group(1)) == done.tokens_spent > 0
    requests = re.search(
        rf'^ingest_embedding_requests_total\{{model="{model}",outcome="ok"\}} (\S+)$', text, re.M
    )
    assert requests and float(requests.group(1)) == len(pipeline.fake.requests) >= 1
