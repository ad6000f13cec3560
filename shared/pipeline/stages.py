"""The pipeline's stages as plain functions over a version id: read input from the database,
do the work, write the output back, and move the state with a conditional UPDATE.

Each is safe to run twice (Celery with Redis delivers at least once): a stage claims the
version with a lease first and does nothing when the version is past the stage, superseded or
held by another live task. Celery tasks are thin wrappers over these; tests call them directly.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.adapters.fetch import fetch
from shared.db import transaction
from shared.documents import described_fields
from shared.errors import FrontMatterError, PermanentError
from shared.log import bind, get_logger
from shared.models import DocumentVersion
from shared.pipeline import indexing
from shared.pipeline.chunk import ChunkSettings, chunk_markdown, front_matter, normalise
from shared.pipeline.convert import Converted, Ocr, OcrNeeded, convert, detect_media_type
from shared.pipeline.failures import fail_version
from shared.settings import Settings, get_settings
from shared.states import TERMINAL, Status

log = get_logger(__name__)


class Outcome(StrEnum):
    DONE = "done"  # the stage ran; the chain goes on
    SKIPPED = "skipped"  # already done by an earlier delivery; the chain goes on
    BUSY = "busy"  # another live task holds the version: try again later
    STOPPED = "stopped"  # the version left the pipeline (failed, superseded): stop the chain
    NEEDS_OCR = "needs_ocr"  # convert found scanned pages: the `ocr` queue converts it


@dataclass(frozen=True)
class StageContext:
    version_id: uuid.UUID
    owner: str
    settings: Settings
    document_id: uuid.UUID | None = None
    collection: str | None = None  # the active Qdrant collection, read with the claim
    version: DocumentVersion | None = None  # the row, read with the claim (`load` columns too)

    def index(self) -> indexing.QdrantIndex:
        return indexing.index_for(self.settings, indexing.embedder(self.settings), self.collection)

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.settings.lease_seconds)

    def heartbeat(self) -> bool:
        """Extend the lease during long work; False if the version is no longer ours."""
        with transaction() as session:
            return repo.heartbeat(session, self.version_id, self.owner, self.lease)


def run_stage(
    stage: Status,
    version_id: uuid.UUID,
    owner: str,
    work: Callable[[StageContext], bool | None],
    settings: Settings | None = None,
    *,
    uses_index: bool = False,
    load: tuple[str, ...] = (),
) -> Outcome:
    """Claim `stage`, run `work`, and turn permanent errors into `failed` with their code.

    The claim's transaction also reads what every stage needs (the document id for the logs;
    the active collection when `uses_index`), so a stage pays for one round trip less.
    `work` returns False when it found the version taken from it (superseded) midway.
    Transient errors propagate, after the lease is given back, so the task can retry.
    """
    settings = settings or get_settings()
    with transaction() as session:
        claim = repo.claim_stage(
            session, version_id, stage, owner, timedelta(seconds=settings.lease_seconds)
        )
        if claim is repo.Claim.BUSY:
            return Outcome.BUSY
        version = repo.load_version(session, version_id, *load)
        if claim is repo.Claim.SKIP:
            gone = version is None or Status(version.status) in TERMINAL
            return Outcome.STOPPED if gone else Outcome.SKIPPED
        assert version is not None
        collection = (
            indexing.collection_for(session, settings, indexing.embedder(settings))
            if uses_index
            else None
        )
        ctx = StageContext(version_id, owner, settings, version.document_id, collection, version)
    with bind(document_id=ctx.document_id):  # on the stage's lines; the hook's are task-wide
        return _work_and_record(stage, ctx, work)


def _work_and_record(
    stage: Status, ctx: StageContext, work: Callable[[StageContext], bool | None]
) -> Outcome:
    try:
        kept = work(ctx)
    except PermanentError as exc:
        fail_version(ctx.version_id, code=exc.code, message=exc.message, actor=ctx.owner)
        return Outcome.STOPPED
    except OcrNeeded as needed:
        with transaction() as session:
            repo.release(session, ctx.version_id, ctx.owner)
        log.info("stage handed to the ocr queue", state=str(stage), pages=len(needed.pages))
        return Outcome.NEEDS_OCR
    except BaseException:
        with transaction() as session:
            repo.release(session, ctx.version_id, ctx.owner)
        raise
    if kept is False:
        with transaction() as session:
            repo.release(session, ctx.version_id, ctx.owner)
        log.info("stage stopped: the version was superseded", state=str(stage))
        return Outcome.STOPPED
    log.info("stage done", state=str(stage))
    return Outcome.DONE


# --- convert ---------------------------------------------------------------------------


HEARTBEAT_SECONDS = 30.0


def heartbeat_interval(settings: Settings) -> float:
    """How often long work (OCR) renews its lease: well before a short lease runs out."""
    return min(HEARTBEAT_SECONDS, settings.lease_seconds / 3)


def convert_version(
    version_id: uuid.UUID, owner: str, ocr: Ocr = Ocr.RUN, *, then_chunk: bool = False
) -> Outcome:
    """Bytes -> Markdown and page map (pypdf for PDFs), stored on the version.

    Scanned pages are read with OCR (`ocr`), or, with `Ocr.DEFER`, the stage gives the
    version back and answers NEEDS_OCR so the `ocr` queue converts it.
    `then_chunk` (the embedded default, where no queue sits between the two stages): chunk the
    conversion at once and store both with both moves in one transaction, keeping the lease
    from one stage to the next."""

    def work(ctx: StageContext) -> bool:
        version = ctx.version
        assert version is not None
        data, media_type, filename = version.content, version.media_type, version.filename
        url = version.content_url
        language = version.document.language
        if not data and url:
            data = fetch(
                url,
                max_bytes=ctx.settings.content_fetch_max_bytes,
                timeout=ctx.settings.content_fetch_timeout_seconds,
                allowed_hosts=ctx.settings.content_fetch_allowed_hosts,
            )
            media_type = detect_media_type(data, url)
            with transaction() as session:
                repo.save_fetched(
                    session,
                    ctx.version_id,
                    ctx.owner,
                    data,
                    hashlib.sha256(data).hexdigest(),
                    media_type,
                )
                version = repo.load_version(session, ctx.version_id)
                assert version is not None
                if repo.mark_fetched_unchanged(session, version, ctx.owner):
                    return True  # same bytes as the indexed version: nothing more to do
        beat = {"at": time.monotonic()}

        def progress() -> None:  # OCR takes seconds a page: keep the lease while it reads
            if time.monotonic() - beat["at"] >= heartbeat_interval(ctx.settings):
                ctx.heartbeat()
                beat["at"] = time.monotonic()

        converted = convert(
            data, media_type, filename, language=language, ocr=ocr, progress=progress
        )
        document_id = version.document_id
        chunked = (
            chunk_conversion(
                ctx, document_id, converted, converted.metadata, language, version.allow_empty
            )
            if then_chunk
            else None
        )
        # The conversion is written with the move (one UPDATE, under the same lease check).
        output = conversion_output(converted)
        with transaction() as session:
            if not repo.finish_stage(
                session,
                ctx.version_id,
                Status.CONVERTING,
                ctx.owner,
                values=output,
                keep_lease=chunked is not None,  # this task chunks it too
            ):
                return False
            return chunked is None or _save_chunks(session, ctx, document_id, *chunked)

    return run_stage(Status.CONVERTING, version_id, owner, work, load=("content", "document"))


def conversion_output(converted: Converted) -> dict[str, Any]:
    """The version's columns a conversion fills (written with the move out of `converting`)."""
    conversion = {"metadata": converted.metadata, "warnings": converted.warnings}
    try:  # refused front matter fails the version in the chunk stage, typed
        found = front_matter(normalise(converted.markdown))[0]
    except FrontMatterError:
        found = {}
    if found:  # once per version; chunk rows and points carry only the fields they index
        conversion["front_matter"] = found
    if converted.ocr:
        conversion["ocr"] = converted.ocr
    return {
        "markdown": converted.markdown,
        "page_starts": [list(pair) for pair in converted.page_starts],
        "conversion": conversion,
    }


