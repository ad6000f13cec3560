"""Round trips a page does not need, gone without losing a guarantee: the stages called in this
process on the real Postgres, local Qdrant and the OpenAI stand-in."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from shared import repository as repo
from shared.db import engine, transaction
from shared.models import Document
from shared.pipeline import steps, wiring
from shared.states import Status
from tests.support.pipeline import PipelineEnv
from tests.support.steps import register, to_embedding

PAGE = """---
title: Knee surgery
lang: en
tags: [orthopaedics, surgery]
---
# Knee surgery

## Preparation

Bring your identity card and the list of medicines you take. Do not eat after midnight.
"""


@contextmanager
def commits() -> Iterator[list[str]]:
    """The transactions committed on the service's engine meanwhile."""
    seen: list[str] = []

    def count(_connection: object) -> None:
        seen.append("commit")

    sa.event.listen(engine(), "commit", count)
    try:
        yield seen
    finally:
        sa.event.remove(engine(), "commit", count)


def status(version_id: uuid.UUID) -> Status:
    with transaction() as session:
        version = repo.load_version(session, version_id)
        assert version is not None
        return Status(version.status)


def test_an_embed_task_whose_page_another_task_carries_on_stops_there(
    pipeline: PipelineEnv,
) -> None:
    version_id = register(PAGE.encode())
    to_embedding(version_id)
    carried = steps.embed_versions([version_id], "carrier", take_waiting=False)
    assert carried.go_on == [version_id] and status(version_id) is Status.UPSERTING

    # The page's own embed message, delivered late: the carrier still holds the page for its
    # upsert, so sending upsert again would only wait on it (and retry, and run finalize).
    late = steps.embed_versions([version_id], "own-embed-task")

    assert late.go_on == [] and late.stopped == [version_id]
    # A redelivery of the carrier's own message (same task id) does go on.
    assert steps.embed_versions([version_id], "carrier").go_on == [version_id]


def test_finalize_of_a_new_page_commits_once_and_an_edit_deletes_its_stale_points(
    pipeline: PipelineEnv,
) -> None:
    first = register(PAGE.encode())
    to_embedding(first)
    outcome = steps.embed_versions([first], "embed-1", take_waiting=False)
    outcome = steps.upsert_versions(outcome.go_on, "upsert-1", handover_from="embed-1")
    with commits() as seen:
        done = steps.finalize_versions(outcome.go_on, "finalize-1", handover_from="upsert-1")
    assert done.go_on == [first] and status(first) is Status.INDEXED
    assert len(seen) == 1  # claim, make current and its events together: nothing was stale

    edited = register(PAGE.replace("midnight", "ten in the evening").encode())
    to_embedding(edited)
    outcome = steps.embed_versions([edited], "embed-2", take_waiting=False)
    outcome = steps.upsert_versions(outcome.go_on, "upsert-2", handover_from="embed-2")
    with commits() as seen:
        done = steps.finalize_versions(outcome.go_on, "finalize-2", handover_from="upsert-2")
    assert done.go_on == [edited] and status(edited) is Status.INDEXED
    assert status(first) is Status.SUPERSEDED
    assert len(seen) == 2  # the stale point leaves Qdrant between the claim and the move
    index = wiring.index_for(pipeline.settings, wiring.embedder(pipeline.settings))
    with transaction() as session:
        current = repo.current_point_ids(session)
    assert index.all_point_ids() == set(current)


def test_front_matter_fills_only_what_the_uploader_did_not_give(pipeline: PipelineEnv) -> None:
    bare = register(PAGE.encode(), "bare")
    titled = register(PAGE.encode(), "titled", title="Given by the CMS")
    for version_id in (bare, titled):
        to_embedding(version_id)

    with transaction() as session:
        documents = {d.external_id: d for d in session.scalars(sa.select(Document))}
    assert documents["bare"].title == "Knee surgery"
    assert documents["titled"].title == "Given by the CMS"
    assert documents["bare"].language == documents["titled"].language == "en"
    assert documents["bare"].tags == ["orthopaedics", "surgery"]
    with transaction() as session:
        version = repo.load_version(session, bare)
        assert version is not None and version.chunk_count == 1


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL statements sent on the service's engine meanwhile (their first words)."""
    seen: list[str] = []

    def record(*args: object) -> None:
        seen.append(" ".join(str(args[2]).split()[:3]))

    sa.event.listen(engine(), "before_cursor_execute", record)
    try:
        yield seen
    finally:
        sa.event.remove(engine(), "before_cursor_execute", record)


def test_registering_a_new_page_takes_five_statements_and_an_edit_still_supersedes(
    pipeline: PipelineEnv,
) -> None:
    """A new document has no version to supersede and its row is written once."""
    with statements() as new_page:
        first = register(PAGE.encode(), "fresh")
    assert len(new_page) == 5, new_page
    assert sum(s.startswith("UPDATE documents") for s in new_page) == 1
    with statements() as edit:
        second = register(PAGE.replace("midnight", "ten").encode(), "fresh")
    assert any(s.startswith("SELECT document_versions.id") for s in edit), edit
    assert status(first) == Status.SUPERSEDED  # still in flight when the edit arrived
    assert status(second) == Status.RECEIVED
    with transaction() as session:
        document = session.scalars(sa.select(Document).where(Document.external_id == "fresh")).one()
        assert document.latest_version_id == second and document.version_count == 2
