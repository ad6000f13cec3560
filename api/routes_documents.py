"""`/v1/documents`: upload, list, look at one (versions, error, events), its chunks, delete,
re-ingest, hide from search and show again (the document or one chunk). Thin: validate, call
`shared.ingest` / `shared.hiding` / `shared.repository`, answer."""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, File, Form, Path, Query, Request, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BeforeValidator

from api.auth import check_scope, require_scope
from api.problems import ApiProblem
from api.schemas import (
    NO_NUL,
    Accepted,
    ChunkList,
    ChunkOut,
    DocumentDetail,
    DocumentList,
    DocumentStatus,
    DocumentSummary,
    EventOut,
    HideBody,
    OcrOut,
    PreviousVersion,
    Removed,
    SourceCount,
    SourceList,
    UploadAccepted,
    VersionError,
    VersionOut,
    Visibility,
)
from api.uploads import check_text_upload, read_upload, safe_filename
from shared import documents, hiding, ingest
from shared import repository as repo
from shared.db import transaction
from shared.models import Document, DocumentVersion, HiddenChunk
from shared.pipeline.convert.confidence import low_confidence_warning
from shared.states import Status
from shared.tags import TagError, clean_tags
from shared.text_checks import FieldError, check_text, load_json
from shared.urls import require_safe_url

MAX_FILES = 20
MAX_METADATA_DEPTH = 20
NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")

router = APIRouter(prefix="/v1/documents", tags=["documents"])
#: Reading documents, versions, events and chunks.
Caller = Annotated[str, Depends(require_scope("read"))]
SCOPE_REFUSED: dict[int | str, dict[str, Any]] = {
    403: {"description": "The API key's scopes do not allow this."}
}

PROBLEMS: dict[int | str, dict[str, Any]] = {
    401: {"description": "No or wrong API key."},
    404: {"description": "No such document."},
    422: {"description": "Invalid request."},
}


def _location(document_id: uuid.UUID) -> str:
    return f"/v1/documents/{document_id}"


def _parse_tags(values: list[str]) -> list[str]:
    """Tags repeated, comma-separated, or both; trimmed, de-duplicated, order kept; a 422
    past `MAX_TAGS` or `MAX_TAG_CHARS`."""
    try:
        return clean_tags((check_text(v, "tags") or "" for v in values), split=True)
    except TagError as exc:
        raise ApiProblem(422, str(exc), title="Tags refused", code="tags_refused") from None
    except FieldError as exc:
        raise ApiProblem(422, str(exc), code="invalid_field") from None


def _check_fields(**fields: str | None) -> None:
    """422 for a form field no text may hold (a NUL character, a lone surrogate)."""
    for name, value in fields.items():
        try:
            check_text(value, name)
        except FieldError as exc:
            raise ApiProblem(422, str(exc), code="invalid_field") from None


