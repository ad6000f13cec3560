"""Metadata versions (issue 29 item 1) on the real Postgres, local Qdrant and the OpenAI
stand-in, the steps run in this process in a chosen order: a field change reaches the
current points without a token, and a content version in flight carries the newest fields
when it finalizes, whichever of the two came first."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from shared import repository as repo
from shared.db import transaction
from shared.pipeline import steps, wiring
from shared.pipeline.verify import verify
from shared.states import Status
from tests.support.pipeline import PipelineEnv, document_point_ids
from tests.support.steps import register, to_embedding
from tests.support.versions import new_version

FIRST = (
    b"# Knie\n\n## Voorbereiding\n\nNeem uw identiteitsbewijs mee.\n\n"
    b"## Herstel\n\nU loopt met krukken.\n"
)
SECOND = FIRST + b"\n## Koorts\n\nBel de afdeling bij koorts boven 38,5 graden.\n"


def indexed(version_id: uuid.UUID) -> None:
    """Take a registered content version through every stage here."""
    upserted(version_id)
    finalized = steps.finalize_versions([version_id], "finalize", handover_from="upsert")
    assert finalized.done == [version_id]


def upserted(version_id: uuid.UUID) -> None:
    """Convert, chunk, embed and upsert here; finalize takes the upsert's leases over."""
    to_embedding(version_id)
    steps.embed_versions([version_id], "embed", take_waiting=False)
    assert steps.upsert_versions([version_id], "upsert", handover_from="embed").done


def patch(version_id: uuid.UUID, **given: Any) -> repo.Registered:
    """What `PATCH /v1/documents/{id}` registers, for the document of `version_id`."""
    with transaction() as session:
        version = repo.load_version(session, version_id)
        assert version is not None
        registered = repo.register_field_changes(session, version.document_id, given, "editors")
    assert registered is not None
    return registered


def payloads(pipeline: PipelineEnv, version_id: uuid.UUID) -> list[dict[str, Any]]:
    """Every point of the version's document, as the index holds it."""
    with transaction() as session:
        version = repo.load_version(session, version_id)
        assert version is not None
        document_id = version.document_id
    settings = pipeline.settings
    index = wiring.index_for(settings, wiring.embedder(settings))
    return [p.payload for p in index.retrieve(list(document_point_ids(index, document_id)))]


def test_a_field_change_rewrites_the_current_points_and_spends_no_token(
    pipeline: PipelineEnv,
) -> None:
    first = register(FIRST, "knie", title="Knie foldr")
    indexed(first)
    requests = len(pipeline.fake.requests)

    change = patch(first, title="Knieoperatie", tags=["orthopedie", "nieuw"])
    assert change.status is Status.RECEIVED and change.changed == ("title", "tags")
    assert steps.relabel_versions([change.version_id], "relabel").done == [change.version_id]

    assert len(pipeline.fake.requests) == requests  # nothing embedded
    stored = payloads(pipeline, first)
    assert stored and {p["title"] for p in stored} == {"Knieoperatie"}
    assert all(p["tags"] == ["orthopedie", "nieuw"] for p in stored)
    with transaction() as session:
        version = repo.load_version(session, change.version_id)
        assert version is not None
        assert (version.kind, version.status, version.tokens_spent) == ("metadata", "indexed", 0)
        events = repo.document_events(session, version.document_id)
    assert "metadata updated: title, tags" in [e.detail for e in events]

    again = patch(first, title="Knieoperatie", tags=["orthopedie", "nieuw"])
    assert again.status is Status.UNCHANGED and again.changed == ()  # no version made
    assert steps.relabel_versions([change.version_id], "relabel").stopped == [change.version_id]
    assert verify().ok


def test_a_content_version_upserted_before_a_field_change_carries_it_when_it_finalizes(
    pipeline: PipelineEnv,
) -> None:
    first = register(FIRST, "knie", title="Heup foldr")
    indexed(first)
    second = register(SECOND, "knie")
    upserted(second)  # its points carry "Heup foldr"

    change = patch(first, title="Heupoperatie", tags=["heup"])
    steps.relabel_versions([change.version_id], "relabel")  # on the first version's points
    assert steps.finalize_versions([second], "finalize", handover_from="upsert").done == [second]

    stored = payloads(pipeline, second)
    assert stored and {p["version_id"] for p in stored} == {str(second)}
    assert {p["title"] for p in stored} == {"Heupoperatie"}
    assert all(p["tags"] == ["heup"] for p in stored)
    assert verify().ok


def test_a_field_change_before_the_upsert_is_in_the_new_points(pipeline: PipelineEnv) -> None:
    first = register(FIRST, "knie", title="Oud")
    indexed(first)
    second = register(SECOND, "knie")
    change = patch(first, title="Nieuw")
    steps.relabel_versions([change.version_id], "relabel")
    indexed(second)

    assert {p["title"] for p in payloads(pipeline, second)} == {"Nieuw"}
    with transaction() as session:
        version = repo.load_version(session, second)
        assert version is not None and version.status == Status.INDEXED


def test_a_page_sent_by_url_with_a_new_title_relabels_at_once(pipeline: PipelineEnv) -> None:
    """Its bytes are known only once fetched, and may be the indexed ones (then the version
    ends `unchanged`): the title goes to the current points by a metadata version made with
    it."""
    first = register(FIRST, "knie", title="Oud")
    indexed(first)
    by_url = new_version(
        b"", "knie", filename="knie.md", title="Nieuw", content_url="https://cms.example/knie"
    )
    by_url = dataclasses.replace(by_url, sha256="")
    with transaction() as session:
        registered = repo.register_version(session, by_url)
    assert registered.kind == "content" and registered.relabel_id is not None
    assert steps.relabel_versions([registered.relabel_id], "relabel").done

    assert {p["title"] for p in payloads(pipeline, first)} == {"Nieuw"}
