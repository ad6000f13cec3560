"""The Celery app, configured from the settings (`celery -A worker.app worker`).

Reliability settings, so that a lost worker loses no work: late acks, requeue on a lost
worker, prefetch 1, a Redis visibility timeout above the longest task, time limits, JSON only,
and task events for Flower.
Queues are split by kind of work so each scales on its own: `cpu` (convert, chunk) and `io`
(embed, upsert, finalize, delete, reap), and `ocr` (the conversion of a PDF with scanned
pages, which convert hands over: seconds a page, so a long scan never holds up small pages).
On the embedded default (no `REDIS_URL`) tasks run in-process.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

from celery import Celery
from celery.signals import worker_init

from shared.settings import Settings, get_settings

CPU_QUEUE = "cpu"
IO_QUEUE = "io"
OCR_QUEUE = "ocr"

ROUTES = {
    "ingest.convert": {"queue": CPU_QUEUE},
    "ingest.chunk": {"queue": CPU_QUEUE},
    "ingest.embed": {"queue": IO_QUEUE},
    "ingest.upsert": {"queue": IO_QUEUE},
    "ingest.finalize": {"queue": IO_QUEUE},
    "ingest.relabel": {"queue": IO_QUEUE},
    "ingest.delete": {"queue": IO_QUEUE},
    "ingest.reap": {"queue": IO_QUEUE},
    "ingest.ocr": {"queue": OCR_QUEUE},
    # The batch re-index writes to Qdrant (local Qdrant: only the io worker may open it).
    "ingest.reindex_poll": {"queue": IO_QUEUE},
    "ingest.reindex_batch": {"queue": IO_QUEUE},
    "ingest.reindex_cancel": {"queue": IO_QUEUE},
}


def transport_options(settings: Settings) -> dict[str, float]:
    """Redis gives a killed worker's unacknowledged message back once it is older than the
    visibility timeout, but kombu only looks every `unacked_restore_interval` x
    `unacked_restore_throttle` (10 x 10 s): with a short timeout a lost task waited 100 s
    more. The sweep runs every tenth of the timeout, between 10 and 100 s (kombu's default)."""
    timeout = settings.visibility_timeout_seconds
    return {
        "visibility_timeout": timeout,
        "unacked_restore_interval": min(10.0, max(1.0, timeout / 100)),
        "unacked_restore_throttle": 10,
    }


def configure(app: Celery, settings: Settings) -> Celery:
    """Apply the settings to `app` (tests call this again after changing the environment)."""
    app.conf.update(
        broker_url=settings.redis_url or "memory://",
        broker_transport_options=transport_options(settings),
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=5,
        # Sending a chain must fail fast when the broker is down: the reaper sends it later.
        task_publish_retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.5},
        task_serializer="json",
        accept_content=["json"],
        result_serializer="json",
        task_ignore_result=True,  # Postgres is the record of where each document stands
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_soft_time_limit=settings.task_soft_time_limit_seconds,
        task_time_limit=settings.task_time_limit_seconds,
        worker_send_task_events=True,
        task_send_sent_event=True,
        task_routes=ROUTES,
        task_default_queue=IO_QUEUE,
        task_always_eager=settings.eager,
        task_eager_propagates=True,
        worker_hijack_root_logger=False,
        beat_schedule={
            "reap": {"task": "ingest.reap", "schedule": float(settings.reaper_interval_seconds)},
            "reindex-poll": {
                "task": "ingest.reindex_poll",
                "schedule": float(settings.reindex_poll_interval_seconds),
            },
        },
    )
    # Celery caches its broker connection and producer pools from the first broker URL and
    # has no public way to drop them (`app.close()` also deregisters the app): drop them here so
    # a changed `broker_url` takes effect. At start-up nothing is pooled yet.
    app._pool = None  # type: ignore[attr-defined]  # private, not in celery-types
    app.amqp._producer_pool = None  # type: ignore[attr-defined]  # private, as above
    return app


app = configure(
    Celery("ingest", include=["worker.tasks", "worker.reaping", "worker.reindexing"]),
    get_settings(),
)


@worker_init.connect
def _survive_a_broker_loss(sender: Any, **_: Any) -> None:
    """A worker consumes through kombu's Redis transport mended to survive losing its broker
    while it holds messages (`worker.broker`). Set here, before the worker connects, so only
    workers use it: the API and beat hold no messages, and Flower reads the broker's kind from
    the connection's URL scheme, which a transport path would replace."""
    if get_settings().redis_url:
        sender.app.conf.broker_transport = "worker.broker:Transport"


@worker_init.connect
def _import_the_embedding_sdk(**_: Any) -> None:
    """The OpenAI SDK takes about a second to import: a worker pays it at boot (before prefork
    forks its children), not in its first task; the CLI and the hashing embedder never do."""
    if get_settings().use_openai:
        importlib.import_module("openai")


@worker_init.connect
def _load_the_tokenizer(**_: Any) -> None:
    """tiktoken's vocabulary takes a few hundred milliseconds to load: loaded once at boot,
    before prefork forks, instead of in every child's first chunk task. If it cannot be loaded
    here, the first task says why (a retryable error)."""
    from shared.errors import TransientError
    from shared.tokens import encoding

    with contextlib.suppress(TransientError):
        encoding()


def unsafe_setup(settings: Settings, queues: set[str], pool: object, concurrency: object) -> str:
    """Why this worker would lose documents, in one line that says what to do; "" if safe.

    The embedded index (`QDRANT_PATH`, Qdrant Edge) locks its folder to one process: an `io`
    worker with several prefork processes fails its versions with `qdrant_locked`. One process
    with `-P threads` is allowed (Edge is safe across threads)."""
    if settings.qdrant_url or settings.qdrant_path == ":memory:" or IO_QUEUE not in queues:
        return ""
    name = pool if isinstance(pool, str) else getattr(pool, "__module__", "")
    processes = name in ("prefork", "processes") or name.endswith(".prefork")
    several = not isinstance(concurrency, int) or concurrency > 1
    if not (processes and several):
        return ""
    return (
        f"refusing to start: the index folder (QDRANT_PATH={settings.qdrant_path}) is locked "
        f"to one process, and this worker would consume the `{IO_QUEUE}` queue with {concurrency} "
        "prefork processes; use `-P threads` (one process, e.g. `-P threads -c 4`), or a "
        "Qdrant server (QDRANT_URL)."
    )


@worker_init.connect
def _refuse_unsafe_setups(sender: Any = None, **_: Any) -> None:
    queues = sender.app.amqp.queues
    consumed = set(queues.consume_from or queues)
    why = unsafe_setup(get_settings(), consumed, sender.pool_cls, sender.concurrency)
    if why:
        raise SystemExit(why)  # not an Exception: Celery's signal dispatch lets it through


# Celery signal receivers: our log format and task ids; the worker's /metrics.
from worker import logging_hooks, metrics_hooks  # noqa: E402, F401
