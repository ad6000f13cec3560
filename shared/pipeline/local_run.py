"""The embedded default's pipeline (`ingest run`): the same stages, run in this process, with
conversion and chunking overlapping the embedding requests.

This thread converts and chunks the versions a group at a time (each version with its own
moves, events and lease; the group shares two transactions); a second thread takes every version
ready for embedding at that moment as one batch (embed in full requests, several in flight,
then upsert and finalize) and comes back for the next. While a batch waits on the API the next
one fills up, so requests stay full without waiting for the last document. Only the second
thread touches Qdrant (local mode locks its folder to one client).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from shared import repository as repo
from shared.db import transaction
from shared.errors import IngestError, PermanentError
from shared.log import get_logger
from shared.models import DocumentVersion
from shared.pipeline import batches, stages
from shared.pipeline.convert import Ocr, convert
from shared.pipeline.failures import fail_version
from shared.repository import prepare_batches
from shared.settings import Settings, get_settings
from shared.states import Status

log = get_logger(__name__)
OWNER = "cli"
#: Pages converted and chunked together: two transactions and a few statements per group
#: instead of two transactions and ten statements per page. Small enough that the embedding
#: thread gets work early and often.
GROUP = 8


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
            outcome = batches.finalize_versions(outcome.go_on, OWNER, settings, handover_from=OWNER)
            if outcome.busy:  # left where they are: the summary counts them as not finished
                log.warning(
                    "versions wait for another version of their document still held",
                    version_ids=[str(v) for v in outcome.busy],
                )
        except Exception as exc:  # one batch's failure must not stop the others
            log.warning("a batch could not be indexed", error=repr(exc))
            _fail(batch, exc)


def run_local(
    version_ids: Sequence[uuid.UUID], progress: Callable[[uuid.UUID], None] = lambda _: None
) -> None:
    """Take the versions through the pipeline here; returns when all have left it."""
    _give_back_a_killed_runs_leases()
    ready = _Ready()
    embedding = threading.Thread(target=_embed_upsert_finalize, args=(ready,), name="embedding")
    embedding.start()
    try:
        for start in range(0, len(version_ids), GROUP):
            group = list(version_ids[start : start + GROUP])
            try:
                alone = _convert_and_chunk_group(group, ready)
            except Exception as exc:  # the group's own transactions failed: page by page
                log.warning("a group could not be converted together", error=repr(exc))
                _give_back(group)
                alone = group
            for version_id in group:
                if version_id in alone:
                    _convert_and_chunk_alone(version_id, ready)
                progress(version_id)
    finally:
        ready.close()
        embedding.join()


def _give_back_a_killed_runs_leases() -> None:
    """Every `ingest run` holds its leases as `OWNER`, one run at a time (local Qdrant locks
    its folder to one process; two runs would share one owner anyway), so leases `OWNER`
    still holds when a run starts are a killed run's. Given back, or a version superseded by
    this run's registration would keep its document's new version waiting in `upserting`
    until that lease ran out (finalize waits for other versions still held)."""
    with transaction() as session:
        if released := repo.release_owner(session, OWNER):
            log.info("gave back the leases an earlier run left", versions=released)


def _give_back(version_ids: list[uuid.UUID]) -> None:
    """Release what this process still holds of a group, so each page can be claimed alone."""
    try:
        with transaction() as session:
            repo.release_batch(session, OWNER, version_ids)
    except Exception as exc:  # the pages' own claims will say what is wrong
        log.warning("could not give a group back", error=repr(exc))


def _convert_and_chunk_alone(version_id: uuid.UUID, ready: _Ready) -> None:
    """One page with the stage functions (a transaction per stage move)."""
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


def _convert_and_chunk_group(group: list[uuid.UUID], ready: _Ready) -> set[uuid.UUID]:
    """Convert and chunk a group of pages with two transactions for all: one claims them
    (each `received -> converting` with its event and lease), one stores every page's
    conversion and chunks with its two moves (`-> chunking -> embedding`, each with its event).
    A page that fails fails alone, as in its own stage; the ids left to take one at a time
    (not `received`: an earlier run's; or if the group's last transaction failed)."""
    settings = get_settings()
    with transaction() as session:
        versions = prepare_batches.start_converting(
            session, OWNER, batches.lease_for(settings), group
        )
    taken = [version.id for version in versions]
    outputs: dict[uuid.UUID, dict[str, Any]] = {}
    chunks: dict[uuid.UUID, list[dict[str, Any]]] = {}
    described: dict[uuid.UUID, dict[str, Any]] = {}
    beat = {"at": time.monotonic()}

    def keep_leases() -> None:  # OCR takes seconds a page: keep the group's leases meanwhile
        if time.monotonic() - beat["at"] >= stages.heartbeat_interval(settings):
            with transaction() as session:
                repo.heartbeat_batch(session, OWNER, taken, batches.lease_for(settings))
            beat["at"] = time.monotonic()

    for version in versions:
        try:
            outputs[version.id], chunks[version.id], described[version.id] = _converted(
                settings, version, keep_leases
            )
        except PermanentError as exc:
            fail_version(version.id, code=exc.code, message=exc.message, actor=OWNER)
        except Exception as exc:  # as a stage's transient error: given back, then failed
            with transaction() as session:
                repo.release(session, version.id, OWNER)
            _fail([version.id], exc)
    try:
        with transaction() as session:
            moved = prepare_batches.finish_converting(session, OWNER, outputs)
            for version in versions:
                if version.id in moved:
                    repo.describe_document(session, version.document_id, described[version.id])
            repo.replace_chunks_of(session, {v: chunks[v] for v in moved})
            done = repo.finish_batch(session, Status.CHUNKING, OWNER, moved)
            repo.release_batch(session, OWNER, [v for v in outputs if v not in done])
    except Exception:
        _give_back(list(outputs))
        raise
    for version_id in done:
        ready.add(version_id)
    return set(group) - set(taken)


def _converted(
    settings: Settings, version: DocumentVersion, keep_leases: Callable[[], None]
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """A page's conversion columns (with its chunk count), chunk rows and document facts."""
    converted = convert(
        version.content,
        version.media_type,
        version.filename,
        language=version.document.language,
        ocr=Ocr.RUN,
        progress=keep_leases,
    )
    ctx = stages.StageContext(version.id, OWNER, settings, version.document_id, None, version)
    rows, described = stages.chunk_conversion(
        ctx,
        version.document_id,
        converted,
        converted.metadata,
        version.document.language,
        version.allow_empty,
    )
    output = stages.conversion_output(converted) | {"chunk_count": len(rows)}
    return output, rows, described