# --- chunk -----------------------------------------------------------------------------


def chunk_version(version_id: uuid.UUID, owner: str) -> Outcome:
    """Markdown -> chunks (H1, H2, paragraphs; 350/450/70 tokens), stored with point ids."""

    def work(ctx: StageContext) -> bool:
        version = ctx.version
        assert version is not None
        chunked = chunk_stored_conversion(ctx, version)
        with transaction() as session:
            return _save_chunks(session, ctx, version.document_id, *chunked)

    return run_stage(Status.CHUNKING, version_id, owner, work, load=("markdown", "document"))


def chunk_stored_conversion(
    ctx: StageContext, version: DocumentVersion
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`chunk_conversion` of the conversion stored on the version (its Markdown, page starts
    and OCR facts; loaded with its document)."""
    conversion = version.conversion or {}
    converted = Converted(
        markdown=version.markdown or "",
        page_starts=[tuple(pair) for pair in version.page_starts or []],  # type: ignore[misc]
        ocr=conversion.get("ocr"),
    )
    return chunk_conversion(
        ctx,
        version.document_id,
        converted,
        conversion.get("metadata") or {},
        version.document.language,
        version.allow_empty,
    )


def chunk_conversion(
    ctx: StageContext,
    document_id: uuid.UUID,
    converted: Converted,
    metadata: dict[str, Any],
    language: str | None = None,
    allow_empty: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The chunk rows of a conversion, and what it says about the document. `language`: the
    one the uploader or the CMS gave (else the document's own, as `describe_document` keeps
    it), for the chunks' lexical vectors. No chunks (a page of front matter only) where the
    indexed version has some fails `empty_document`, so that version stays, unless the request
    said it means to empty the document (`allow_empty`): then its old points go. A new page
    without text (nothing to lose) is indexed empty as before."""
    described = dict(metadata)
    described.update(front_matter(normalise(converted.markdown))[0])
    language = language or described_fields(described).get("language")
    chunks = chunk_markdown(converted.markdown, ChunkSettings.from_settings(ctx.settings))
    if not chunks and not allow_empty and _has_chunks(document_id):
        raise PermanentError(
            "The document has no text to index (only front matter, or nothing readable). "
            "The version in the index stays. To empty the document on purpose, send it with "
            "allow_empty=true (a key with the delete scope), or delete the document.",
            code="empty_document",
        )
    return indexing.chunk_rows(document_id, chunks, converted, language), described


def _has_chunks(document_id: uuid.UUID) -> bool:
    with transaction() as session:
        return repo.indexed_chunk_count(session, document_id) > 0


def _save_chunks(
    session: Session,
    ctx: StageContext,
    document_id: uuid.UUID,
    rows: list[dict[str, Any]],
    described: dict[str, Any],
) -> bool:
    repo.describe_document(session, document_id, described)
    repo.replace_chunks(session, ctx.version_id, rows, count=False)
    return repo.finish_stage(
        session, ctx.version_id, Status.CHUNKING, ctx.owner, values={"chunk_count": len(rows)}
    )


# --- embed, upsert, finalize: over batches of versions, in shared.pipeline.batches --------


# --- delete -------------------------------------------------------------------------------


def delete_document(document_id: uuid.UUID, actor: str | None = None) -> Outcome:
    """Remove the points of a document marked deleted (safe to repeat).

    The delete was recorded when it was sent (`ingest.remove`); this task only purges. When a
    newer publish has registered the document again in between (`deleted_at` cleared), that
    publish was sent last and wins: the late task changes nothing, and the new version's
    finalize removes the old points.
    """
    settings = get_settings()
    with transaction() as session:
        if not repo.document_still_deleted(session, document_id):
            log.info("delete skipped: the document was published again after it", actor=actor)
            return Outcome.STOPPED
        if repo.other_live_lease(session, document_id, uuid.UUID(int=0)):
            return Outcome.BUSY
    indexing.index_for(settings, indexing.embedder(settings)).delete_document(document_id)
    with transaction() as session:
        repo.mark_purged(session, document_id)
    return Outcome.DONE
