"""The vector cache as the embed stage and `ingest reindex` use it: identical text is
embedded once.

A chunk whose embedding input (`indexing.embedding_text`: heading line and text) was embedded
before with this embedder, in any document, takes the stored vector instead of an API call.
The key (`indexing.cache_key`) names provider, model and dimensions, so a reindex to another
model embeds everything anew. Only vectors the API returned are kept (the rows:
`repository.vector_cache`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.db import transaction
from shared.pipeline import indexing
from shared.pipeline.embed import Embedder


class VectorCache:
    """The cache keys of the chunks one step embeds, and the lookups and writes by them."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.keys: dict[int, str] = {}  # chunk id -> key
        self.texts: dict[int, str] = {}  # chunk id -> embedding input

    def add(self, chunks: Iterable[indexing.PendingChunk]) -> dict[int, str]:
        """Key the chunks; answers their embedding inputs, by chunk id."""
        texts = {chunk.chunk_id: indexing.embedding_text(chunk) for chunk in chunks}
        self.texts.update(texts)
        self.keys.update({cid: indexing.cache_key(self.embedder, t) for cid, t in texts.items()})
        return texts

    def lookup(self, session: Session, chunk_ids: Iterable[int]) -> dict[int, tuple[bytes, bool]]:
        """Vectors the cache holds for these chunks, marked not sent to the API."""
        wanted = [cid for cid in chunk_ids if cid in self.keys]
        found = repo.cached_vectors(session, [self.keys[cid] for cid in wanted])
        return {cid: (found[self.keys[cid]], False) for cid in wanted if self.keys[cid] in found}

    def remember(self, session: Session, vectors: dict[int, tuple[bytes, bool]]) -> None:
        """Keep the vectors the API returned for keyed chunks."""
        keys = self.keys
        entries = {keys[cid]: data for cid, (data, sent) in vectors.items() if sent and cid in keys}
        repo.remember_vectors(session, self.embedder.model, self.embedder.dimensions, entries)


def cached_or_embedded(
    embedder: Embedder, version_id: uuid.UUID, pending: Sequence[indexing.PendingChunk]
) -> tuple[dict[int, tuple[bytes, bool]], int]:
    """Vectors for one version's chunks outside the embed stage (a re-index, a repair): from
    the cache, else from the API in groups of 512, each group kept in the cache and its usage
    counted on the version; the tokens spent."""
    cache = VectorCache(embedder)
    cache.add(pending)
    with transaction() as session:
        vectors = cache.lookup(session, cache.keys)
    tokens = 0
    for group in indexing.groups([c for c in pending if c.chunk_id not in vectors], 512):
        embedded, usage = indexing.embed_group(embedder, group)
        vectors.update(embedded)
        tokens += usage.tokens
        with transaction() as session:
            cache.remember(session, embedded)
            repo.add_usages(
                session,
                {version_id: usage.tokens},
                {version_id: usage.requests},
                {version_id: len(group)},
            )
    return vectors, tokens
