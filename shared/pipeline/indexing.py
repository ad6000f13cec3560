"""What the embed, upsert and finalize stages share: point ids, payloads, vector reuse.

Point id = UUID5(document id, chunk content hash, occurrence): an unchanged chunk keeps its
point across versions, so an edit re-embeds only what changed and a re-run overwrites instead
of duplicating.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from shared import sparse
from shared.adapters.index import Point, SparseVector, VectorIndex
from shared.models import Chunk as ChunkRow
from shared.models import Document, DocumentVersion
from shared.pipeline.chunk import Chunk
from shared.pipeline.convert import Converted
from shared.pipeline.embed import HEADING_SEPARATOR, Embedder, embedding_input
from shared.tags import MAX_TAGS
from shared.urls import safe_url

POINT_NAMESPACE = uuid.UUID("6f1d3c52-4a8e-5b7e-9c1a-2d0e8f4b7a10")
_COLUMNS = {"index", "text", "token_count", "headings", "kinds", "char_start", "char_end"}
#: Kept once per version (`conversion["front_matter"]`), never per chunk: up to 64 KB of
#: front matter copied into 2,000 chunk rows grew the table by 139 MB for a 184 KB upload.
_NOT_PER_CHUNK = _COLUMNS | {"metadata"}
#: Each heading of a chunk's path, as its row and payload carry it (and the embedding input
#: names it): every chunk of a section repeats its path, so a 50 KB "heading" would be
#: copied into each of them.
MAX_HEADING_CHARS = 300
#: A title as a payload carries it (the document's column holds as much).
MAX_TITLE_CHARS = 1000


def point_id(document_id: uuid.UUID, content_hash: str, occurrence: int) -> uuid.UUID:
    return uuid.uuid5(POINT_NAMESPACE, f"{document_id}:{content_hash}:{occurrence}")


def chunk_rows(
    document_id: uuid.UUID,
    chunks: Sequence[Chunk],
    converted: Converted,
    language: str | None = None,
) -> list[dict[str, Any]]:
    """Database rows for the chunker's output, with hashes, point ids, page ranges and the
    lexical vector in the document's `language`."""
    seen: Counter[str] = Counter()
    rows = []
    for chunk in chunks:
        digest = hashlib.sha256(chunk.text.encode("utf-8")).hexdigest()
        occurrence = seen[digest]
        seen[digest] += 1
        pages = converted.pages_for(chunk.char_start, chunk.char_end)
        data = chunk.to_dict()
        headings = short_path(chunk.headings)
        data["heading"] = headings[-1] if headings else None
        data["sections"] = [
            {**section, "headings": short_path(section.get("headings") or [])}
            for section in chunk.sections
        ]
        data["pages"] = page_marks(converted, chunk.char_start, chunk.char_end)
        confidence = converted.ocr_confidence(chunk.char_start, chunk.char_end)
        if confidence is not None:  # text read from a scan: say so, and how sure OCR was
            data.update(ocr=True, ocr_confidence=confidence)
        rows.append(
            {
                "document_id": document_id,
                "index": chunk.index,
                "point_id": point_id(document_id, digest, occurrence),
                "content_hash": digest,
                "text": chunk.text,
                "token_count": chunk.token_count,
                "headings": headings,
                "kinds": list(chunk.kinds),
                "char_start": chunk.char_start,
                "char_end": chunk.char_end,
                "page_start": pages[0] if pages else None,
                "page_end": pages[1] if pages else None,
                "extra": {k: v for k, v in data.items() if k not in _NOT_PER_CHUNK},
                "sparse": lexical_vector(headings, chunk.text, language),
            }
        )
    return rows


def short_path(headings: Sequence[str]) -> list[str]:
    """A heading path with each heading cut to `MAX_HEADING_CHARS` (an ellipsis marks it)."""
    return [
        h if len(h) <= MAX_HEADING_CHARS else h[: MAX_HEADING_CHARS - 1] + "…" for h in headings
    ]


def page_marks(converted: Converted, char_start: int, char_end: int) -> list[list[int]] | None:
    """`[offset, page]` for each page the chunk's own text is on, offsets from `char_start`:
    the citation names the page of the sentence that matched (`retrieval.anchor`)."""
    pages = converted.pages_for(char_start, char_start + 1)
    if pages is None:  # no page map (not a PDF)
        return None
    marks = [[0, pages[0]]]
    marks += [[o - char_start, p] for o, p in converted.page_starts if char_start < o < char_end]
    return marks


@dataclass(frozen=True)
class PendingChunk:
    chunk_id: int
    point_id: uuid.UUID
    headings: list[str]
    text: str
    sections: Sequence[dict[str, Any]] = ()


@dataclass(frozen=True)
class Usage:
    tokens: int
    requests: int


