"""A throw-away index in a temporary folder, built from a folder with given settings (`ingest eval
--corpus DIR --set CHUNK_TARGET_TOKENS=300`): compare chunk settings without touching the
production database or collection. The same convert, chunk, embed and payload code as the
pipeline; only Postgres is left out."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from shared.adapters.index import VectorIndex
from shared.adapters.qdrant_edge import EdgeIndex
from shared.documents import described_fields, described_tags
from shared.models import Chunk as ChunkRow
from shared.models import Document, DocumentVersion, utcnow
from shared.pipeline import indexing
from shared.pipeline.chunk import ChunkSettings, chunk_markdown, front_matter, normalise
from shared.pipeline.convert import Converted, convert, detect_media_type
from shared.pipeline.embed import Embedder
from shared.settings import Settings

SUFFIXES = {".md", ".markdown", ".txt", ".pdf"}


def corpus_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)


def build(
    files: Iterable[Path],
    root: Path,
    settings: Settings,
    embedder: Embedder,
    index: VectorIndex | None = None,
    converted: Callable[[Path], Converted] | None = None,
) -> tuple[VectorIndex, int]:
    """Index `files` (external ids relative to `root`) into `index`, by default a fresh
    collection in a temporary folder (the caller closes it); returns the index and the
    embedding tokens spent (an input embedded before, in any file, is not sent again: as the
    pipeline's vector cache).
    `converted` gives a file's conversion (a benchmark's cache); by default the file is
    converted."""
    if index is None:
        index = EdgeIndex.temporary("eval", embedder.dimensions)
    index.ensure_collection()
    tokens = 0
    seen: dict[str, bytes] = {}  # embedding input -> vector
    for path in files:
        result = converted(path) if converted else _convert(path, settings)
        described = dict(result.metadata)
        described.update(front_matter(normalise(result.markdown))[0])
        given = described_fields(described)  # as the pipeline describes a new document
        external_id = path.relative_to(root).as_posix()
        document = Document(
            # ids from the path: the same build has the same point ids, and equal scores,
            # ordered by id last (`index.in_order`), rank alike from run to run
            id=uuid.uuid5(uuid.NAMESPACE_URL, f"files/{external_id}"),
            source="files",
            external_id=external_id,
            title=given.get("title"),
            source_url=given.get("source_url"),
            language=given.get("language"),
            tags=described_tags(described) or [],
            updated_at=utcnow(),
        )
        version = DocumentVersion(id=uuid.uuid5(document.id, "version"), document_id=document.id)
        chunks = chunk_markdown(result.markdown, ChunkSettings.from_settings(settings))
        found = indexing.chunk_rows(document.id, chunks, result, document.language)
        rows = [ChunkRow(**row) for row in found]
        pending = [
            indexing.PendingChunk(n, r.point_id, list(r.headings), r.text, r.sections)
            for n, r in enumerate(rows)
        ]
        todo = []
        for chunk in pending:  # an input embedded before, in any file: as the vector cache
            rows[chunk.chunk_id].vector = seen.get(indexing.embedding_text(chunk))
            if rows[chunk.chunk_id].vector is None:
                todo.append(chunk)
        for group in indexing.groups(todo, 512):
            vectors, usage = indexing.embed_group(embedder, group)
            tokens += usage.tokens
            for chunk in group:
                vector = vectors[chunk.chunk_id][0]
                rows[chunk.chunk_id].vector = seen[indexing.embedding_text(chunk)] = vector
        index.upsert(indexing.points_for(document, version, rows))
    return index, tokens


def _convert(path: Path, settings: Settings) -> Converted:
    data = path.read_bytes()
    return convert(data, detect_media_type(data, path.name), path.name, settings=settings)
