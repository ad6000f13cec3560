"""What a document is, apart from where it is kept: which upload is which document (its
identity), what a new version hands in, and what a document says about itself.

Plain rules, no SQL and no HTTP: the upload API, the CMS webhook and `ingest run` build their
`NewVersion` here, and the pipeline (`repository.describe_document`) and `ingest eval`'s
in-memory index read a document's front matter or PDF metadata through `described_fields`;
front matter that would break the index's limits is refused by `check_described`.
Light to import (the CLI starts with it): no SQLAlchemy, no converters.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.errors import FrontMatterError
from shared.tags import TagError, clean_tags
from shared.urls import safe_url

#: The sources of the entry points that name their documents themselves (`ingest run` takes
#: its own with `--source`, "files" by default).
UPLOAD_SOURCE = "upload"
CMS_SOURCE = "cms"

#: The longest title a document's own description sets (longer ones are cut), and the
#: longest URL and language (longer ones are left out: a cut URL is a broken link, and no
#: language tag is that long): the columns' lengths (`models.Document`).
MAX_DESCRIBED_CHARS = 1000
MAX_URL_CHARS = 2000
MAX_LANGUAGE_CHARS = 35
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class NewVersion:
    """What an upload or a webhook hands in: identity, bytes and document metadata."""

    source: str
    external_id: str
    content: bytes
    sha256: str
    media_type: str
    filename: str | None = None
    title: str | None = None
    source_url: str | None = None
    language: str | None = None
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    uploaded_by: str | None = None
    force: bool = False  # re-ingest: do the work even when the content is unchanged
    content_url: str | None = None  # bytes to be fetched by the worker (content empty)
    allow_empty: bool = False  # may leave the document without chunks (else empty_document)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- a document's own fields, and what changes them ---------------------------------------

#: The document fields every one of its points carries in the index (title, URL, language,
#: tags): a change to one without new bytes is a version of its own kind, `metadata`
#: (its points' payloads are rewritten, nothing is converted or embedded).
PAYLOAD_FIELDS: tuple[str, ...] = ("title", "source_url", "language", "tags")
CONTENT = "content"
METADATA = "metadata"


def fields_given(new: NewVersion) -> dict[str, Any]:
    """The payload fields an upload or a delivery sets: a field it leaves out (None, no tags)
    keeps what the document has (last write wins, field by field)."""
    given: dict[str, Any] = {
        name: getattr(new, name)
        for name in ("title", "source_url", "language")
        if getattr(new, name) is not None
    }
    if new.tags:
        given["tags"] = list(new.tags)
    return given


def changed_fields(current: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """The payload fields `given` would change on a document whose fields are `current`, in
    `PAYLOAD_FIELDS` order. The same values again change nothing (an empty text is none)."""
    return [
        name
        for name in PAYLOAD_FIELDS
        if name in given and _same_form(given[name]) != _same_form(current.get(name))
    ]


def _same_form(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return list(value)
    return value or None


def metadata_detail(changed: list[str]) -> str:
    """The history's words for a metadata version: `metadata updated: title, tags`."""
    return "metadata updated: " + ", ".join(changed)


# --- which upload is which document ------------------------------------------------------


def upload_folder(folder: str | None) -> str | None:
    """An upload's `folder` as it prefixes keys: trimmed, no slash at either end; None for
    nothing (`" /wonden/ "` -> `"wonden"`)."""
    return (folder or "").strip().strip("/") or None


def upload_external_id(
    content: bytes, filename: str | None, external_id: str | None = None, folder: str | None = None
) -> str:
    """The key of an uploaded file: the `external_id` given (trimmed), else the file name
    under the folder given (`<folder>/<file name>`), else the first 16 hex digits of the
    bytes' sha256 (under the folder too). `folder` as `upload_folder` gives it."""
    given = (external_id or "").strip()
    if given:
        return given
    name = filename or sha256(content)[:16]
    return f"{folder}/{name}" if folder is not None else name


def file_external_id(path: Path, base: Path | None, id_prefix: str | None) -> str:
    """The key of a file `ingest run` reads, found under the folder `base` (None: named by
    itself): its absolute path, or with `id_prefix` the prefix and the path relative to the
    folder (a file named by itself: its name). README, "Command line"."""
    if id_prefix is None:
        return path.resolve().as_posix()
    relative = path.resolve().relative_to(base.resolve()) if base else Path(path.name)
    return id_prefix + relative.as_posix()


# --- new versions, one builder per entry point -------------------------------------------


