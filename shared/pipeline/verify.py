"""Does Qdrant hold exactly the current chunks? (`ingest verify`, and the tests.)"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from shared import repository as repo
from shared.db import transaction
from shared.pipeline import wiring
from shared.settings import Settings, get_settings


@dataclass(frozen=True)
class VerifyReport:
    expected: int
    stored: int
    missing: set[uuid.UUID]  # current chunks without a point
    orphans: set[uuid.UUID]  # points that belong to no current chunk
    # Points without a sparse vector; None: the collection has none at all (made before
    # hybrid search; `ingest reindex` builds one with them).
    sparse_missing: int | None = 0

    @property
    def ok(self) -> bool:
        return not self.missing and not self.orphans and self.sparse_missing == 0


def verify(settings: Settings | None = None) -> VerifyReport:
    settings = settings or get_settings()
    with transaction() as session:
        expected = repo.current_point_ids(session)
    index = wiring.index_for(settings, wiring.embedder(settings))
    stored = index.all_point_ids()
    return VerifyReport(
        len(expected), len(stored), expected - stored, stored - expected, index.missing_sparse()
    )
