"""Which embedder and which index this process uses: built once per settings object and
shared (the embedder's client pools connections; the embedded index locks its folder to one
process; indexes dropped from the cache are closed), with the active collection read from
Postgres (`ingest reindex` switches it)."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.adapters.index import VectorIndex, collection_name, open_index
from shared.db import transaction
from shared.pipeline.embed import Embedder, make_embedder
from shared.settings import Settings

_cache: dict[str, Any] = {}
_cache_lock = threading.Lock()


def embedder(settings: Settings) -> Embedder:
    """One embedder per process and settings object (its client pools connections)."""
    with _cache_lock:
        if _cache.get("settings") is not settings:
            _drop()
            _cache["settings"] = settings
            _cache["embedder"] = make_embedder(settings)
        embedder: Embedder = _cache["embedder"]
        return embedder


def _drop() -> None:
    """Empty the cache, closing its indexes (an embedded shard unlocks its folder)."""
    for key, value in list(_cache.items()):
        if key.startswith("index:"):
            value.close()
    _cache.clear()


def collection_for(session: Session, settings: Settings, model: Embedder) -> str:
    """The collection the fleet uses now: `QDRANT_COLLECTION`, else the one `ingest reindex`
    switched to (kept in Postgres, read on every stage so a switch needs no redeploy), else
    the one named after the model and size."""
    if settings.qdrant_collection:
        return settings.qdrant_collection
    active = repo.active_collection(session, model.model, model.dimensions)
    return active or collection_name(model.model, model.dimensions)


def index_for(settings: Settings, embedder: Embedder, name: str | None = None) -> VectorIndex:
    """The index for collection `name`, or for the active collection (read now) when None."""
    if name is None:
        with transaction() as session:
            name = collection_for(session, settings, embedder)
    key = f"index:{settings.qdrant_url or settings.qdrant_path}:{name}"
    with _cache_lock:
        if key not in _cache:
            _cache[key] = open_index(settings, name, embedder.dimensions)
        index: VectorIndex = _cache[key]
        return index
