"""Use cases at the edge of the domain: hand a document in, remove one.

Entry points (API, webhook, CLI) call these with an `enqueue` callable from the worker side
(ports and adapters: `shared` never imports `worker`). The version row and its bytes are
committed first; the chain is sent only after the commit. If sending fails (broker down) the
version stays `received` and the reaper sends it later, so an accepted document is never lost.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shared import repository as repo
from shared.db import transaction
from shared.documents import METADATA, NewVersion
from shared.log import get_logger
from shared.states import Status

log = get_logger(__name__)

Enqueue = Callable[[uuid.UUID], Any]


def send_after_commit(enqueue: Enqueue, committed_id: uuid.UUID, kind: str = "version_id") -> bool:
    """Send the task for a committed version (its chain) or document (its delete, with
    `kind="document_id"`); False and a log line naming it if the broker refused: the reaper
    sends it later."""
    try:
        enqueue(committed_id)
    except Exception as exc:  # any broker error
        log.warning(
            "could not send the task; the reaper will send it later",
            **{kind: str(committed_id)},
            error=repr(exc),
        )
        return False
    return True


def submit(new: NewVersion, enqueue: Enqueue, relabel: Enqueue | None = None) -> repo.Registered:
    """Register a version (one transaction), then send its chain if it has work to do."""
    return submit_many([new], enqueue, relabel)[0]


def _send(registered: repo.Registered, enqueue: Enqueue, relabel: Enqueue | None) -> None:
    """A version with work to do to its first task: a content version's chain, a metadata
    version's relabel (`relabel`; without one, `enqueue` takes it: `ingest run` collects
    the ids and runs each kind's step itself)."""
    if registered.status is Status.RECEIVED:
        send = relabel if registered.kind == METADATA and relabel is not None else enqueue
        send_after_commit(send, registered.version_id)
    if registered.relabel_id is not None:
        send_after_commit(relabel or enqueue, registered.relabel_id)


def submit_many(
    news: list[NewVersion], enqueue: Enqueue, relabel: Enqueue | None = None
) -> list[repo.Registered]:
    """Register several versions in ONE transaction (all or none), then send their chains
    (a metadata version, the same bytes with other fields: its relabel).

    Documents are locked in a fixed order so two concurrent uploads never deadlock.
    """
    order = sorted(range(len(news)), key=lambda i: (news[i].source, news[i].external_id))
    registered: list[repo.Registered | None] = [None] * len(news)
    with transaction() as session:
        for i in order:
            registered[i] = repo.register_version(session, news[i])
    done = [r for r in registered if r is not None]
    for item in done:
        _send(item, enqueue, relabel)
    return done


def update_fields(
    document_id: uuid.UUID, given: dict[str, Any], relabel: Enqueue, actor: str | None = None
) -> repo.Registered | None:
    """Set the document's fields named in `given` (PATCH): a change is a metadata version,
    sent to its relabel after the commit; the values already there change nothing
    (`unchanged`, no version). None: no such document, or deleted."""
    with transaction() as session:
        registered = repo.register_field_changes(session, document_id, given, actor)
    if registered is not None:
        _send(registered, relabel, relabel)
    return registered


def remove(
    document_id: uuid.UUID, enqueue_delete: Callable[[uuid.UUID], Any], actor: str | None = None
) -> bool:
    """Mark a document deleted now (it leaves listings at once), then remove its points.

    False when there is no such document. If the delete task cannot be sent, the reaper
    sends it later (the document stays marked deleted but not yet purged).
    """
    with transaction() as session:
        if not repo.mark_document_deleted(session, document_id, actor):
            return False
    send_after_commit(enqueue_delete, document_id, "document_id")
    return True


def reingest(
    document_id: uuid.UUID, enqueue: Enqueue, actor: str | None = None
) -> repo.Registered | None:
    """Send the document's latest bytes through the pipeline again, even if unchanged."""
    with transaction() as session:
        latest = repo.latest_version(session, document_id)
        if latest is None:
            return None
        document = latest.document
        new = NewVersion(
            source=document.source,
            external_id=document.external_id,
            content=latest.content,
            sha256=latest.sha256,
            media_type=latest.media_type,
            filename=latest.filename,
            content_url=None if latest.content else latest.content_url,
            uploaded_by=actor,
            force=True,
        )
    return submit(new, enqueue)


# --- CMS deliveries ---------------------------------------------------------------------


@dataclass(frozen=True)
class Delivery:
    """What a CMS delivery did: nothing (a duplicate), a version, or a removal."""

    duplicate: bool
    registered: repo.Registered | None = None
    removed_document_id: uuid.UUID | None = None


def submit_delivery(
    new: NewVersion,
    delivery_id: str,
    event: str,
    enqueue: Enqueue,
    relabel: Enqueue | None = None,
) -> Delivery:
    """A publish/update: the delivery id and the version are committed together, so a
    retried delivery (same id) registers nothing."""
    with transaction() as session:
        if not repo.record_delivery(session, delivery_id, event):
            return Delivery(duplicate=True)
        registered = repo.register_version(session, new)
        repo.complete_delivery(session, delivery_id, registered.document_id, registered.version_id)
    _send(registered, enqueue, relabel)
    return Delivery(duplicate=False, registered=registered)


def remove_delivery(
    source: str,
    external_id: str,
    delivery_id: str,
    event: str,
    enqueue_delete: Callable[[uuid.UUID], Any],
    actor: str | None = None,
) -> Delivery:
    """An unpublish/delete: mark the document deleted with the delivery in one transaction,
    then send the delete of its points (the reaper re-sends it if the broker is down)."""
    with transaction() as session:
        if not repo.record_delivery(session, delivery_id, event):
            return Delivery(duplicate=True)
        document = repo.document_by_identity(session, source, external_id)
        if document is None:
            return Delivery(duplicate=False)
        repo.mark_document_deleted(session, document.id, actor)
        repo.complete_delivery(session, delivery_id, document.id, None)
        document_id = document.id
    send_after_commit(enqueue_delete, document_id, "document_id")
    return Delivery(duplicate=False, removed_document_id=document_id)
