"""Does Qdrant hold exactly the current chunks, each with the payload the record gives it?
(`ingest verify`, `ingest verify --repair`, reindex, and the tests.)

The points are read a page at a time with their payloads and no vectors; each page's expected
payloads are made from the record by `indexing.payload`, the function the upsert uses, so a
field the upsert writes is a field verify compares. A metadata edit or a hide that did not
reach the index shows up here as the document and the fields that differ.

`repair` makes the index match the record again, except for documents with a version in
flight (the pipeline is rewriting their points): drifted payloads are overwritten whole,
orphan points deleted, missing points embedded again from their chunk's text (the vectors
live only in Qdrant once a version is indexed; the tokens are counted on the version) and
upserted. Points without a sparse vector are left to `ingest reindex`.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from shared import repository as repo
from shared.adapters.index import VectorIndex
from shared.db import transaction
from shared.models import Chunk, Document, DocumentVersion
from shared.pipeline import indexing, wiring
from shared.pipeline.embed import Embedder
from shared.pipeline.vector_cache import cached_or_embedded
from shared.settings import Settings, get_settings

#: Payload fields not compared (nor read): the text, which the point id already stands for
#: (it is the hash of it), and `updated_at`, the document's update time when its version was
#: upserted, which finalize moves on in the record right after.
NOT_COMPARED = ("text", "updated_at")


@dataclass(frozen=True)
class Drift:
    """A document whose points carry other payload values than the record gives them."""

    document_id: uuid.UUID
    external_id: str
    title: str | None
    fields: tuple[str, ...]  # every field that differs on one of its points
    points: int


@dataclass(frozen=True)
class Repair:
    """What `verify(repair=True)` changed in the index."""

    rewritten: int  # points whose payload was overwritten with the record's
    deleted: int  # orphan points deleted
    restored: int  # missing points embedded again and upserted
    tokens: int  # spent on embedding them
    left: frozenset[uuid.UUID] = frozenset()  # documents in flight, left to the pipeline


@dataclass(frozen=True)
class VerifyReport:
    expected: int
    stored: int
    missing: set[uuid.UUID]  # current chunks without a point
    orphans: set[uuid.UUID]  # points that belong to no current chunk
    # Points without a sparse vector; None: the collection has none at all (made before
    # hybrid search; `ingest reindex` builds one with them).
    sparse_missing: int | None = 0
    drifted: tuple[Drift, ...] = ()  # by external id
    repair: Repair | None = None  # what was repaired (the fields above: what was found)

    @property
    def ok(self) -> bool:
        return (
            not self.missing and not self.orphans and self.sparse_missing == 0 and not self.drifted
        )

    @property
    def drifted_points(self) -> int:
        return sum(d.points for d in self.drifted)


def verify(settings: Settings | None = None, *, repair: bool = False) -> VerifyReport:
    """Compare the index with the record; `repair`: then make it match (see the module)."""
    settings = settings or get_settings()
    with transaction() as session:
        expected = repo.current_point_ids(session)
    embedder = wiring.embedder(settings)
    index = wiring.index_for(settings, embedder)
    stored: set[uuid.UUID] = set()
    orphans: dict[uuid.UUID, Any] = {}  # point -> the document id its payload names
    drift = _Drifts()
    rewritten = 0
    left: set[uuid.UUID] = set()
    for page in index.payload_pages(NOT_COMPARED):
        stored.update(point for point, _ in page)
        orphans.update((p, data.get("document_id")) for p, data in page if p not in expected)
        fixes = _compare(page, expected, drift)
        if repair and fixes:
            busy = _in_flight({document_id for document_id, _ in fixes.values()})
            left |= busy
            todo = {p: data for p, (d, data) in fixes.items() if d not in busy}
            index.overwrite_payloads(todo)
            rewritten += len(todo)
    missing = expected - stored
    sparse_missing = index.missing_sparse()
    done = None
    if repair:
        deleted, busy = _delete_orphans(index, orphans)
        restored, tokens, busy_missing = _restore(index, embedder, missing)
        done = Repair(rewritten, deleted, restored, tokens, frozenset(left | busy | busy_missing))
    return VerifyReport(
        len(expected),
        len(stored),
        missing,
        set(orphans),
        sparse_missing,
        drift.report(),
        done,
    )


def differing(expected: dict[str, Any], stored: dict[str, Any]) -> list[str]:
    """The payload fields whose stored value is not the expected one (either may lack it). A
    field left out counts as None: qdrant-client's local mode drops a None `set_payload` writes
    (a metadata version clearing a link), and no filter tells the two apart."""
    names = (expected.keys() | stored.keys()) - set(NOT_COMPARED)
    return sorted(n for n in names if expected.get(n) != stored.get(n))


def as_stored(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as Qdrant gives it back (JSON: tuples are lists)."""
    stored: dict[str, Any] = json.loads(json.dumps(payload))
    return stored


