"""What one search hit carries back to the chatbot, the API, the CLI and the web page."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from shared.retrieval.anchor import own_text
from shared.retrieval.citations import citation
from shared.retrieval.preview import passage
from shared.retrieval.rerank import Ranked

#: The payload fields a hit, its citation and the rerank read: the search asks Qdrant for
#: these only (not `heading_paths`, `updated_at` and the rest, which serve filters).
PAYLOAD_FIELDS = (
    "document_id",
    "external_id",
    "chunk_index",
    "title",
    "source",
    "source_url",
    "language",
    "tags",
    "headings",
    "sections",
    "token_count",
    "text",
    "char_start",
    "char_end",
    "new_text_offset",
    "page_start",
    "page_end",
    "pages",
)


@dataclass(frozen=True)
class AlsoIn:
    """Another document that holds the hit's passage word for word (`duplicates.collapse`)."""

    document_id: str
    external_id: str | None
    title: str | None
    citation: str
    citation_url: str | None
    section: str | None


@dataclass(frozen=True)
class Hit:
    rank: int  # 1 = best final score (the list itself is in document order)
    point_id: str
    document_id: str
    external_id: str | None
    chunk_index: int
    title: str | None
    source: str | None
    source_url: str | None
    language: str | None
    tags: list[str]
    headings: list[str]
    token_count: int
    text: str  # as embedded: may start with the previous chunk's overlap
    new_text: str  # the chunk's own text, without the overlap prefix
    passage: str  # the sentence of `new_text` that matched the query best (previews)
    page_start: int | None
    page_end: int | None
    dense_score: float | None
    sparse_score: float | None
    fused_score: float
    boost: float
    final_score: float
    citation: str
    citation_url: str | None
    section: str | None
    weak: bool = False  # dense cosine below SEARCH_WEAK_THRESHOLD (shared/retrieval/weak.py)
    #: The same passage in other documents (or elsewhere in this one), best first: the
    #: search shows it once (SEARCH_COLLAPSE_DUPLICATES).
    also_in: list[AlsoIn] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def make_hit(item: Ranked, rank: int, query: str) -> Hit:
    data = item.candidate.payload
    own = own_text(data)
    shown = passage(own, query)
    cite = citation(data, shown)
    return Hit(
        rank=rank,
        point_id=str(item.candidate.id),
        document_id=str(data.get("document_id")),
        external_id=data.get("external_id"),
        chunk_index=int(data.get("chunk_index") or 0),
        title=data.get("title"),
        source=data.get("source"),
        source_url=data.get("source_url"),
        language=data.get("language"),
        tags=list(data.get("tags") or []),
        headings=list(data.get("headings") or []),
        token_count=int(data.get("token_count") or 0),
        text=str(data.get("text") or ""),
        new_text=own,
        passage=shown,
        page_start=data.get("page_start"),
        page_end=data.get("page_end"),
        dense_score=item.candidate.dense,
        sparse_score=item.candidate.sparse,
        fused_score=item.candidate.score,
        boost=item.boost,
        final_score=item.final,
        citation=cite.markdown,
        citation_url=cite.url,
        section=cite.section,
        also_in=[_also_in(copy.payload, shown) for copy in item.also],
    )


def _also_in(data: dict[str, Any], shown: str) -> AlsoIn:
    cite = citation(data, shown)
    return AlsoIn(
        document_id=str(data.get("document_id")),
        external_id=data.get("external_id"),
        title=data.get("title"),
        citation=cite.markdown,
        citation_url=cite.url,
        section=cite.section,
    )
