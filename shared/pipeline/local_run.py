"""The embedded default's pipeline (`ingest run`): the same stages, run in this process, with
conversion and chunking overlapping the embedding requests.

This thread converts and chunks one version after another; a second thread takes every version
ready for embedding at that moment as one batch (embed in full requests, several in flight,
then upsert and finalize) and comes back for the next. While a batch waits on the API the next
one fills up, so requests stay full without waiting for the last document. Only the second
thread touches Qdrant (local mode locks its folder to one client).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence

from shared.errors import IngestError
from shared.log import get_logger
from shared.pipeline import batches, stages
from shared.pipeline.failures import fail_version
from shared.settings import get_settings

log = get_logger(__name__)
OWNER = "cli"


def _fail(version_ids: Sequence[uuid.UUID], error: BaseException) -> None:
    """What could not finish here ends `failed` with the reason (retryable: run it again)."""
    code = error.code if isinstance(error, IngestError) else "internal_error"
    message = error.message if isinstance(error, IngestError) else str(error)
    for version_id in version_ids:
        fail_version(version_id, code=code, message=message, retryable=True, actor=OWNER)


class _Ready:
    """Versions chunked and waiting for the embedding thread."""

    def __init__(self) -> None:
        self._ids: list[uuid.UUID] = []
        self._closed = False
        self._changed = threading.Condition()

    def add(self, version_id: uuid.UUID) -> None:
        with self._changed:
            self._ids.append(version_id)
            self._changed.notify()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify()

    def take(self) -> list[uuid.UUID] | None:
        """Everything ready now (waiting until something is); None when all is done."""
        with self._changed:
            self._changed.wait_for(lambda: self._ids or self._closed)
            if not self._ids:
                return None
            taken, self._ids = self._ids, []
            return taken


def _embed_upsert_finalize(ready: _Ready) -> None:
    settings = get_settings()
    while (batch := ready.take()) is not None:
        try:
            outcome = batches.embed_versions(batch, OWNER, settings, take_waiting=False)
            outcome = batches.upsert_versions(outcome.go_on, OWNER, settings, handover_from=OWNER)
            batches.finalize_versions(outcome.go_on, OWNER, settings, handover_from=OWNER)
        except Exception as exc:  # one batch's failure must not stop the others
            log.warning("a batch could not be indexed", error=repr(exc))
            _fail(batch, exc)


def run_local(
    version_ids: Sequence[uuid.UUID], progress: Callable[[uuid.UUID], None] = lambda _: None
) -> None:
    """Take the versions through the pipeline here; returns when all have left it."""
    ready = _Ready()
    embedding = threading.Thread(target=_embed_upsert_finalize, args=(ready,), name="embedding")
    embedding.start()
    try:
        for version_id in version_ids:
            try:
                # Converted and chunked in one go (DONE); an earlier run may have left it
                # converted only (SKIPPED): chunk it then.
                outcome = stages.convert_version(version_id, OWNER, then_chunk=True)
                if outcome is stages.Outcome.SKIPPED:
                    outcome = stages.chunk_version(version_id, OWNER)
                if outcome in (stages.Outcome.DONE, stages.Outcome.SKIPPED):
                    ready.add(version_id)
            except Exception as exc:
                _fail([version_id], exc)
            progress(version_id)
    finally:
        ready.close()
        embedding.join()
