"""Which embedder and which index this process uses: built once per settings object and
shared (the embedder's client pools connections; local Qdrant locks its folder to one
client), with the active collection read from Postgres (`ingest reindex` switches it)."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy.orm import Session

from shared import repository as repo
from shared.adapters.qdrant import QdrantIndex, collection_name
from shared.db import transaction
from shared.pipeline.embed import Embedder, make_embedder
from shared.settings import Settings

_cache: dict[str, Any] = {}
_cache_lock = threading.Lock()


def embedder(settings: Settings) -> Embedder:
    """One embedder per process and settings object (its client pools connections)."""
    with _cache_lock:
        if _cache.get("settings") is not settings:
            _cache.clear()
            _cache["settings"] = settings
            _cache["embedder"] = make_embedder(settings)
        embedder: Embedder = _cache["embedder"]
        return embedder


def collection_for(session: Session, settings: Settings, model: Embedder) -> str:
    """The collection the fleet uses now: `QDRANT_COLLECTION`, else the one `ingest reindex`
    switched to (kept in Postgres, read on every stage so a switch needs no redeploy), else
    the one named after the model and size."""
    if settings.qdrant_collection:
        return settings.qdrant_collection
    active = repo.active_collection(session, model.model, model.dimensions)
    return active or collection_name(model.model, model.dimensions)


def index_for(settings: Settings, embedder: Embedder, name: str | None = None) -> QdrantIndex:
    """The index for collection `name`, or for the active collection (read now) when None."""
    if name is None:
        with transaction() as session:
            name = collection_for(session, settings, embedder)
    key = f"index:{name}"
    with _cache_lock:
        if key not in _cache:
            _cache[key] = QdrantIndex.from_settings(settings, name, embedder.dimensions)
        index: QdrantIndex = _cache[key]
        return index
