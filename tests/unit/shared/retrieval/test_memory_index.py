"""`ingest eval`'s in-memory index embeds each chunk as the pipeline does: heading path and the
titles of the other sections the chunk covers (`indexing.embedding_text`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shared.adapters.qdrant_edge import EdgeIndex
from shared.pipeline.embed import embedding_input
from shared.pipeline.embed.hashing import HashingEmbedder
from shared.retrieval.memory_index import build
from shared.settings import Settings


def test_a_chunk_over_two_sections_is_embedded_with_both_titles(tmp_path: Path) -> None:
    (tmp_path / "heup.md").write_text(
        "# Heup\n\n## Operatie\n\nDe operatie duurt een uur.\n\n## Herstel thuis\n\n"
        "Na zes weken mag u weer autorijden.\n",
        encoding="utf-8",
    )
    embedder = HashingEmbedder(64)
    index = EdgeIndex.temporary("eval", 64)
    build([tmp_path / "heup.md"], tmp_path, Settings(_env_file=None), embedder, index)  # type: ignore[call-arg]
    (point,) = index.retrieve(list(index.all_point_ids()))
    index.close()
    data = point.payload
    assert len(data["sections"]) > 1  # one chunk, several sections
    wanted = embedder.vector(embedding_input(data["headings"], data["text"], data["sections"]))
    assert np.asarray(point.vector) == pytest.approx(np.asarray(wanted), abs=1e-6)
