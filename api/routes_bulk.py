"""Acting on many documents at once (the editors' bulk bar) and the list as CSV.

A bulk action names its documents by id or by the list's filter ("all failed PDFs"); it runs
the same plain functions as the one-document routes (`ingest.reingest`, `ingest.remove`), one
document at a time, each in its own transaction, so one refusal does not undo the others and
the answer says what happened to each. At most BULK_MAX_DOCUMENTS per request.
"""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterator
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from api.auth import check_scope, require_scope
from api.problems import ApiProblem
from api.schemas import NO_NUL, DocumentStatus
from shared import ingest
from shared import repository as repo
from shared.db import transaction

router = APIRouter(prefix="/v1/documents", tags=["documents"])

BULK_MAX_DOCUMENTS = 1000
EXPORT_PAGE = 500


class ListFilter(BaseModel):
    """The documents list's own filters (the same meaning as `GET /v1/documents`)."""

    model_config = ConfigDict(extra="forbid")

    status: DocumentStatus | None = None
    source: str | None = Field(default=None, max_length=64, pattern=NO_NUL)
    q: str | None = Field(default=None, max_length=200, pattern=NO_NUL)


class BulkRequest(BaseModel):
    """`ids` or `filter` (not both): the documents to act on."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["reingest", "delete"]
    ids: list[uuid.UUID] | None = Field(default=None, max_length=BULK_MAX_DOCUMENTS)
    filter: ListFilter | None = None


Outcome = Literal["done", "not_found", "deleted", "no_version"]


class BulkOutcome(BaseModel):
    document_id: uuid.UUID
    outcome: Outcome


class BulkResult(BaseModel):
    action: str
    done: int
    items: list[BulkOutcome]


def _chosen(body: BulkRequest) -> list[uuid.UUID]:
    if (body.ids is None) == (body.filter is None):
        raise ApiProblem(422, "Name the documents either by `ids` or by `filter`, not both.")
    if body.ids is not None:
        return list(dict.fromkeys(body.ids))
    chosen = body.filter or ListFilter()
    with transaction() as session:
        rows, total = repo.list_documents(
            session,
            status=chosen.status,
            source=chosen.source,
            q=chosen.q,
            limit=BULK_MAX_DOCUMENTS,
        )
    if total > BULK_MAX_DOCUMENTS:
        raise ApiProblem(
            422,
            f"The filter matches {total} documents; one request acts on at most "
            f"{BULK_MAX_DOCUMENTS}. Narrow the filter.",
        )
    return [document.id for document, _ in rows]


@router.post(
    "/bulk",
    summary="Re-process or delete several documents (by ids or by the list's filter)",
    response_model=BulkResult,
    responses={
        400: {"description": "The body is not JSON."},
        401: {"description": "No or wrong API key."},
        403: {"description": "The API key's scopes do not allow this action."},
        422: {"description": "Neither or both of `ids` and `filter`, or too many documents."},
    },
)
def bulk_action(
    request: Request, body: BulkRequest, caller: Annotated[str, Depends(require_scope("read"))]
) -> BulkResult:
    """Choosing documents by the list's filter reads the list (`read`, checked before the
    body); the action itself needs its own scope (`reingest` or `delete`)."""
    check_scope(request.state.api_key, body.action, " these documents")
    items: list[BulkOutcome] = []
    for document_id in _chosen(body):
        items.append(
            BulkOutcome(
                document_id=document_id, outcome=_act(request, body.action, document_id, caller)
            )
        )
    return BulkResult(action=body.action, done=sum(i.outcome == "done" for i in items), items=items)


def _act(request: Request, action: str, document_id: uuid.UUID, caller: str) -> Outcome:
    with transaction() as session:
        found = repo.get_document(session, document_id)
    if found is None:
        return "not_found"
    if found[1] == "deleted":
        return "deleted"
    if action == "delete":
        return (
            "done"
            if ingest.remove(document_id, request.app.state.enqueue_delete, caller)
            else "not_found"
        )
    registered = ingest.reingest(document_id, request.app.state.enqueue, actor=caller)
    return "no_version" if registered is None else "done"


COLUMNS = (
    "id",
    "title",
    "external_id",
    "source",
    "status",
    "language",
    "tags",
    "source_url",
    "updated_at",
    "chunks",
    "tokens",
)


@router.get(
    "/export.csv",
    summary="The documents list as CSV (the same filters as the list)",
    responses={
        200: {"content": {"text/csv": {}}},
        401: {"description": "No or wrong API key."},
        403: {"description": "The API key has no `read` scope."},
        422: {"description": "Invalid filter."},
    },
)
def export_csv(
    caller: Annotated[str, Depends(require_scope("read"))],
    status: Annotated[DocumentStatus | None, Query()] = None,
    source: Annotated[str | None, Query(max_length=64, pattern=NO_NUL)] = None,
    q: Annotated[str | None, Query(max_length=200, pattern=NO_NUL)] = None,
) -> StreamingResponse:
    def rows() -> Iterator[str]:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        offset = 0
        while True:
            with transaction() as session:
                page, total = repo.list_documents(
                    session, status=status, source=source, q=q, limit=EXPORT_PAGE, offset=offset
                )
                totals = repo.document_totals(session, [d for d, _ in page])
                for document, state in page:
                    t = totals[document.id]
                    writer.writerow(
                        [
                            document.id,
                            _cell(document.title),
                            _cell(document.external_id),
                            document.source,
                            state,
                            document.language or "",
                            _cell(";".join(document.tags or [])),
                            _cell(document.source_url),
                            document.updated_at.isoformat(),
                            t.chunk_count,
                            t.token_count,
                        ]
                    )
            yield out.getvalue()
            out.seek(0)
            out.truncate()
            offset += EXPORT_PAGE
            if offset >= total or not page:
                return

    return StreamingResponse(
        rows(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="documenten.csv"'},
    )


def _cell(value: str | None) -> str:
    """A spreadsheet must not run a cell as a formula (`=HYPERLINK(...)` in a title)."""
    text = value or ""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