class _Drifts:
    """Differing fields and points, per document."""

    def __init__(self) -> None:
        self.fields: dict[uuid.UUID, set[str]] = defaultdict(set)
        self.points: dict[uuid.UUID, int] = defaultdict(int)
        self.names: dict[uuid.UUID, tuple[str, str | None]] = {}

    def add(self, document: Document, title: str | None, fields: list[str]) -> None:
        self.fields[document.id].update(fields)
        self.points[document.id] += 1
        self.names[document.id] = (document.external_id, title)

    def report(self) -> tuple[Drift, ...]:
        found = [
            Drift(d, *self.names[d], tuple(sorted(self.fields[d])), self.points[d])
            for d in self.fields
        ]
        return tuple(sorted(found, key=lambda d: (d.external_id, str(d.document_id))))


def _compare(
    page: list[tuple[uuid.UUID, dict[str, Any]]],
    expected: Collection[uuid.UUID],
    drift: _Drifts,
) -> dict[uuid.UUID, tuple[uuid.UUID, dict[str, Any]]]:
    """Note the page's drifted points; each one's document id and full expected payload."""
    with transaction() as session:
        rows = repo.current_chunks_at(session, [p for p, _ in page if p in expected])
        hidden = repo.hidden_points_of(session, sorted({d.id for _, _, d in rows}))
    by_point = {chunk.point_id: (chunk, version, document) for chunk, version, document in rows}
    fixes = {}
    for point, data in page:
        if point not in by_point:  # an orphan, or no longer current since the ids were read
            continue
        chunk, version, document = by_point[point]
        full = as_stored(indexing.payload(document, version, chunk, hidden))
        fields = differing(full, data)
        if fields:
            drift.add(document, full.get("title"), fields)
            fixes[point] = (document.id, full)
    return fixes


def _in_flight(document_ids: Collection[uuid.UUID]) -> set[uuid.UUID]:
    with transaction() as session:
        return repo.documents_in_flight(session, sorted(document_ids))


def _delete_orphans(
    index: VectorIndex, orphans: dict[uuid.UUID, Any]
) -> tuple[int, set[uuid.UUID]]:
    """Delete the orphan points, except those of a document in flight (its new version's
    points are orphans until finalize makes it current)."""
    owners = {point: _uuid(document_id) for point, document_id in orphans.items()}
    busy = _in_flight({d for d in owners.values() if d is not None})
    doomed = [point for point, owner in owners.items() if owner not in busy]
    index.delete(doomed)
    return len(doomed), busy


def _restore(
    index: VectorIndex, embedder: Embedder, missing: Collection[uuid.UUID]
) -> tuple[int, int, set[uuid.UUID]]:
    """Embed the missing points' chunks again and upsert them, version by version (their
    tokens counted on the version); documents in flight are left to the pipeline."""
    restored = tokens = 0
    busy: set[uuid.UUID] = set()
    for batch in _batches(sorted(missing), 512):
        with transaction() as session:
            rows = repo.current_chunks_at(session, batch, with_vectors=True)
            documents = sorted({d.id for _, _, d in rows})
            busy |= repo.documents_in_flight(session, documents)
            hidden = repo.hidden_points_of(session, documents)
        by_version: dict[uuid.UUID, list[tuple[Chunk, DocumentVersion, Document]]] = defaultdict(
            list
        )
        for row in rows:
            if row[2].id not in busy:
                by_version[row[1].id].append(row)
        for version_id, chunks in by_version.items():
            _, version, document = chunks[0]
            spent = _embed_again(embedder, version_id, [c for c, _, _ in chunks])
            tokens += spent
            points = indexing.points_for(document, version, [c for c, _, _ in chunks], hidden)
            index.upsert(points)
            restored += len(points)
    return restored, tokens, busy


def _embed_again(embedder: Embedder, version_id: uuid.UUID, chunks: Sequence[Chunk]) -> int:
    """Vectors for the chunks that have none kept (set on the rows, not stored), from the
    vector cache or the API; the tokens spent."""
    pending = [
        indexing.PendingChunk(c.id, c.point_id, list(c.headings), c.text, c.sections)
        for c in chunks
        if c.vector is None
    ]
    vectors, tokens = cached_or_embedded(embedder, version_id, pending)
    for chunk in chunks:
        if chunk.id in vectors:
            chunk.vector = vectors[chunk.id][0]
    return tokens


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def _batches(items: Sequence[uuid.UUID], size: int) -> list[Sequence[uuid.UUID]]:
    return [items[start : start + size] for start in range(0, len(items), size)]
