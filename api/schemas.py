"""Request and response bodies of the HTTP API (they make the OpenAPI document)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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


class Accepted(BaseModel):
    """One registered version: poll `location` until `status` is `indexed` (or `failed`)."""

    document_id: uuid.UUID
    version_id: uuid.UUID
    version: int
    status: str
    location: str
    filename: str | None = None
    media_type: str


class UploadAccepted(BaseModel):
    documents: list[Accepted]


class VersionError(BaseModel):
    code: str | None
    message: str | None
    retryable: bool | None


class VersionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    number: int
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
    error: VersionError | None = Field(
        description="Why the latest version failed, in words a content editor can act on."
    )
    versions: list[VersionOut]
    events: list[EventOut]


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
    page_start: int | None
    page_end: int | None
    char_start: int
    char_end: int


class ChunkList(BaseModel):
    document_id: uuid.UUID
    version_id: uuid.UUID | None
    items: list[ChunkOut]
    total: int
    limit: int
    offset: int


class Removed(BaseModel):
    document_id: uuid.UUID
    status: Literal["deleted"] = "deleted"


class Check(BaseModel):
    ok: bool
    detail: str | None = None


class Readiness(BaseModel):
    ready: bool
    checks: dict[str, Check]


# --- the CMS webhook ------------------------------------------------------------------------


class CmsPage(BaseModel):
    """The page as the CMS sends it: the Markdown inline in `body`, or a `content_url` the
    worker downloads (within CONTENT_FETCH_MAX_BYTES and CONTENT_FETCH_TIMEOUT_SECONDS)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, max_length=512)
    url: str | None = Field(default=None, max_length=2000)
    title: str | None = Field(default=None, max_length=1000)
    language: str | None = Field(default=None, max_length=35)
    tags: list[str] = Field(default_factory=list, max_length=100)
    body: str | None = None
    content_url: str | None = Field(default=None, max_length=2000)


class CmsEvent(BaseModel):
    """`POST /v1/webhooks/cms` body. `publish`/`update` need `page.body`; `unpublish`/`delete`
    need only `page.id`. The delivery id is `X-Delivery-Id`, else this `id`."""

    model_config = ConfigDict(extra="ignore")

    id: str | None = Field(default=None, max_length=200)
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
