"""New versions as the API, the CMS webhook or `ingest run` hand them to the repository: one
place that fills in what every test would otherwise repeat (the bytes' sha256, Markdown)."""

from __future__ import annotations

import hashlib
from typing import Any

from shared.documents import NewVersion


def new_version(
    content: bytes,
    external_id: str = "page",
    *,
    source: str = "upload",
    media_type: str = "text/markdown",
    **fields: Any,
) -> NewVersion:
    """A version of `content` under (source, external_id); `fields` as `NewVersion`'s."""
    return NewVersion(
        source=source,
        external_id=external_id,
        content=content,
        sha256=hashlib.sha256(content).hexdigest(),
        media_type=media_type,
        **fields,
    )
