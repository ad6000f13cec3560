"""`ingest serve`'s runner: the pipeline in the API's own process, in the background, without a
broker (the app without `REDIS_URL` uses it; `api.app` wires it to the routes' enqueue points).

A route commits, then calls `wake()` and answers 202 at once. The runner's thread takes every
version waiting (`repo.waiting_for_work`: received, or left in a stage with no live lease) and
runs the in-process scheduler of `ingest run` over them (`run_local`, the same steps as the
Celery tasks), purges deleted documents (the `ingest.delete` step), runs the reaper's round
every `REAPER_INTERVAL_SECONDS` (the functions Celery beat's `ingest.reap` calls). Then it
waits for the next wake-up, or `SERVE_POLL_SECONDS`.

At the end of every round it calls the index's `build_aside()`: on the embedded store that
starts the HNSW build in a child process when one is due (10,000 points, then every 5,000 new
ones) and swaps a finished one in. Never `build()` here: Qdrant Edge holds the GIL for the
whole build (96 s at 20,000 points, 11 minutes at 100,000), and every request of this process
would wait that long (`shared.adapters.edge_build`; docs/benchmarks.md, "Issue 30").

One thread does all of it, so one client touches the embedded index at a time (the API's
searches aside), and nothing runs twice. `stop()` (the app's shutdown, SIGTERM) lets the step
in flight finish for up to `SERVE_STOP_SECONDS`, then gives back every lease the runner still
holds: the next start takes those versions where they stand.
"""

from __future__ import annotations

import threading
import time
import uuid

from shared import repository as repo
from shared.db import transaction
from shared.log import get_logger
from shared.models import utcnow
from shared.pipeline.in_process import give_back_leases, run_local
from shared.pipeline.reaper import reap
from shared.pipeline.steps import delete_document
from shared.pipeline.wiring import embedder, index_for
from shared.settings import Settings, get_settings

log = get_logger(__name__)
#: The runner's lease owner: not `ingest run`'s (`in_process.OWNER`), so a run beside the
#: server on one database (a Qdrant server, Postgres) keeps its versions to itself.
OWNER = "serve"


class Runner:
    """The background runner of one process (see the module's docstring)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_reap = 0.0

    def wake(self, _committed: uuid.UUID | None = None) -> None:
        """Something was committed (an upload, a webhook, a delete, a reingest, new fields):
        look now. Takes the id the routes' enqueue points pass, and needs none of it."""
        self._wake.set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="ingest-runner", daemon=True)
        self._thread.start()

    def stop(self) -> bool:
        """Stop after the step in flight (waiting `SERVE_STOP_SECONDS` at most) and give back
        the leases still held. True when the thread ended in time."""
        self._stop.set()
        self._wake.set()
        ended = True
        if self._thread is not None:
            self._thread.join(self._settings.serve_stop_seconds)
            ended = not self._thread.is_alive()
        if not ended:
            log.warning("the runner's step did not finish in time; its versions are given back")
        try:
            give_back_leases(count_attempts=False, owner=OWNER)  # a clean stop: no attempt
        except Exception as exc:  # a database gone at shutdown: the next start gives them back
            log.warning("could not give back the runner's leases", error=repr(exc))
        return ended

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()  # a wake-up during the round makes the wait below end at once
            try:
                self.round()
            except Exception as exc:  # a database or index down: the next round tries again
                log.warning("the runner's round failed; it tries again", error=repr(exc))
            self._wake.wait(self._settings.serve_poll_seconds)

    def round(self) -> None:
        """Everything waiting now, once: the reaper when due, deletes, then the versions."""
        if time.monotonic() >= self._next_reap:
            self._next_reap = time.monotonic() + self._settings.reaper_interval_seconds
            reap(
                lambda _version, _stage: self.wake(),
                self.wake,
                self._settings,
                enqueue_relabel=self.wake,
            )
        give_back_leases(owner=OWNER)  # a killed process's, or what a failed round left
        with transaction() as session:
            deletes = repo.unpurged_documents(session, utcnow())
            waiting = repo.waiting_for_work(session)
        for document_id in deletes:
            if self._stop.is_set():
                return
            delete_document(document_id, actor=OWNER)  # a busy one waits for the next round
        if waiting and not self._stop.is_set():
            log.info("processing versions waiting", versions=len(waiting))
            run_local(waiting, stop=self._stop, owner=OWNER)
        if not self._stop.is_set():
            settings = get_settings()  # the steps' own: one cached index and embedder
            index_for(settings, embedder(settings)).build_aside()
