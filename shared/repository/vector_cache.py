"""The vector cache: vectors by embedding input (`indexing.cache_key`), across documents.

One row per distinct input and model: a copied page or a paragraph repeated on many pages
is paid for once. Rows outlive their documents on purpose (a re-upload after a delete costs
nothing); they are as many as the distinct inputs ever embedded with a model, about one
chunk's vector each (6 KB at 1536 dimensions). After a move to another model the old model's
rows are dead weight: `DELETE FROM vector_cache WHERE model = '<old model>'`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from shared.models import CachedVector
from shared.repository.versions import dialect_insert

VECTOR_CACHE = cast(sa.Table, CachedVector.__table__)
_LOOKUP = 500  # keys per SELECT: well under either backend's limit on bound parameters


def cached_vectors(session: Session, keys: Collection[str]) -> dict[str, bytes]:
    """`{key: float32 bytes}` for the keys the cache holds."""
    wanted = sorted(set(keys))
    found: dict[str, bytes] = {}
    for start in range(0, len(wanted), _LOOKUP):
        rows = session.execute(
            sa.select(VECTOR_CACHE.c.key, VECTOR_CACHE.c.vector).where(
                VECTOR_CACHE.c.key.in_(wanted[start : start + _LOOKUP])
            )
        )
        found.update({key: bytes(vector) for key, vector in rows})
    return found


def remember_vectors(
    session: Session, model: str, dimensions: int, vectors: Mapping[str, bytes]
) -> None:
    """Keep `{key: float32 bytes}`; a key already kept (another worker was first) stays."""
    if not vectors:
        return
    insert = dialect_insert(session)
    session.execute(
        insert(VECTOR_CACHE).on_conflict_do_nothing(index_elements=["key"]),
        [
            {"key": key, "model": model, "dimensions": dimensions, "vector": data}
            for key, data in sorted(vectors.items())
        ],
    )
