"""The original file of a version, as it was uploaded: for an editor who wants to see exactly
what the service was given (the PDF behind a strange chunk, the Word file of last month)."""

from __future__ import annotations

import uuid
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Path
from fastapi.responses import Response

from api.auth import require_scope
from api.problems import ApiProblem
from shared import repository as repo
from shared.db import transaction

router = APIRouter(prefix="/v1/documents", tags=["documents"])

_EXTENSIONS = {
    "application/pdf": ".pdf",
    "text/markdown": ".md",
    "text/plain": ".txt",
    "text/html": ".html",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
}


def content_disposition(filename: str | None, media_type: str, number: int) -> str:
    """Always `attachment` (an uploaded HTML page must never render on the API's origin), with
    an ASCII fallback name and the real one in RFC 5987 form."""
    name = filename or f"versie-{number}{_EXTENSIONS.get(media_type, '')}"
    fallback = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\;' else "_" for c in name
    )
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


@router.get(
    "/{document_id}/versions/{number}/file",
    summary="Download the original file of a version (the stored bytes, its name and type)",
    responses={
        200: {"content": {"application/octet-stream": {}}},
        401: {"description": "No or wrong API key."},
        403: {"description": "The API key has no `read` scope."},
        404: {"description": "No such version, or its file is not stored yet."},
        422: {"description": "Not a document id or version number."},
    },
)
def download_version_file(
    document_id: uuid.UUID,
    number: Annotated[int, Path(ge=1, le=2_000_000_000)],
    caller: Annotated[str, Depends(require_scope("read"))],
) -> Response:
    with transaction() as session:
        stored = repo.version_file(session, document_id, number)
    if stored is None:
        raise ApiProblem(404, "No such version of this document, or its file is not stored yet.")
    return Response(
        stored.content,
        media_type=stored.media_type,
        headers={
            "Content-Disposition": content_disposition(stored.filename, stored.media_type, number),
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox",
            "Cache-Control": "private, no-store",
        },
    )
