"""`PATCH /v1/documents/{id}`: change a document's title, URL, language or labels without new
bytes (issue 29). Thin: validate as the upload does, call `shared.ingest.update_fields`,
answer. The change is a metadata version: the worker rewrites the payloads of the document's
points in the index, nothing is embedded."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from api.auth import require_scope
from api.problems import ApiProblem
from api.schemas import FieldsBody, FieldsUpdated
from shared import ingest
from shared.tags import TagError, clean_tags
from shared.text_checks import FieldError, check_text
from shared.urls import require_safe_url

router = APIRouter(prefix="/v1/documents", tags=["documents"])


def fields_of(body: FieldsBody) -> dict[str, Any]:
    """The fields the body names, checked as the upload checks them (422 with a code)."""
    given: dict[str, Any] = {}
    for name in ("title", "source_url", "language"):
        if name in body.model_fields_set:
            try:
                value = check_text(getattr(body, name), name)
            except FieldError as exc:
                raise ApiProblem(422, str(exc), code="invalid_field") from None
            given[name] = (value or "").strip() or None
    if "source_url" in given:
        try:
            given["source_url"] = require_safe_url(given["source_url"], "source_url")
        except ValueError as exc:
            raise ApiProblem(422, str(exc), code="url_refused") from None
    if "tags" in body.model_fields_set:
        try:
            given["tags"] = clean_tags(check_text(t, "tags") or "" for t in body.tags or [])
        except TagError as exc:
            raise ApiProblem(422, str(exc), title="Tags refused", code="tags_refused") from None
        except FieldError as exc:
            raise ApiProblem(422, str(exc), code="invalid_field") from None
    if not given:
        raise ApiProblem(
            422, "Name at least one of title, source_url, language, tags.", code="no_fields"
        )
    return given


@router.patch(
    "/{document_id}",
    summary="Change the document's title, URL, language or labels (no new bytes, 0 tokens)",
    response_model=FieldsUpdated,
    responses={
        400: {"description": "The body is not JSON."},
        401: {"description": "No or wrong API key."},
        403: {"description": "The API key's scopes do not allow this."},
        404: {"description": "No such document (or deleted)."},
        422: {"description": "Invalid fields (`code` says which rule)."},
    },
)
def update_fields(
    request: Request,
    document_id: uuid.UUID,
    body: FieldsBody,
    caller: Annotated[str, Depends(require_scope("upload"))],
) -> FieldsUpdated:
    """Only the fields named change (last write wins, field by field); the same values again
    change nothing and make no version."""
    done = ingest.update_fields(
        document_id, fields_of(body), request.app.state.enqueue_relabel, actor=caller
    )
    if done is None:
        raise ApiProblem(404, "No document with this id.")
    made = bool(done.changed)
    return FieldsUpdated(
        document_id=done.document_id,
        changed=list(done.changed),
        status="received" if made else "unchanged",
        version_id=done.version_id if made else None,
        version=done.number if made else None,
        location=f"/v1/documents/{done.document_id}",
    )
