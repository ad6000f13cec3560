"""Checking one uploaded file: its size against the limit, its type by its bytes, its name.

python-multipart has already spooled the part to a temporary file (on disk above 1 MB), so
the size is known before the bytes are read into memory; an oversized file is refused
without being read. File names are metadata only: the base name is kept, never used as a path.
"""

from __future__ import annotations

import unicodedata

from fastapi import UploadFile

from api.problems import ApiProblem, readable_size
from shared.errors import FrontMatterError, PermanentError
from shared.pipeline.convert import detect_media_type
from shared.pipeline.convert.docx import DOCX_MEDIA_TYPE
from shared.pipeline.convert.html import HTML_MEDIA_TYPE
from shared.pipeline.convert.text import decode_text, normalise_newlines
from shared.pipeline.front_matter import front_matter

ACCEPTED_MEDIA_TYPES = frozenset(
    {"text/markdown", "text/plain", "application/pdf", DOCX_MEDIA_TYPE, HTML_MEDIA_TYPE}
)
TEXT_MEDIA_TYPES = frozenset({"text/markdown", "text/plain"})
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
            f"The file {filename or ''!r} is not a Markdown, plain-text, PDF, Word (.docx) or "
            "HTML document "
            "(judged by its content, not its name).",
            title="Unsupported media type",
            detected=media_type,
            file=filename,
        )
    return content, media_type


def check_front_matter(text: str) -> None:
    """422 for front matter the worker would refuse (aliases, too large, too deep): the
    editor hears it now rather than from a failed version later."""
    if not text.lstrip("\ufeff").startswith("---"):
        return
    try:
        front_matter(normalise_newlines(text.lstrip("\ufeff")))
    except FrontMatterError as exc:
        raise ApiProblem(422, exc.message, title="Front matter refused", code=exc.code) from None


def check_text_upload(content: bytes, media_type: str) -> None:
    """The front-matter check for a Markdown or text upload (undecodable text is left to the
    worker, which fails the version with `undecodable_text`)."""
    if media_type not in TEXT_MEDIA_TYPES:
        return
    try:
        text, _ = decode_text(content)
    except PermanentError:
        return
    check_front_matter(text)
