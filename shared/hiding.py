"""Hide a document or one chunk from search, or show it again (issue 29).

The record changes first (Postgres: the document's columns or `hidden_chunks`, with an event
naming who and why), then, after the commit, the `hidden` payload of the document's current
points in Qdrant (no re-embedding). Every search leaves out what the record hides as well as
points marked `hidden` (`retrieval.search`), so a hide holds even when the index cannot be
reached now (local Qdrant held by a worker): the next upsert of the document writes the
field from the record (`indexing.points_for`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from shared import repository as repo
from shared.db import transaction
from shared.log import get_logger
from shared.pipeline import wiring
from shared.settings import Settings

log = get_logger(__name__)


class NoSuchChunk(LookupError):
    """The document's current version has no chunk with this index or point id."""


@dataclass(frozen=True)
class HideResult:
    document_id: uuid.UUID
    hidden: bool
    chunk: repo.ChunkTarget | None
    index_updated: bool  # False: the record changed, Qdrant's payload follows later


def set_document_hidden(
    document_id: uuid.UUID,
    hidden: bool,
    actor: str | None,
    reason: str | None,
    settings: Settings,
) -> HideResult | None:
    """Hide or show a whole document; None when there is no such (undeleted) document."""
    with transaction() as session:
        document = repo.set_document_hidden(session, document_id, hidden, actor, reason)
        if document is None:
            return None
        points = repo.current_point_ids_of(session, document_id)
        chunks_hidden = repo.hidden_points_of(session, [document_id])
    if hidden:
        changes = {True: points}
    else:  # its own hidden chunks stay hidden
        changes = {
            False: [p for p in points if p not in chunks_hidden],
            True: [p for p in points if p in chunks_hidden],
        }
    return HideResult(document_id, hidden, None, _update_index(settings, changes))


def set_chunk_hidden(
    document_id: uuid.UUID,
    ref: str,
    hidden: bool,
    actor: str | None,
    reason: str | None,
    settings: Settings,
) -> HideResult | None:
    """Hide or show one chunk of the current version, by index or point id; None when there
    is no such document, `NoSuchChunk` when it has no such chunk."""
    with transaction() as session:
        found = repo.get_document(session, document_id)
        if found is None or found[0].deleted_at is not None:
            return None
        document = found[0]
        chunk = repo.find_current_chunk(session, document, ref)
        if chunk is None:
            raise NoSuchChunk(ref)
        repo.set_chunk_hidden(session, document_id, chunk, hidden, actor, reason)
        visible = not hidden and document.hidden_at is None
    updated = _update_index(settings, {not visible: [chunk.point_id]})
    return HideResult(document_id, hidden, chunk, updated)


def _update_index(settings: Settings, changes: dict[bool, list[uuid.UUID]]) -> bool:
    """Set the `hidden` payload of these points; False (and a log line) if the index could
    not be reached: search still leaves out what the record hides."""
    try:
        index = wiring.index_for(settings, wiring.embedder(settings))
        for value, ids in changes.items():
            index.set_hidden(ids, value)
    except Exception as exc:  # local Qdrant held by a worker, a server down
        log.warning("could not update the index's hidden field", error=repr(exc))
        return False
    return True
