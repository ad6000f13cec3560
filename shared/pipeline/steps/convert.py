"""The convert step: bytes -> Markdown and page map (pypdf for PDFs), stored on the version with
its move out of `converting`, every version's in one transaction.

A page converts in a millisecond or two; what a page costs is the transactions around that
work. So the step takes, besides the versions it was sent for, others waiting in `received`
(`take_waiting`), and with `then_chunk` (where no queue sits between the two stages) chunks
each conversion at once and stores both moves in the same transaction.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from shared import repository as repo
from shared.adapters.fetch import fetch
from shared.db import transaction
from shared.errors import FrontMatterError
from shared.models import DocumentVersion
from shared.pipeline.chunk import front_matter, normalise
from shared.pipeline.convert import Converted, Ocr, convert, detect_media_type
from shared.pipeline.steps.chunk import Chunked, chunk_conversion, save_chunks
from shared.pipeline.steps.runner import Holding, Outcome, lease_for, log_done
from shared.settings import Settings, get_settings
from shared.states import Status


def convert_versions(
    version_ids: Sequence[uuid.UUID],
    owner: str,
    settings: Settings | None = None,
    *,
    ocr: Ocr = Ocr.DEFER,
    take_waiting: int = 0,
    then_chunk: bool = False,
    handover_from: str | None = None,
    claimed: Callable[[bool], None] = lambda full: None,
) -> Outcome:
    """Convert the versions (and up to `take_waiting` others waiting in `received`). Scanned
    PDFs go to the `ocr` queue (`outcome.ocr`) with `Ocr.DEFER`, or are read here with
    `Ocr.RUN`. Those converted go on to chunk under this owner's leases (`handover`); with
    `then_chunk` they are chunked too, and their leases given back. `claimed` hears, before the
    work, whether the claim took as many waiting versions as it could (more may be waiting)."""
    settings = settings or get_settings()
    with transaction() as session:
        claim = repo.claim(
            session,
            Status.CONVERTING,
            owner,
            lease_for(settings),
            version_ids,
            take_waiting=take_waiting,
            handover_from=handover_from,
        )
        versions = repo.versions_with(session, list(claim.claimed), "content", "document")
    if take_waiting:
        claimed(len(claim.claimed.keys() - set(version_ids)) >= take_waiting)
    outcome = Outcome(go_on=sorted(claim.past), busy=sorted(claim.held), stopped=sorted(claim.gone))
    if not claim.claimed:
        return outcome
    outputs: dict[uuid.UUID, dict[str, Any]] = {}
    chunked: dict[uuid.UUID, Chunked] = {}
    with Holding(owner, settings, claim.claimed, outcome) as held:
        for version in versions:
            with held.each(version.id):
                by_url = not version.content and version.content_url
                if by_url and not _fetched(settings, version, owner):
                    held.drop(version.id)  # the indexed version's bytes: `unchanged`
                    continue
                converted = convert(
                    version.content,
                    version.media_type,
                    version.filename,
                    language=version.document.language,
                    ocr=ocr,
                    progress=held.keep_alive,
                )
                if then_chunk:
                    chunked[version.id] = chunk_conversion(
                        settings, version, converted, converted.metadata
                    )
                outputs[version.id] = conversion_output(converted)
        with held.finishing() as session:
            moved = repo.finish(
                session, Status.CONVERTING, owner, list(outputs), keep_lease=True, each=outputs
            )
            if then_chunk:
                moved = save_chunks(
                    session,
                    owner,
                    claim.claimed,
                    {v: chunked[v] for v in moved},
                    keep_lease=False,
                )
            held.close(session, handed_on=[] if then_chunk else moved)
    log_done(Status.CONVERTING, claim.claimed, moved)
    outcome.moved(moved)
    outcome.stopped += [v for v in outputs if v not in moved]
    outcome.handover = None if then_chunk else owner
    return outcome


def _fetched(settings: Settings, version: DocumentVersion, owner: str) -> bool:
    """Download a page sent by URL and store its bytes on the version (`version` gets them);
    False when they are the indexed version's (the version ends `unchanged`)."""
    assert version.content_url is not None
    data = fetch(
        version.content_url,
        max_bytes=settings.content_fetch_max_bytes,
        timeout=settings.content_fetch_timeout_seconds,
        allowed_hosts=settings.content_fetch_allowed_hosts,
    )
    sha256 = hashlib.sha256(data).hexdigest()
    media_type = detect_media_type(data, version.content_url)
    with transaction() as session:
        repo.save_fetched(session, version.id, owner, data, sha256, media_type)
        if repo.mark_fetched_unchanged(session, version.id, version.document_id, sha256, owner):
            return False
    version.content, version.media_type, version.sha256 = data, media_type, sha256
    return True


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
