"""`ingest verify` compares payloads with the record and `--repair` makes them match (issue 29,
"the index equals the record"): real Postgres, local Qdrant, the OpenAI stand-in, the pipeline
run in this process, the command invoked in it."""

from __future__ import annotations

import json
import uuid

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner, Result

from shared import repository as repo
from shared.adapters.index import Point, VectorIndex
from shared.db import transaction
from shared.models import CachedVector, Document
from shared.pipeline import wiring
from shared.pipeline.in_process import run_local
from shared.settings import get_settings
from tests.support.pipeline import PipelineEnv, document_point_ids
from tests.support.steps import register
from worker.cli.main import app

runner = CliRunner()

PAGE = """---
title: {title}
lang: en
tags: [orthopaedics, surgery]
---
# {title}

## Preparation

Bring your identity card and the list of medicines you take. Do not eat after midnight.

## Aftercare

Cool the knee with ice and walk with crutches every day, a little further each time.
"""


@pytest.fixture(autouse=True)
def small_chunks(pipeline: PipelineEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk per section: a page has several points."""
    for name, value in {"CHUNK_TARGET_TOKENS": "8", "CHUNK_MAX_TOKENS": "40"}.items():
        monkeypatch.setenv(name, value)
    for name in ("CHUNK_MIN_TOKENS", "CHUNK_OVERLAP_TOKENS"):
        monkeypatch.setenv(name, "0")
    get_settings.cache_clear()


def ingest(external_id: str, title: str) -> uuid.UUID:
    """One page through the pipeline here; its document id."""
    version_id = register(PAGE.format(title=title).encode(), external_id)
    run_local([version_id])
    with transaction() as session:
        version = repo.load_version(session, version_id)
        assert version is not None and version.status == "indexed", version
        return version.document_id


def the_index(pipeline: PipelineEnv) -> VectorIndex:
    return wiring.index_for(pipeline.settings, wiring.embedder(pipeline.settings))


def points_of(index: VectorIndex, document_id: uuid.UUID) -> list[str]:
    return sorted(str(p) for p in document_point_ids(index, document_id))


def payload_of(index: VectorIndex, point: str) -> dict:
    return index.retrieve([uuid.UUID(point)])[0].payload


def ids(points: list[str]) -> list[uuid.UUID]:
    return [uuid.UUID(p) for p in points]


def verify(*args: str) -> Result:
    return runner.invoke(app, ["verify", *args])


def report(*args: str) -> dict:
    result = verify(*args, "--json")
    assert result.exit_code in (0, 1), result.output
    body: dict = json.loads(result.stdout)
    return body


def test_drifted_payloads_are_named_by_document_and_field_and_repaired(
    pipeline: PipelineEnv,
) -> None:
    knee = ingest("knee", "Knee surgery")
    hip = ingest("hip", "Hip surgery")
    clean = verify()
    assert clean.exit_code == 0, clean.output
    assert "points with other payloads: 0" in clean.stdout

    index = the_index(pipeline)
    knee_points, hip_points = points_of(index, knee), points_of(index, hip)
    assert len(knee_points) >= 2 and len(hip_points) >= 2
    # Drift in Qdrant: a title on every point of the knee page, tags on one of them; the hip
    # page's first point shown though the record does not hide it, its second one moved to
    # another chapter.
    index.set_fields(ids(knee_points), {"title": "Old title"})
    index.set_fields(ids(knee_points[:1]), {"tags": ["cardiology"]})
    index.set_fields(ids(hip_points[:1]), {"hidden": True})
    moved = {"headings": ["Elsewhere"], "heading_paths": ["Elsewhere"]}
    index.set_fields(ids(hip_points[1:2]), moved)

    result = verify()
    assert result.exit_code == 1, result.output
    lines = {
        line.split(" ", 3)[2]: line for line in result.stdout.splitlines() if "differs" in line
    }
    assert f"(Knee surgery) {knee}: tags, title on {len(knee_points)} points" in lines["knee"]
    assert f"(Hip surgery) {hip}: heading_paths, headings, hidden on 2 points" in lines["hip"]
    assert f"points with other payloads: {len(knee_points) + 2}" in result.stdout

    found = report()
    assert found["ok"] is False
    assert [(d["external_id"], d["fields"], d["points"]) for d in found["drifted"]] == [
        ("hip", ["heading_paths", "headings", "hidden"], 2),
        ("knee", ["tags", "title"], len(knee_points)),
    ]

    repaired = verify("--repair")
    assert repaired.exit_code == 0, repaired.output
    assert f"{len(knee_points) + 2} payloads rewritten" in repaired.stdout
    assert "ok: the index matches the database" in repaired.stdout
    assert payload_of(index, knee_points[0])["title"] == "Knee surgery"
    assert payload_of(index, knee_points[0])["tags"] == ["orthopaedics", "surgery"]
    assert payload_of(index, hip_points[0])["hidden"] is False
    assert payload_of(index, hip_points[1])["headings"] != ["Elsewhere"]
    assert payload_of(index, hip_points[1])["text"]  # the whole payload, text and all
    again = verify()
    assert again.exit_code == 0, again.output
    assert report("--repair")["repair"]["rewritten"] == 0  # nothing left to do


def test_a_record_change_that_never_reached_the_index_is_found_and_repaired(
    pipeline: PipelineEnv,
) -> None:
    """The issue's case: the record moved on (a title edited, the page hidden while Qdrant
    was not written), the index kept the old values."""
    knee = ingest("knee", "Knee surgery")
    with transaction() as session:
        document = session.get(Document, knee)
        assert document is not None
        document.title = "Knee replacement"
        document.source_url = "https://example.org/knee"
        repo.set_document_hidden(session, knee, True, "editor", "outdated")
    result = verify()
    assert result.exit_code == 1
    assert f"(Knee replacement) {knee}: hidden, source_url, title on" in result.stdout

    assert verify("--repair").exit_code == 0
    index = the_index(pipeline)
    for point in points_of(index, knee):
        data = payload_of(index, point)
        assert data["title"] == "Knee replacement" and data["hidden"] is True
        assert data["source_url"] == "https://example.org/knee"
    assert verify().exit_code == 0


def test_repair_embeds_a_missing_point_again_and_deletes_an_orphan(
    pipeline: PipelineEnv,
) -> None:
    knee = ingest("knee", "Knee surgery")
    index = the_index(pipeline)
    lost = points_of(index, knee)[0]
    (original,) = index.retrieve(ids([lost]))
    index.delete(ids([lost]))
    stray = str(uuid.uuid4())
    index.upsert([Point(uuid.UUID(stray), original.vector, {"document_id": str(knee)})])
    found = report()
    assert found["missing_points"] == [lost] and found["orphan_points"] == [stray]
    assert verify().exit_code == 1

    repaired = report("--repair")
    assert repaired["repair"]["restored"] == 1 and repaired["repair"]["deleted"] == 1
    assert repaired["repair"]["tokens"] == 0  # its vector came from the vector cache
    assert repaired["after_repair"]["ok"] is True
    back = index.retrieve(ids([lost]))
    assert back and back[0].payload
    # the same payload, but for the update time (finalize moved the record's on)
    assert {**back[0].payload, "updated_at": None} == {**original.payload, "updated_at": None}
    assert back[0].vector == original.vector  # the same input, the same vector
    assert not index.retrieve(ids([stray]))
    assert verify().exit_code == 0

    # Without the cache (rows freed by hand, an older model's vectors): embedded again.
    index.delete(ids([lost]))
    with transaction() as session:
        session.execute(sa.delete(CachedVector))
    again = report("--repair")
    assert again["repair"]["restored"] == 1 and again["repair"]["tokens"] > 0
    back = index.retrieve(ids([lost]))
    assert back[0].vector == original.vector  # the same input, the same vector
    assert verify().exit_code == 0


def test_repair_leaves_a_document_in_the_pipeline_to_it(pipeline: PipelineEnv) -> None:
    knee = ingest("knee", "Knee surgery")
    # A new version registered (its title is the document's now), not yet through the pipeline.
    revised = PAGE.format(title="Knee surgery, revised").encode()
    register(revised, "knee", title="Knee surgery, revised")
    result = verify("--repair")
    assert result.exit_code == 1
    assert "left to the pipeline (a version in flight): 1 document" in result.output
    index = the_index(pipeline)
    assert payload_of(index, points_of(index, knee)[0])["title"] == "Knee surgery"