def uploaded_file(
    content: bytes,
    media_type: str,
    filename: str | None,
    *,
    external_id: str | None = None,
    folder: str | None = None,
    title: str | None = None,
    source_url: str | None = None,
    language: str | None = None,
    tags: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    uploaded_by: str | None = None,
    allow_empty: bool = False,
) -> NewVersion:
    """A file of `POST /v1/documents` (fields already checked, `folder` as `upload_folder`
    gives it), keyed by `upload_external_id`."""
    return NewVersion(
        source=UPLOAD_SOURCE,
        external_id=upload_external_id(content, filename, external_id, folder),
        content=content,
        sha256=sha256(content),
        media_type=media_type,
        filename=filename,
        title=title,
        source_url=source_url,
        language=language,
        tags=list(tags or []),
        metadata=dict(metadata or {}),
        uploaded_by=uploaded_by,
        allow_empty=allow_empty,
    )


def cms_page(
    page_id: str,
    body: str | None,
    content_url: str | None,
    media_type: str,
    *,
    title: str | None = None,
    source_url: str | None = None,
    language: str | None = None,
    tags: list[str] | None = None,
    allow_empty: bool = False,
) -> NewVersion:
    """A page the CMS publishes or updates, keyed by its id: the body stored now, or (no
    body) its `content_url`, fetched by the worker (no bytes, no sha256 yet)."""
    content = body.encode("utf-8") if body is not None else b""
    return NewVersion(
        source=CMS_SOURCE,
        external_id=page_id,
        content=content,
        sha256=sha256(content) if content else "",
        content_url=None if body is not None else content_url,
        media_type=media_type,
        title=title,
        source_url=source_url,
        language=language,
        tags=list(tags or []),
        uploaded_by="cms",
        allow_empty=allow_empty,
    )


def local_file(data: bytes, filename: str, external_id: str, source: str) -> NewVersion:
    """A file `ingest run` read (keyed by `file_external_id`), its type judged by its bytes
    as an upload's is."""
    from shared.pipeline.convert import detect_media_type  # the converters: heavy, needed here

    return NewVersion(
        source=source,
        external_id=external_id,
        content=data,
        sha256=sha256(data),
        media_type=detect_media_type(data, filename),
        filename=filename,
        uploaded_by="cli",
    )


# --- what a document says about itself ---------------------------------------------------


def described_fields(found: dict[str, Any]) -> dict[str, str]:
    """The title, source URL and language that front matter or PDF metadata give (`url` and
    `lang` are read too), trimmed: a title cut to `MAX_DESCRIBED_CHARS`; a URL only if it is a
    link (`shared.urls.safe_url`) of at most `MAX_URL_CHARS`, a language of at most
    `MAX_LANGUAGE_CHARS`. The names that give nothing are left out."""
    url = found.get("source_url") or found.get("url")
    url = safe_url(url) if isinstance(url, str) else None  # a link, or nothing
    given = {
        name: value.strip()
        for name, value in (
            ("title", found.get("title")),
            ("source_url", url),
            ("language", found.get("language") or found.get("lang")),
        )
        if isinstance(value, str) and value.strip()
    }
    if "title" in given:
        given["title"] = given["title"][:MAX_DESCRIBED_CHARS]
    for name, limit in (("source_url", MAX_URL_CHARS), ("language", MAX_LANGUAGE_CHARS)):
        if len(given.get(name, "")) > limit:
            del given[name]
    return given


def described_tags(found: dict[str, Any]) -> list[str] | None:
    """The tags front matter gives, kept to the limits (`clean_tags`: a `TagError` past them);
    None when it gives no list. They are the document's only if it has none of its own."""
    tags = found.get("tags")
    return clean_tags(tags) if isinstance(tags, list) else None


def check_described(found: dict[str, Any]) -> None:
    """Front matter's tags and URL must keep the index's limits, or the page is refused
    (`FrontMatterError`: the API's 422, the worker's failed version): its tags are cleaned in
    place (`clean_tags`; `tags_refused` past the limits), and a `source_url` or `url` with a
    scheme must be a link (`url_refused` for `javascript:` or `data:`). A URL without a scheme
    (relative) passes, and `described_fields` leaves it out."""
    tags = found.get("tags")
    if isinstance(tags, list):
        try:
            found["tags"] = clean_tags(tags)
        except TagError as exc:
            raise FrontMatterError(f"The front matter's tags: {exc}", code="tags_refused") from None
    for name in ("source_url", "url"):
        url = found.get(name)
        if isinstance(url, str) and _SCHEME.match(url.strip()) and safe_url(url) is None:
            raise FrontMatterError(
                f"The front matter's {name} must be an http or https URL with a host name.",
                code="url_refused",
            )
