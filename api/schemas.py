"""Request and response bodies of the HTTP API (they make the OpenAPI document)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.tags import MAX_TAGS, clean_tags
from shared.urls import require_safe_url

DocumentStatus = Literal[
    "received",
    "converting",
    "chunking",
    "embedding",
    "upserting",
    "indexed",
    "failed",
    "unchanged",
    "superseded",
    "deleted",
]


#: Postgres text cannot hold NUL: a filter with one is a 422, not a database error.
NO_NUL = r"^[^\x00]*$"


class PreviousVersion(BaseModel):
    """The version an upload follows: uploads are keyed by file name (or `external_id`, or
    `folder` + file name), so a file named like an earlier one is its new version."""

    version: int
    title: str | None
    filename: str | None
    uploaded_by: str | None
    uploaded_at: datetime


class Accepted(BaseModel):
    """One registered version: poll `location` until `status` is `indexed` (or `failed`).
    `new_version_of` is set when the document existed: the upload replaces what it shows."""

    document_id: uuid.UUID
    version_id: uuid.UUID
    version: int
    status: str
    location: str
    filename: str | None = None
    media_type: str
    external_id: str
    new_version_of: PreviousVersion | None = None
    kind: Literal["content", "metadata"] = Field(
        default="content",
        description="`metadata`: the same bytes as the indexed version with other fields "
        "(title, URL, language, tags): only the index's payloads are rewritten, 0 tokens.",
    )
    same_as_version: int | None = Field(
        default=None,
        description="Set when `status` is `unchanged` or `kind` is `metadata`: the indexed "
        "version whose bytes this upload repeats (nothing is processed again).",
    )
    note: str | None = Field(
        default=None,
        description="'New version of <title>, uploaded by <who> on <date>.', or for an "
        "unchanged upload 'Unchanged: same content as version <n>; nothing was processed again.'",
    )


class UploadAccepted(BaseModel):
    documents: list[Accepted]


class VersionError(BaseModel):
    code: str | None
    message: str | None
    retryable: bool | None


class OcrOut(BaseModel):
    """How the text of a scanned PDF was read (text recognition, Tesseract)."""

    pages: list[int] = Field(description="Pages read with OCR (the others had a text layer).")
    languages: str = Field(description="Tesseract languages used, e.g. `nld` or `nld+eng`.")
    confidence: float = Field(description="Mean confidence (0-100) of the recognised words.")
    low_confidence_pages: list[int]
    warning: str | None = Field(
        default=None, description="For the editor when some pages were read with low confidence."
    )


class VersionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    number: int
    kind: Literal["content", "metadata"] = Field(
        default="content",
        description="`metadata`: only the document's fields changed (no bytes, 0 tokens).",
    )
    status: str
    media_type: str
    filename: str | None
    size_bytes: int
    sha256: str
    uploaded_by: str | None
    attempts: int
    chunk_count: int | None
    tokens_spent: int
    error_code: str | None
    error_message: str | None
    retryable: bool | None
    received_at: datetime
    finished_at: datetime | None
    updated_at: datetime
    ocr: OcrOut | None = Field(default=None, description="Set when pages were scans (OCR).")


class EventOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    at: datetime
    version_id: uuid.UUID | None
    from_status: str | None
    to_status: str
    actor: str | None
    detail: str | None


class DocumentSummary(BaseModel):
    id: uuid.UUID
    source: str
    external_id: str
    title: str | None
    source_url: str | None
    language: str | None
    tags: list[str]
    status: DocumentStatus
    current_version_id: uuid.UUID | None
    latest_version_id: uuid.UUID | None
    version_count: int
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    chunk_count: int = Field(default=0, description="Chunks of the indexed (current) version.")
    token_count: int = Field(
        default=0, description="Tokens (cl100k_base) of the indexed version's chunks together."
    )
    tokens_spent: int = Field(default=0, description="Embedding tokens paid for, all versions.")
    hidden: bool = Field(
        default=False, description="Hidden from search by an editor (`POST .../hide`)."
    )


class DocumentList(BaseModel):
    items: list[DocumentSummary]
    total: int
    limit: int
    offset: int


class SourceCount(BaseModel):
    source: str
    documents: int


class SourceList(BaseModel):
    """The sources documents came from (`upload`, `cms`, ...), for a listing's filter."""

    items: list[SourceCount]


class DocumentDetail(DocumentSummary):
    metadata: dict[str, Any]
    front_matter: dict[str, Any] | None = Field(
        default=None,
        description="The indexed version's front matter, kept once per version (chunks and "
        "points carry only title, URL, language, tags and heading path).",
    )
    error: VersionError | None = Field(
        description="Why the latest version failed, in words a content editor can act on."
    )
    versions: list[VersionOut]
    events: list[EventOut]
    hidden_at: datetime | None = None
    hidden_by: str | None = Field(default=None, description="The API key that hid it.")
    hidden_reason: str | None = None
    hidden_chunks: int = Field(
        default=0, description="Chunks of the indexed version hidden one by one."
    )


class SectionOut(BaseModel):
    headings: list[str] = Field(description="Heading path of a section the chunk covers.")
    char_start: int = Field(description="Where the section's part starts in the chunk text.")
    char_end: int


class ChunkOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    point_id: uuid.UUID
    index: int
    text: str
    token_count: int
    headings: list[str]
    sections: list[SectionOut] = Field(
        default_factory=list,
        description="Every section the text covers, in order (`headings` is where it starts).",
    )
    kinds: list[str]
    page_start: int | None = Field(description="First page of the chunk's own text (PDF).")
    page_end: int | None = Field(description="Last page of the chunk's own text (PDF).")
    char_start: int
    char_end: int
    overlap_tokens: int = Field(
        0, description="Tokens at the start of `text` repeated from the previous chunk."
    )
    new_text_offset: int = Field(
        0, description="Where the chunk's own text starts in `text` (after the overlap)."
    )
    ocr_confidence: float | None = Field(
        default=None,
        description="Text read from a scan: the mean confidence (0-100) of its words.",
    )
    hidden: bool = Field(
        default=False,
        description="Left out of search: hidden itself (kept while its text is unchanged) or "
        "its document is.",
    )
    hidden_by: str | None = Field(default=None, description="Who hid this chunk itself.")
    hidden_reason: str | None = None


class ChunkList(BaseModel):
    document_id: uuid.UUID
    version_id: uuid.UUID | None
    items: list[ChunkOut]
    total: int
    limit: int
    offset: int


class HideBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(
        default=None, max_length=1000, description="Why, as the document's history shows it."
    )


class Visibility(BaseModel):
    """What a hide or show did."""

    document_id: uuid.UUID
    hidden: bool
    chunk_index: int | None = Field(default=None, description="The chunk, for a chunk's hide.")
    point_id: uuid.UUID | None = None
    index_updated: bool = Field(
        description="Whether the index's `hidden` field was set now; when false, search "
        "still leaves out what is hidden, and the index follows with the next version."
    )


class FieldsBody(BaseModel):
    """The fields to change; a field left out keeps its value, `null` clears it (tags: `[]`)."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, max_length=1000)
    source_url: str | None = Field(
        default=None, max_length=2000, description="An http or https URL with a host."
    )
    language: str | None = Field(default=None, max_length=35)
    tags: list[str] | None = Field(
        default=None, max_length=MAX_TAGS, description="The labels, replacing the ones there."
    )


class FieldsUpdated(BaseModel):
    """What a field change did: a metadata version (0 tokens: the index's payloads are
    rewritten, nothing is embedded), or nothing when the values were already there."""

    document_id: uuid.UUID
    changed: list[str] = Field(description="The fields that changed (none: nothing to do).")
    status: Literal["received", "unchanged"] = Field(
        description="`received`: a metadata version was made and sent to the worker; "
        "`unchanged`: the document already had these values."
    )
    version_id: uuid.UUID | None = Field(default=None, description="The metadata version.")
    version: int | None = None
    location: str


class Removed(BaseModel):
    document_id: uuid.UUID
    status: Literal["deleted"] = "deleted"


class Check(BaseModel):
    ok: bool
    detail: str | None = None


class ProcessingOut(BaseModel):
    """Whether work moves: answering Celery workers ("in-process" without a broker, "none"),
    how long the oldest version nobody holds has waited, and whether that is over
    PROCESSING_STALL_SECONDS."""

    workers: str
    oldest_waiting_seconds: float | None
    stalled: bool


class Readiness(BaseModel):
    ready: bool
    # Ready but not well: no worker answers, or versions wait past PROCESSING_STALL_SECONDS.
    # Uploads are still accepted and kept; they are processed once a worker runs.
    degraded: bool = False
    checks: dict[str, Check]
    processing: ProcessingOut | None = None


# --- the CMS webhook ------------------------------------------------------------------------


class CmsPage(BaseModel):
    """The page as the CMS sends it: the Markdown inline in `body`, or a `content_url` the
    worker downloads (within CONTENT_FETCH_MAX_BYTES and CONTENT_FETCH_TIMEOUT_SECONDS)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, max_length=512)
    url: str | None = Field(default=None, max_length=2000)
    title: str | None = Field(default=None, max_length=1000)
    language: str | None = Field(default=None, max_length=35)
    tags: list[str] = Field(default_factory=list, max_length=MAX_TAGS)
    body: str | None = None
    content_type: Literal["text/markdown", "text/html"] = Field(
        default="text/markdown",
        description="What `body` is: Markdown, or an HTML page (its article is extracted; "
        "navigation, header and footer are dropped). A `content_url` is judged by its bytes.",
    )
    content_url: str | None = Field(default=None, max_length=2000)
    allow_empty: bool = Field(
        default=False,
        description="The page may have no text left (front matter only): its points go. "
        "Without it such a version fails `empty_document` and the indexed version stays.",
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return require_safe_url(value, "page.url")

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str]) -> list[str]:
        return clean_tags(value)  # TagError is a ValueError: pydantic makes it a 422


class CmsEvent(BaseModel):
    """`POST /v1/webhooks/cms` body. `publish`/`update` need `page.body`; `unpublish`/`delete`
    need only `page.id`. `id` is the delivery id (required): it is covered by the signature,
    so a replayed request cannot pass for a new delivery."""

    model_config = ConfigDict(extra="ignore")

    id: str | None = Field(default=None, max_length=200, description="The delivery id.")
    event: Literal["publish", "update", "unpublish", "delete"]
    page: CmsPage


class WebhookResult(BaseModel):
    delivery_id: str
    event: str
    duplicate: bool
    document_id: uuid.UUID | None = None
    version_id: uuid.UUID | None = None
    status: str | None = None
    location: str | None = None
