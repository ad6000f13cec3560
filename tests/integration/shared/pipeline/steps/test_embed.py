"""The embed stage sends the same text for a chunk as reindex and `ingest eval` do: its
heading path with the titles of the other sections it covers, then its text, so one chunk
gets one vector whichever path embedded it."""

from __future__ import annotations

import numpy as np

from shared import repository as repo
from shared.db import transaction
from shared.pipeline import indexing, steps
from tests.support.fakes.openai_server import vector_for
from tests.support.pipeline import PipelineEnv
from tests.support.steps import register, to_embedding

PAGE = """# Knie

## Voorbereiding

Neem uw identiteitsbewijs mee.

## Herstel

U loopt de dag na de operatie met krukken.

## Pijn

U krijgt pijnstillers mee naar huis.
"""


def test_the_embed_stage_names_every_section_a_chunk_covers(pipeline: PipelineEnv) -> None:
    version_id = register(PAGE.encode(), "knie")
    to_embedding(version_id)
    steps.embed_versions([version_id], "embed", take_waiting=False)

    with transaction() as session:
        (row,) = repo.chunks_with_vectors_of(session, [version_id])
        chunk = indexing.PendingChunk(
            row.id, row.point_id, list(row.headings), row.text, row.sections
        )
        stored = indexing.from_bytes(row.vector)
    sent = indexing.embedding_text(chunk)
    heading_line = sent.splitlines()[0]
    assert all(title in heading_line for title in ("Voorbereiding", "Herstel", "Pijn"))
    dimensions = int(pipeline.env["EMBEDDING_DIMENSIONS"])
    np.testing.assert_allclose(stored, vector_for(sent, dimensions), rtol=1e-5, atol=1e-6)
