"""The worker's Prometheus endpoint: embedding tokens, requests and retries (`shared.metrics`).

Served on `WORKER_METRICS_PORT` (0: off) by the worker's main process once it is ready. The
counters are counted where the embed stage runs: in the main process with a threads or solo
pool, in the children with prefork. For prefork set `PROMETHEUS_MULTIPROC_DIR` (prometheus
client's own variable, read when it is imported, so it belongs in the environment) to an empty
folder: the children write their counts there and this endpoint sums them. The folder is
emptied when the worker starts, before its pool does.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from celery.signals import worker_init, worker_ready
from prometheus_client import REGISTRY, CollectorRegistry, multiprocess, start_http_server

from shared.log import get_logger
from shared.settings import get_settings

log = get_logger(__name__)
MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"


@worker_init.connect
def _empty_multiprocess_folder(**_: Any) -> None:
    folder = os.environ.get(MULTIPROC_DIR)
    if folder and get_settings().worker_metrics_port:
        shutil.rmtree(folder, ignore_errors=True)  # counts of an earlier run of this worker
        Path(folder).mkdir(parents=True, exist_ok=True)


@worker_ready.connect
def _serve_metrics(**_: Any) -> None:
    settings = get_settings()
    if not settings.worker_metrics_port:
        return
    registry = REGISTRY
    if os.environ.get(MULTIPROC_DIR):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    start_http_server(settings.worker_metrics_port, settings.worker_metrics_host, registry)
    log.info(
        "metrics served",
        url=f"http://{settings.worker_metrics_host}:{settings.worker_metrics_port}/metrics",
        multiprocess=registry is not REGISTRY,
    )