def _parse_metadata(raw: str | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        value = load_json(raw, "metadata")
    except FieldError as exc:
        raise ApiProblem(422, str(exc), code="invalid_field") from None
    except json.JSONDecodeError as exc:
        raise ApiProblem(422, f"metadata is not valid JSON: {exc}") from None
    except RecursionError:  # nested beyond Python's stack
        raise _too_deep() from None
    if not isinstance(value, dict):
        raise ApiProblem(422, "metadata must be a JSON object.")
    if json_depth(value) > MAX_METADATA_DEPTH:
        raise _too_deep()
    return value


def _too_deep() -> ApiProblem:
    return ApiProblem(422, f"metadata nests deeper than {MAX_METADATA_DEPTH} levels; flatten it.")


def json_depth(value: Any) -> int:
    """How deeply objects and arrays nest in `value` (without recursion)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            pending.extend((child, depth + 1) for child in _children(item))
    return deepest


def _children(item: dict[str, Any] | list[Any]) -> list[Any]:
    return list(item.values()) if isinstance(item, dict) else item


def _date_time_only(value: object) -> object:
    """The schema says date-time; pydantic alone would also read `0.5` as seconds since 1970."""
    if isinstance(value, str) and NUMBER.fullmatch(value.strip()):
        raise ValueError("must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z")
    return value


@router.post(
    "",
    status_code=202,
    summary="Upload one or several documents (Markdown, plain text, PDF)",
    response_model=UploadAccepted,
    responses={
        **PROBLEMS,
        **SCOPE_REFUSED,
        400: {"description": "The multipart body is malformed."},
        413: {"description": "A file (or the request) is larger than MAX_UPLOAD_BYTES."},
        415: {"description": "A file's bytes are not of a supported type."},
    },
)
def upload(
    request: Request,
    caller: Annotated[str, Depends(require_scope("upload"))],
    file: Annotated[list[UploadFile], File(description="One or more files.")],
    external_id: Annotated[
        str | None,
        Form(max_length=512, description="The document's key (one file); default: file name."),
    ] = None,
    folder: Annotated[
        str | None,
        Form(
            max_length=256,
            description="Key the files as `<folder>/<file name>`: files that share a name "
            "but not a folder stay separate documents.",
        ),
    ] = None,
    title: Annotated[str | None, Form(max_length=1000)] = None,
    source_url: Annotated[str | None, Form(max_length=2000)] = None,
    language: Annotated[str | None, Form(max_length=35)] = None,
    tags: Annotated[list[str] | None, Form(description="Comma-separated or repeated.")] = None,
    allow_empty: Annotated[
        bool,
        Form(
            description="The new version may leave the document without chunks (front matter "
            "only): it empties the document, so the key needs the `delete` scope. Without it "
            "such a version fails `empty_document` and the indexed version stays.",
        ),
    ] = False,
    metadata: Annotated[
        str | None,
        Form(
            description='A JSON object, e.g. `{"department": "orthopedie"}`.',
            json_schema_extra={
                "contentMediaType": "application/json",
                "contentSchema": {"type": "object"},
            },
        ),
    ] = None,
) -> JSONResponse:
    """Answers 202 only once every file's bytes and version row are committed."""
    settings = request.app.state.settings
    if not file:
        raise ApiProblem(422, "At least one `file` part is required.")
    if len(file) > MAX_FILES:
        raise ApiProblem(422, f"At most {MAX_FILES} files per request.")
    if external_id is not None and len(file) > 1:
        raise ApiProblem(422, "external_id can only be given with a single file.")
    if allow_empty:
        check_scope(request.state.api_key, "delete", " (allow_empty=true empties a document)")
    _check_fields(
        external_id=external_id,
        folder=folder,
        title=title,
        source_url=source_url,
        language=language,
    )
    folder = documents.upload_folder(folder)
    if external_id is not None and folder is not None:
        raise ApiProblem(422, "Give external_id or folder, not both.")
    extra = _parse_metadata(metadata)
    try:
        source_url = require_safe_url(source_url, "source_url")
    except ValueError as exc:
        raise ApiProblem(422, str(exc), code="url_refused") from None
    tag_list = _parse_tags(tags or [])

    news: list[documents.NewVersion] = []
    for part in file:  # read and check every file before anything is stored
        content, media_type = read_upload(part, settings.max_upload_bytes)
        check_text_upload(content, media_type)
        news.append(
            documents.uploaded_file(
                content,
                media_type,
                safe_filename(part.filename),
                external_id=external_id,
                folder=folder,
                title=title,
                source_url=source_url,
                language=language,
                tags=tag_list,
                metadata=extra,
                uploaded_by=caller,
                allow_empty=allow_empty,
            )
        )
    identities = [new.external_id for new in news]
    if len(set(identities)) != len(identities):
        raise ApiProblem(422, "Two files in one request have the same name (external id).")

    registered = ingest.submit_many(
        news, request.app.state.enqueue, request.app.state.enqueue_relabel
    )
    with transaction() as session:
        previous = [_previous(session, r) for r in registered]
        same_as = [_same_as(session, r) for r in registered]
    body = UploadAccepted(
        documents=[
            Accepted(
                document_id=r.document_id,
                version_id=r.version_id,
                version=r.number,
                status=str(r.status),
                location=_location(r.document_id),
                filename=new.filename,
                media_type=new.media_type,
                external_id=new.external_id,
                new_version_of=before,
                kind="metadata" if r.kind == documents.METADATA else "content",
                same_as_version=same,
                note=_same_note(same, r.changed) if same else _note(before),
            )
            for r, new, before, same in zip(registered, news, previous, same_as, strict=True)
        ]
    )
    return JSONResponse(
        body.model_dump(mode="json"),
        status_code=202,
        headers={"Location": _location(registered[0].document_id)},
    )


def _previous(session: Any, registered: repo.Registered) -> PreviousVersion | None:
    """The version this upload follows (same document key), or None for a new document."""
    found = repo.previous_version(session, registered.document_id, registered.number)
    if found is None:
        return None
    version, title = found
    return PreviousVersion(
        version=version.number,
        title=title,
        filename=version.filename,
        uploaded_by=version.uploaded_by,
        uploaded_at=version.received_at,
    )


def _same_as(session: Any, registered: repo.Registered) -> int | None:
    """For an unchanged upload, the indexed version it repeats (the document's current one:
    only that one is compared, and an unchanged upload leaves it in place)."""
    if registered.status != Status.UNCHANGED and registered.kind != documents.METADATA:
        return None
    return repo.indexed_version_number(session, registered.document_id)


def _same_note(same_as: int, changed: tuple[str, ...]) -> str:
    if changed:  # a metadata version
        return (
            f"Same content as version {same_as}; metadata updated ({', '.join(changed)}): "
            "nothing is embedded again."
        )
    return f"Unchanged: same content as version {same_as}; nothing was processed again."


def _note(before: PreviousVersion | None) -> str | None:
    if before is None:
        return None
    name = before.title or before.filename or f"version {before.version}"
    return (
        f"New version of {name!r}, uploaded by {before.uploaded_by or 'unknown'} on "
        f"{before.uploaded_at:%Y-%m-%d %H:%M} UTC."
    )


def _summary(
    document: Document, status: str, totals: repo.DocumentTotals | None = None
) -> dict[str, Any]:
    totals = totals or repo.DocumentTotals()
    return {
        "id": document.id,
        "source": document.source,
        "external_id": document.external_id,
        "title": document.title,
        "source_url": document.source_url,
        "language": document.language,
        "tags": list(document.tags or []),
        "status": status,
        "current_version_id": document.current_version_id,
        "latest_version_id": document.latest_version_id,
        "version_count": document.version_count,
        "created_at": document.created_at,
        "updated_at": document.updated_at,
        "deleted_at": document.deleted_at,
        "chunk_count": totals.chunk_count,
        "token_count": totals.token_count,
        "tokens_spent": totals.tokens_spent,
        "hidden": document.hidden_at is not None,
    }


@router.get(
    "",
    summary="List documents",
    response_model=DocumentList,
    responses={**PROBLEMS, **SCOPE_REFUSED},
)
def list_documents(
    caller: Caller,
    status: Annotated[DocumentStatus | None, Query()] = None,
    source: Annotated[str | None, Query(max_length=64, pattern=NO_NUL)] = None,
    updated_since: Annotated[datetime | None, Query(), BeforeValidator(_date_time_only)] = None,
    q: Annotated[
        str | None,
        Query(
            max_length=200,
            pattern=NO_NUL,
            description="Part of the title or file name, any case.",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> DocumentList:
    """Newest change first. Deleted documents appear only with `status=deleted`."""
    with transaction() as session:
        rows, total = repo.list_documents(
            session,
            status=status,
            source=source,
            updated_since=updated_since,
            q=q,
            limit=limit,
            offset=offset,
        )
        totals = repo.document_totals(session, [document for document, _ in rows])
        items = [
            DocumentSummary(**_summary(document, state, totals[document.id]))
            for document, state in rows
        ]
    return DocumentList(items=items, total=total, limit=limit, offset=offset)


# Declared before `/{document_id}`, which would otherwise take "sources" for an id.
@router.get(
    "/sources",
    summary="The sources documents came from, with their counts",
    response_model=SourceList,
    responses={**PROBLEMS, **SCOPE_REFUSED},
)
def list_sources(caller: Caller) -> SourceList:
    with transaction() as session:
        found = repo.document_sources(session)
    return SourceList(items=[SourceCount(source=s, documents=n) for s, n in found])


@router.delete("/sources", include_in_schema=False)
def sources_are_read_only() -> None:
    """Without this, `DELETE /{document_id}` takes "sources" for an id and answers 422."""
    raise ApiProblem(405, "The list of sources can only be read.", headers={"Allow": "GET"})


@router.get(
    "/{document_id}",
    summary="One document: status, versions, error, events, chunk count",
    response_model=DocumentDetail,
    responses={**PROBLEMS, **SCOPE_REFUSED},
)
def get_document(document_id: uuid.UUID, caller: Caller) -> DocumentDetail:
    with transaction() as session:
        found = repo.get_document(session, document_id)
        if found is None:
            raise ApiProblem(404, "No document with this id.")
        document, state = found
        versions = repo.document_versions(session, document_id)
        history = repo.document_history(session, document_id)
        latest = next((v for v in versions if v.id == document.latest_version_id), None)
        current = next((v for v in versions if v.id == document.current_version_id), None)
        error = None
        if latest is not None and latest.error_code:
            error = VersionError(
                code=latest.error_code, message=latest.error_message, retryable=latest.retryable
            )
        return DocumentDetail(
            **_summary(document, state, repo.document_totals(session, [document])[document.id]),
            metadata=dict(document.extra or {}),
            front_matter=((current.conversion or {}).get("front_matter") if current else None),
            error=error,
            versions=[_version_out(v) for v in versions],
            events=[EventOut.model_validate(e) for e in history],
            hidden_at=document.hidden_at,
            hidden_by=document.hidden_by,
            hidden_reason=document.hidden_reason,
            hidden_chunks=len(
                set(repo.hidden_chunks_of(session, document_id))
                & set(repo.current_point_ids_of(session, document_id))
            ),
        )


def _version_out(version: DocumentVersion) -> VersionOut:
    """A version as the API shows it, with how its scanned pages were read (if any)."""
    out = VersionOut.model_validate(version)
    ocr = (version.conversion or {}).get("ocr")
    if isinstance(ocr, dict):
        low = [int(page) for page in ocr.get("low_confidence_pages") or []]
        out.ocr = OcrOut(
            pages=ocr.get("pages") or [],
            languages=ocr.get("languages") or "",
            confidence=ocr.get("confidence") or 0.0,
            low_confidence_pages=low,
            warning=low_confidence_warning(low) if low else None,
        )
    return out


@router.get(
    "/{document_id}/chunks",
    summary="The chunks of the document's current (indexed) version, as held in Qdrant",
    response_model=ChunkList,
    responses={**PROBLEMS, **SCOPE_REFUSED},
)
def get_chunks(
    document_id: uuid.UUID,
    caller: Caller,
    limit: Annotated[int, Query(ge=1, le=1000)] = 500,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> ChunkList:
    with transaction() as session:
        found = repo.get_document(session, document_id)
        if found is None:
            raise ApiProblem(404, "No document with this id.")
        version_id = found[0].current_version_id
        chunks, total = (
            repo.version_chunks(session, version_id, limit=limit, offset=offset)
            if version_id
            else ([], 0)
        )
        hidden = repo.hidden_chunks_of(session, document_id)
        document_hidden = found[0].hidden_at is not None
        items = [
            ChunkOut.model_validate(chunk).model_copy(
                update={
                    **{
                        key: int((chunk.extra or {}).get(key) or 0)
                        for key in ("overlap_tokens", "new_text_offset")
                    },
                    "ocr_confidence": (chunk.extra or {}).get("ocr_confidence"),
                    **_chunk_hidden(hidden.get(chunk.point_id), document_hidden),
                }
            )
            for chunk in chunks
        ]
    return ChunkList(
        document_id=document_id,
        version_id=version_id,
        items=items,
        total=total,
        limit=limit,
        offset=offset,
    )


def _chunk_hidden(row: HiddenChunk | None, document_hidden: bool) -> dict[str, Any]:
    return {
        "hidden": row is not None or document_hidden,
        "hidden_by": row.hidden_by if row else None,
        "hidden_reason": row.reason if row else None,
    }


#: Hiding takes passages out of the chatbot's answers, as deleting does: the same scope.
Hider = Annotated[str, Depends(require_scope("delete"))]
HIDE_PROBLEMS: dict[int | str, dict[str, Any]] = {
    **PROBLEMS,
    **SCOPE_REFUSED,
    400: {"description": "The body is not JSON."},
    404: {"description": "No such document (or deleted), or no such chunk in its indexed version."},
}


def _reason(body: HideBody | None) -> str | None:
    if body is None or body.reason is None:
        return None
    try:
        reason = check_text(body.reason, "reason")
    except FieldError as exc:
        raise ApiProblem(422, str(exc), code="invalid_field") from None
    return (reason or "").strip() or None


def _document_visibility(
    request: Request, document_id: uuid.UUID, hidden: bool, caller: str, body: HideBody | None
) -> Visibility:
    done = hiding.set_document_hidden(
        document_id, hidden, caller, _reason(body), request.app.state.settings
    )
    if done is None:
        raise ApiProblem(404, "No document with this id.")
    return Visibility(document_id=document_id, hidden=hidden, index_updated=done.index_updated)


def _chunk_visibility(
    request: Request,
    document_id: uuid.UUID,
    chunk: str,
    hidden: bool,
    caller: str,
    body: HideBody | None,
) -> Visibility:
    try:
        done = hiding.set_chunk_hidden(
            document_id, chunk, hidden, caller, _reason(body), request.app.state.settings
        )
    except hiding.NoSuchChunk:
        raise ApiProblem(
            404, f"The document's indexed version has no chunk {chunk!r} (an index or point id)."
        ) from None
    if done is None or done.chunk is None:
        raise ApiProblem(404, "No document with this id.")
    return Visibility(
        document_id=document_id,
        hidden=hidden,
        chunk_index=done.chunk.index,
        point_id=done.chunk.point_id,
        index_updated=done.index_updated,
    )


ChunkRef = Annotated[
    str,
    Path(
        max_length=64,
        pattern=r"^[0-9A-Fa-f-]+$",
        description="The chunk's index in the indexed version (`0`, `1`, ...) or its point id.",
    ),
]
OptionalHideBody = Annotated[HideBody | None, Body()]


@router.post(
    "/{document_id}/hide",
    summary="Hide the document from search (kept across new versions), with a reason",
    response_model=Visibility,
    responses=HIDE_PROBLEMS,
)
def hide_document(
    request: Request, document_id: uuid.UUID, caller: Hider, body: OptionalHideBody = None
) -> Visibility:
    return _document_visibility(request, document_id, True, caller, body)


@router.post(
    "/{document_id}/show",
    summary="Show a hidden document in search again",
    response_model=Visibility,
    responses=HIDE_PROBLEMS,
)
def show_document(
    request: Request, document_id: uuid.UUID, caller: Hider, body: OptionalHideBody = None
) -> Visibility:
    return _document_visibility(request, document_id, False, caller, body)


@router.post(
    "/{document_id}/chunks/{chunk}/hide",
    summary="Hide one chunk from search (kept in new versions while its text is unchanged)",
    response_model=Visibility,
    responses=HIDE_PROBLEMS,
)
def hide_chunk(
    request: Request,
    document_id: uuid.UUID,
    chunk: ChunkRef,
    caller: Hider,
    body: OptionalHideBody = None,
) -> Visibility:
    return _chunk_visibility(request, document_id, chunk, True, caller, body)


@router.post(
    "/{document_id}/chunks/{chunk}/show",
    summary="Show a hidden chunk in search again",
    response_model=Visibility,
    responses=HIDE_PROBLEMS,
)
def show_chunk(
    request: Request,
    document_id: uuid.UUID,
    chunk: ChunkRef,
    caller: Hider,
    body: OptionalHideBody = None,
) -> Visibility:
    return _chunk_visibility(request, document_id, chunk, False, caller, body)


@router.delete(
    "/{document_id}",
    status_code=202,
    summary="Delete a document: it leaves listings now, its points shortly after",
    response_model=Removed,
    responses={**PROBLEMS, **SCOPE_REFUSED},
)
def delete_document(
    request: Request,
    document_id: uuid.UUID,
    caller: Annotated[str, Depends(require_scope("delete"))],
) -> Removed:
    if not ingest.remove(document_id, request.app.state.enqueue_delete, actor=caller):
        raise ApiProblem(404, "No document with this id.")
    return Removed(document_id=document_id)


@router.post(
    "/{document_id}/reingest",
    status_code=202,
    summary="Send the document's latest bytes through the pipeline again",
    response_model=Accepted,
    responses={**PROBLEMS, **SCOPE_REFUSED, 409: {"description": "The document is deleted."}},
)
def reingest(
    request: Request,
    document_id: uuid.UUID,
    caller: Annotated[str, Depends(require_scope("reingest"))],
) -> JSONResponse:
    with transaction() as session:
        found = repo.get_document(session, document_id)
        if found is None:
            raise ApiProblem(404, "No document with this id.")
        if found[1] == "deleted":
            raise ApiProblem(409, "The document is deleted; upload it again instead.")
        external_id = found[0].external_id
    registered = ingest.reingest(document_id, request.app.state.enqueue, actor=caller)
    if registered is None:
        raise ApiProblem(404, "The document has no version to re-ingest.")
    with transaction() as session:
        version = repo.load_version(session, registered.version_id)
        media_type, filename = (version.media_type, version.filename) if version else ("", None)
    body = Accepted(
        document_id=registered.document_id,
        version_id=registered.version_id,
        version=registered.number,
        status=str(registered.status),
        location=_location(registered.document_id),
        filename=filename,
        media_type=media_type,
        external_id=external_id,
    )
    return JSONResponse(
        body.model_dump(mode="json"),
        status_code=202,
        headers={"Location": _location(registered.document_id)},
    )