def to_bytes(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_bytes(data: bytes) -> list[float]:
    vector: list[float] = np.frombuffer(data, dtype=np.float32).tolist()
    return vector


def reuse_vectors(
    index: VectorIndex, pending: Sequence[PendingChunk]
) -> dict[int, tuple[bytes, bool]]:
    """Vectors of chunks whose point already exists with this model: no API call for them."""
    stored = index.existing_vectors([chunk.point_id for chunk in pending])
    return {
        c.chunk_id: (to_bytes(stored[c.point_id]), False) for c in pending if c.point_id in stored
    }


def groups(items: Sequence[PendingChunk], size: int) -> Iterator[Sequence[PendingChunk]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def embedding_text(chunk: PendingChunk) -> str:
    """What is embedded for a chunk: its heading path and the other sections it covers, then
    its text (`embedding_input`). The pipeline's embed stage, reindex and `ingest eval` all
    send this, so the same chunk gets the same vector whichever path embedded it."""
    return embedding_input(chunk.headings, chunk.text, chunk.sections)


def cache_key(embedder: Embedder, text: str) -> str:
    """The vector cache's key for an embedding input: provider, model and dimensions are in
    it, so a reindex to another model (or size) never reuses a vector of the old one."""
    named = f"{embedder.name}\n{embedder.model}\n{embedder.dimensions}\n{text}"
    return hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()


def embed_group(
    embedder: Embedder, group: Sequence[PendingChunk]
) -> tuple[dict[int, tuple[bytes, bool]], Usage]:
    """Embed one group; identical inputs (repeated boilerplate) are sent once."""
    inputs = [embedding_text(chunk) for chunk in group]
    unique = list(dict.fromkeys(inputs))
    result = embedder.embed(unique)
    by_input = dict(zip(unique, result.vectors, strict=True))
    vectors = {
        c.chunk_id: (to_bytes(by_input[text]), True) for c, text in zip(group, inputs, strict=True)
    }
    return vectors, Usage(result.tokens, result.requests)


def payload(
    document: Document,
    version: DocumentVersion,
    chunk: ChunkRow,
    hidden_points: Collection[uuid.UUID] = (),
) -> dict[str, Any]:
    """What the chatbot reads back with a hit: the text, where it sits, and whose it is.
    `hidden`: an editor hid the document, or this chunk (its point id is in `hidden_points`):
    every search leaves it out (`retrieval.filters`)."""
    extra = chunk.extra or {}
    return {
        "text": chunk.text,
        "headings": list(chunk.headings),
        "sections": chunk.sections,
        "section": extra.get("heading"),
        "heading_level": extra.get("heading_level"),
        "chunk_index": chunk.index,
        "token_count": chunk.token_count,
        "kinds": list(chunk.kinds),
        "page_start": chunk.page_start,
        "page_end": chunk.page_end,
        "pages": extra.get("pages"),
        "document_id": str(document.id),
        "version_id": str(version.id),
        "source": document.source,
        "external_id": document.external_id,
        **document_fields(document, version),
        # For retrieval: the chunk's own text without overlap (`text[new_text_offset:]` for
        # `char_end - char_start` characters), filters on a chapter or section
        # (every prefix of the heading path) and on the last update.
        "char_start": chunk.char_start,
        "char_end": chunk.char_end,
        "new_text_offset": extra.get("new_text_offset", 0),
        "heading_paths": heading_paths(list(chunk.headings)),
        "hidden": is_hidden(document, chunk.point_id, hidden_points),
        **_ocr_payload(extra),
    }


def document_fields(document: Document, version: DocumentVersion) -> dict[str, Any]:
    """The payload fields every point of the document carries from its record: what a
    metadata version rewrites on the current points (`steps.relabel`), without re-embedding."""
    return {
        "title": _title(document, version),
        "source_url": safe_url(document.source_url),  # the chatbot shows it as a link
        "language": document.language,
        "tags": list(document.tags or [])[:MAX_TAGS],  # rows from before the limit too
        "updated_at": _iso(document.updated_at),
    }


def is_hidden(
    document: Document, point: uuid.UUID, hidden_points: Collection[uuid.UUID] = ()
) -> bool:
    """Whether a point is hidden from search: its document is, or the chunk itself."""
    return document.hidden_at is not None or point in hidden_points


def _title(document: Document, version: DocumentVersion) -> str | None:
    title = document.title or (version.conversion or {}).get("metadata", {}).get("title")
    return str(title)[:MAX_TITLE_CHARS] if title else None


def heading_paths(headings: list[str]) -> list[str]:
    """`["A", "B"]` -> `["A", "A > B"]`: a keyword per prefix, so a section filter is a match."""
    return [HEADING_SEPARATOR.join(headings[: n + 1]) for n in range(len(headings))]


def _iso(moment: Any) -> str | None:
    return moment.isoformat() if moment is not None else None


def lexical_vector(headings: list[str], text: str, language: str | None) -> dict[str, list[Any]]:
    """The chunk's lexical vector: heading path and text, stemmed in the document's language."""
    terms = sparse.document_vector(embedding_input(headings, text), language)
    return {"indices": terms.indices, "values": terms.values}


def sparse_vector(data: dict[str, Any], stored: dict[str, list[Any]] | None = None) -> SparseVector:
    """The point's sparse vector: the one stored with the chunk, else made from the payload."""
    terms = stored or lexical_vector(
        data.get("headings") or [], data.get("text") or "", data.get("language")
    )
    return SparseVector(terms["indices"], terms["values"])


def _ocr_payload(extra: dict[str, Any]) -> dict[str, Any]:
    """`ocr: true` and the mean word confidence for text read from a scan; nothing else."""
    if not extra.get("ocr"):
        return {}
    return {"ocr": True, "ocr_confidence": extra.get("ocr_confidence")}


def points_for(
    document: Document,
    version: DocumentVersion,
    chunks: Sequence[ChunkRow],
    hidden_points: Collection[uuid.UUID] = (),
) -> list[Point]:
    """The chunks' points; `hidden_points`: the document's hidden chunks
    (`repo.hidden_points_of`)."""
    points = []
    for chunk in chunks:
        if chunk.vector is None:
            continue
        data = payload(document, version, chunk, hidden_points)
        points.append(
            Point(chunk.point_id, from_bytes(chunk.vector), data, sparse_vector(data, chunk.sparse))
        )
    return points
