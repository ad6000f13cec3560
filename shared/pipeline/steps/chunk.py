"""The chunk step: Markdown -> chunks (H1, H2, paragraphs; 350/450/70 tokens), stored with
their point ids, every version's chunks and move in one transaction."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.db import transaction
from shared.documents import described_fields
from shared.errors import PermanentError
from shared.models import DocumentVersion
from shared.pipeline import indexing
from shared.pipeline.chunk import ChunkSettings, chunk_markdown, front_matter, normalise
from shared.pipeline.convert import Converted
from shared.pipeline.steps.runner import Holding, Outcome, lease_for, log_done
from shared.settings import Settings, get_settings
from shared.states import Status

#: What chunking a version gives: its chunk rows, and what it says about the document.
Chunked = tuple[list[dict[str, Any]], dict[str, Any]]


def chunk_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    handover_from: str | None = None,
) -> Outcome:
    """Chunk the versions' conversions; those chunked go on to embed under this owner's
    leases (`handover`)."""
    settings = settings or get_settings()
    with transaction() as session:
        claim = repo.claim(
            session,
            Status.CHUNKING,
            owner,
            lease_for(settings),
            version_ids,
            handover_from=handover_from,
        )
        outcome = Outcome(go_on=sorted(claim.past), stopped=sorted(claim.held | claim.gone))
        versions = repo.versions_with(session, list(claim.claimed), "markdown", "document")
    if not claim.claimed:
        return outcome
    chunked: dict[uuid.UUID, Chunked] = {}
    with Holding(owner, settings, claim.claimed, outcome) as held:
        for version in versions:
            with held.each(version.id):
                chunked[version.id] = chunk_stored_conversion(settings, version)
        with held.finishing() as session:
            moved = save_chunks(session, owner, claim.claimed, chunked, keep_lease=True)
            held.close(session, handed_on=moved)
    log_done(Status.CHUNKING, claim.claimed, moved)
    outcome.moved(moved)
    outcome.stopped += [v for v in chunked if v not in moved]
    outcome.handover = owner
    return outcome


def save_chunks(
    session: Session,
    owner: str,
    documents: dict[uuid.UUID, uuid.UUID],
    chunked: dict[uuid.UUID, Chunked],
    *,
    keep_lease: bool,
) -> list[uuid.UUID]:
    """Store the versions' chunks and what they say about their documents, and move them
    `chunking -> embedding`; the ids that moved."""
    for version_id, (_, described) in chunked.items():
        repo.describe_document(session, documents[version_id], described)
    repo.replace_chunks_of(session, {v: rows for v, (rows, _) in chunked.items()})
    return repo.finish(
        session,
        Status.CHUNKING,
        owner,
        list(chunked),
        keep_lease=keep_lease,
        each={v: {"chunk_count": len(rows)} for v, (rows, _) in chunked.items()},
    )


def chunk_stored_conversion(settings: Settings, version: DocumentVersion) -> Chunked:
    """`chunk_conversion` of the conversion stored on the version (its Markdown, page starts
    and OCR facts; loaded with its document)."""
    conversion = version.conversion or {}
    converted = Converted(
        markdown=version.markdown or "",
        page_starts=[(int(a), int(b)) for a, b in version.page_starts or []],
        ocr=conversion.get("ocr"),
    )
    return chunk_conversion(settings, version, converted, conversion.get("metadata") or {})


def chunk_conversion(
    settings: Settings,
    version: DocumentVersion,
    converted: Converted,
    metadata: dict[str, Any],
) -> Chunked:
    """The chunk rows of a conversion, and what it says about the document. The language the
    uploader or the CMS gave (else the document's own) picks the chunks' lexical vectors. No
    chunks (a page of front matter only) where the indexed version has some fails
    `empty_document`, so that version stays, unless the request said it means to empty the
    document (`allow_empty`): then its old points go. A new page without text (nothing to
    lose) is indexed empty."""
    described = dict(metadata)
    described.update(front_matter(normalise(converted.markdown))[0])
    language = version.document.language or described_fields(described).get("language")
    chunks = chunk_markdown(converted.markdown, ChunkSettings.from_settings(settings))
    if not chunks and not version.allow_empty and _has_chunks(version.document_id):
        raise PermanentError(
            "The document has no text to index (only front matter, or nothing readable). "
            "The version in the index stays. To empty the document on purpose, send it with "
            "allow_empty=true (a key with the delete scope), or delete the document.",
            code="empty_document",
        )
    return indexing.chunk_rows(version.document_id, chunks, converted, language), described


def _has_chunks(document_id: uuid.UUID) -> bool:
    with transaction() as session:
        return repo.indexed_chunk_count(session, document_id) > 0
