"""The in-process scheduler (`ingest run`, the embedded default): the same steps as the Celery
tasks, run in this process, with conversion and chunking overlapping the embedding requests.

This thread converts and chunks the versions a group at a time (each version with its own
moves, events and lease; the group shares two transactions); a second thread takes every
version ready for embedding at that moment as one batch (embed in full requests, several in
flight, then upsert and finalize) and comes back for the next. While a batch waits on the API
the next one fills up, so requests stay full without waiting for the last document. Only the
second thread writes the index (`ingest run` builds its search index afterwards: `build()`).

There are no retries here: what a step could not finish ends `failed`, retryable (run the
command again).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence

from shared import repository as repo
from shared.db import transaction
from shared.log import get_logger
from shared.pipeline.convert import Ocr
from shared.pipeline.failures import fail_version, give_up
from shared.pipeline.steps import (
    Outcome,
    chunk_versions,
    convert_versions,
    embed_versions,
    finalize_versions,
    relabel_versions,
    upsert_versions,
)
from shared.settings import Settings, get_settings

log = get_logger(__name__)
#: The lease owner of `ingest run`; `ingest serve`'s runner has its own (`background`), so
#: one never gives back or takes over the other's versions when both use one database.
OWNER = "cli"
#: Pages converted and chunked together: two transactions and a few statements per group
#: instead of two transactions and ten statements per page. Small enough that the embedding
#: thread gets work early and often.
GROUP = 8
HINT = "see the output of the ingest command"


class _Ready:
    """Versions chunked and waiting for the embedding thread."""

    def __init__(self) -> None:
        self._ids: list[uuid.UUID] = []
        self._closed = False
        self._changed = threading.Condition()

    def add(self, version_ids: Sequence[uuid.UUID]) -> None:
        with self._changed:
            self._ids += version_ids
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


def _settled(outcome: Outcome, owner: str) -> list[uuid.UUID]:
    """What goes on from a step; what met an error ends `failed` (retryable), what another
    live holder has is left to it (the summary counts it as not finished)."""
    if outcome.retry and outcome.error is not None:
        give_up(outcome.retry, outcome.error, owner, HINT)
    if outcome.busy:
        log.warning(
            "versions wait for another holder",
            version_ids=[str(v) for v in outcome.busy],
        )
    return outcome.go_on


def _embed_upsert_finalize(
    ready: _Ready, settings: Settings, stop: threading.Event, owner: str
) -> None:
    while (batch := ready.take()) is not None and not stop.is_set():
        try:
            ids = _settled(
                embed_versions(batch, owner, settings, take_waiting=False, handover_from=owner),
                owner,
            )
            ids = _settled(upsert_versions(ids, owner, settings, handover_from=owner), owner)
            _settled(finalize_versions(ids, owner, settings, handover_from=owner), owner)
        except Exception as exc:  # one batch's failure must not stop the others
            log.warning("a batch could not be indexed", error=repr(exc))
            give_up(batch, exc, owner, HINT)


def _convert_and_chunk(group: list[uuid.UUID], settings: Settings, owner: str) -> list[uuid.UUID]:
    """Convert and chunk the group (each version's two moves in one transaction for all); a
    version an earlier run left converted only is chunked now. The ids ready to embed."""
    outcome = convert_versions(group, owner, settings, ocr=Ocr.RUN, then_chunk=True)
    ready = _settled(outcome, owner)
    leftover = [v for v in ready if v not in outcome.done]
    if leftover:  # past convert already: chunked here unless past chunking too
        ready = [v for v in ready if v in outcome.done]
        ready += _settled(chunk_versions(leftover, owner, settings, handover_from=owner), owner)
    return ready


def run_local(
    version_ids: Sequence[uuid.UUID],
    progress: Callable[[uuid.UUID], None] = lambda _: None,
    stop: threading.Event | None = None,
    owner: str = OWNER,
) -> None:
    """Take the versions through the pipeline here; returns when all have left it, or soon
    after `stop` is set (`ingest serve` shutting down): the group and the batch in flight
    finish their step, the rest is left where it stands, its leases still `owner`'s (the
    caller gives them back)."""
    stop = stop or threading.Event()
    settings = get_settings()
    give_back_leases(owner=owner)
    with transaction() as session:
        relabels = repo.metadata_versions_among(session, version_ids)
    if relabels:  # fields only: their points' payloads, before the embedding thread opens Qdrant
        _settled(relabel_versions(sorted(relabels), owner, settings), owner)
        for version_id in relabels:
            progress(version_id)
        version_ids = [v for v in version_ids if v not in relabels]
    ready = _Ready()
    embedding = threading.Thread(
        target=_embed_upsert_finalize, args=(ready, settings, stop, owner), name="embedding"
    )
    embedding.start()
    try:
        for start in range(0, len(version_ids), GROUP):
            if stop.is_set():
                break
            group = list(version_ids[start : start + GROUP])
            try:
                ready.add(_convert_and_chunk(group, settings, owner))
            except Exception as exc:  # the group's own transactions failed: page by page
                log.warning("a group could not be converted together", error=repr(exc))
                for version_id in group:
                    try:
                        ready.add(_convert_and_chunk([version_id], settings, owner))
                    except Exception as alone:
                        give_up([version_id], alone, owner, HINT)
            for version_id in group:
                progress(version_id)
    except BaseException:  # Ctrl-C: the batch being embedded finishes, nothing more starts
        stop.set()
        raise
    finally:
        ready.close()
        embedding.join()


def give_back_leases(count_attempts: bool = True, owner: str = OWNER) -> None:
    """Every `ingest run` holds its leases as `OWNER` (`ingest serve`'s runner as its own
    owner), one run at a time (the embedded index locks its folder to one process), so leases
    `owner` still holds when a run starts are a killed run's, or the ones a stopped run left
    (`stop`). Given back, or a version superseded by
    this run's registration would keep its document's new version waiting in `upserting`
    until that lease ran out (finalize waits for other versions still held).

    A lease left behind means the process died (or a round failed) working on that version:
    one attempt (`count_attempts`; not for a clean stop), and a version that used up
    `MAX_ATTEMPTS` ends `failed` (`stuck`, as the reaper ends it on Celery) instead of taking
    the process down again at every start."""
    settings = get_settings()
    with transaction() as session:
        released = repo.release_owner(session, owner, count_attempt=count_attempts)
    if released:
        log.info("gave back the leases an earlier run left", versions=len(released))
    for version_id, stage, attempts in released:
        if count_attempts and attempts >= settings.max_attempts:
            message = (
                f"Processing stopped in the {stage} stage {attempts} times without finishing. "
                "An operator should check the logs; re-ingest the document to try again."
            )
            fail_version(version_id, code="stuck", message=message, retryable=True, actor=owner)
