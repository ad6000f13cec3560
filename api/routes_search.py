"""`POST /v1/search`: the chatbot's retrieval over HTTP, a thin wrapper over
`shared.retrieval.search.search` (the same function `ingest search` and `ingest eval` use)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool

from api.auth import require_scope
from api.problems import ApiProblem
from shared.retrieval.filters import SearchFilters
from shared.retrieval.hits import Hit
from shared.retrieval.search import QueryError, SearchRequest, search
from shared.text_checks import check_text

router = APIRouter(prefix="/v1", tags=["search"])


class Filters(BaseModel):
    """All given filters must hold; a list matches when any of its values does."""

    model_config = ConfigDict(extra="forbid")

    document_ids: list[str] = Field(default_factory=list, description="Ids or external ids.")
    source: str | None = None
    tags: list[str] = Field(default_factory=list)
    language: str | None = None
    heading_prefix: str | None = Field(
        default=None, description="A chapter or section: `Knieoperatie > Voorbereiding`."
    )
    updated_since: datetime | None = None

    @field_validator("document_ids", "source", "tags", "language", "heading_prefix")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        for item in value if isinstance(value, list) else [value]:
            check_text(item, "a filter")  # FieldError is a ValueError: a 422
        return value


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="The patient's question, or words to look for.")
    filters: Filters = Field(default_factory=Filters)
    top_k: int | None = Field(default=None, ge=1, le=50, description="Default SEARCH_TOP_K.")
    candidates: int | None = Field(
        default=None, ge=1, le=200, description="Default SEARCH_CANDIDATES."
    )
    hybrid: bool | None = Field(default=None, description="Default SEARCH_HYBRID.")
    rerank: bool | None = Field(default=None, description="Default SEARCH_RERANK.")

    @field_validator("query")
    @classmethod
    def _encodable(cls, value: str) -> str:
        """A lone surrogate cannot be encoded for the embedding API: a 422 here, not a 500 there."""
        return check_text(value, "query") or ""


class SearchResponse(BaseModel):
    query: str
    hits: list[Hit] = Field(
        description="The kept hits in document order; `rank` is by score; `weak`: its cosine "
        "is below `weak_threshold`."
    )
    collection: str
    hybrid: bool = Field(description="Whether sparse (lexical) candidates were fused in.")
    rerank: bool
    candidates: int
    query_tokens: int
    timings_ms: dict[str, float] = Field(description="embed, candidates, rerank, total.")
    notes: list[str]
    weak: bool = Field(
        description="No good answer: no hit is similar enough to the question (every hit is "
        "`weak`, or there is none). Say so rather than answer from these hits."
    )
    weak_threshold: float = Field(
        description="SEARCH_WEAK_THRESHOLD: a hit whose `dense_score` (cosine) is below it "
        "is `weak`."
    )


EXAMPLE: dict[str, Any] = {
    "summary": "A patient's question, Dutch pages only",
    "value": {
        "query": "Mag ik mijn bloedverdunners blijven gebruiken voor een knieoperatie?",
        "filters": {"language": "nl", "tags": ["orthopedie"]},
        "top_k": 5,
    },
}


@router.post(
    "/search",
    summary="Find the passages that answer a question, with citations",
    response_model=SearchResponse,
    responses={
        400: {"description": "The body is not JSON."},
        401: {"description": "No or wrong API key."},
        403: {"description": "The API key has no `search` scope."},
        422: {"description": "Empty or over-long query, unknown filter, bad numbers."},
    },
)
async def search_route(
    request: Request,
    caller: Annotated[str, Depends(require_scope("search"))],
    body: Annotated[SearchBody, Body(openapi_examples={"question": EXAMPLE})],
) -> SearchResponse:
    """Async so that only the search itself goes to a worker thread: a plain `def` route
    also had its answer validated in a second thread hop, each a wait under load."""
    filters = SearchFilters.from_dict(body.filters.model_dump())
    wanted = SearchRequest(
        body.query, filters, body.top_k, body.candidates, body.hybrid, body.rerank
    )
    try:
        result = await run_in_threadpool(search, wanted, request.app.state.settings)
    except QueryError as exc:
        raise ApiProblem(422, str(exc)) from None
    return SearchResponse.model_validate(result, from_attributes=True)
