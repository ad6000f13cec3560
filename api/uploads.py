"""Checking one uploaded file: its size against the limit, its type by its bytes, its name.

python-multipart has already spooled the part to a temporary file (on disk above 1 MB), so
the size is known before the bytes are read into memory; an oversized file is refused
without being read. File names are metadata only: the base name is kept, never used as a path.
"""

from __future__ import annotations

import unicodedata

from fastapi import UploadFile
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from api.problems import ApiProblem, readable_size, request_too_large
from shared.pipeline.convert import detect_media_type

ACCEPTED_MEDIA_TYPES = frozenset({"text/markdown", "text/plain", "application/pdf"})
MAX_FILENAME_CHARS = 255


def safe_filename(name: str | None) -> str | None:
    """`"../../etc/passwd"` -> `"passwd"`; control characters dropped; None if nothing is left."""
    if not name:
        return None
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C").strip()
    if base in ("", ".", ".."):
        return None
    return base[:MAX_FILENAME_CHARS]


def _too_large(limit: int, filename: str | None) -> ApiProblem:
    return ApiProblem(
        413,
        f"The file {filename or ''!r} is larger than the upload limit of {readable_size(limit)} "
        f"({limit} bytes) per file (MAX_UPLOAD_BYTES).",
        title="Upload too large",
        limit_bytes=limit,
        file=filename,
    )


def read_upload(part: UploadFile, limit: int) -> tuple[bytes, str]:
    """The file's bytes and sniffed media type, or a 413 / 415 / 422 problem naming the file
    (in an upload of several files, the editor must know which one was refused)."""
    filename = safe_filename(part.filename)
    if part.size is not None and part.size > limit:
        raise _too_large(limit, filename)
    part.file.seek(0)
    content = part.file.read(limit + 1)
    if len(content) > limit:
        raise _too_large(limit, filename)
    if not content:
        raise ApiProblem(422, f"The file {filename or ''!r} is empty.", file=filename)
    media_type = detect_media_type(content, filename)
    if media_type not in ACCEPTED_MEDIA_TYPES:
        raise ApiProblem(
            415,
            f"The file {filename or ''!r} is not a Markdown, plain-text or PDF document "
            "(judged by its content, not its name).",
            title="Unsupported media type",
            detected=media_type,
            file=filename,
        )
    return content, media_type


class UploadSizeLimit:
    """Refuse an upload whose Content-Length is over the limit before reading it, with problem
    details (the router's own body limit answers such a request in `text/plain`; a body sent
    without a length is still counted and refused by it while streaming, see problems.py)."""

    def __init__(self, app: ASGIApp, path: str, file_limit: int, request_limit: int) -> None:
        self.app = app
        self.path = path
        self.file_limit = file_limit
        self.request_limit = request_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == self.path:
            request = Request(scope, receive)
            length = request.headers.get("content-length", "")
            if length.isdigit() and int(length) > self.request_limit:
                response = request_too_large(request, self.file_limit, self.request_limit)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
