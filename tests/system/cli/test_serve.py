"""`ingest serve`: one process for a small site (the API, the pipeline and the reaper, no Redis),
started as a user starts it, on the embedded default in tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.api import rows
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.paths import ROOT
from tests.support.pdfs import brochure_pdf
from tests.support.serve import served
from tests.support.workers import wait_for

KNIE = (ROOT / "examples" / "knieoperatie.md").read_bytes()
THIRD = (
    b"# Bezoektijden\n\nBezoek is welkom tussen 14.00 en 20.00 uur op de afdeling cardiologie.\n"
)


def held_or_stuck(database_url: str) -> list[object]:
    """Versions holding a lease, or left in a stage (not received, not done)."""
    return list(
        rows(
            database_url,
            "SELECT id, status, lease_owner FROM document_versions WHERE lease_owner IS NOT NULL "
            "OR status IN ('converting', 'chunking', 'embedding', 'upserting')",
        )
    )


def found(server: object, query: str) -> set[str]:
    response = server.http.post("/v1/search", json={"query": query})  # type: ignore[attr-defined]
    assert response.status_code == 200, response.text
    return {hit["document_id"] for hit in response.json()["hits"]}


def test_serve_answers_uploads_at_once_indexes_them_and_stops_cleanly(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    with served(embedded_env, tmp_path) as server:
        page = server.upload("knieoperatie.md", KNIE)
        brochure = server.upload("brochure.pdf", brochure_pdf())
        # The 202 came before the work: the version was only registered.
        assert page["status"] == "received" and brochure["status"] == "received"
        server.wait_indexed(page["document_id"], brochure["document_id"])
        assert page["document_id"] in found(server, "knieoperatie voorbereiding")
        assert brochure["document_id"] in found(server, "Wat neemt u mee")
        assert server.terminate() == 0, server.output()[-3000:]
    assert held_or_stuck(embedded_env["DATABASE_URL"]) == []

    with served(embedded_env, tmp_path) as again:
        third = again.upload("bezoek.md", THIRD)
        assert third["status"] == "received"
        again.wait_indexed(third["document_id"])
        assert third["document_id"] in found(again, "bezoektijden cardiologie")
        assert page["document_id"] in found(again, "knieoperatie voorbereiding")
        assert again.terminate() == 0
    assert held_or_stuck(embedded_env["DATABASE_URL"]) == []


def test_a_sigterm_while_a_version_is_embedded_leaves_nothing_stuck(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    """The embedding request in flight finishes its step; an upload that arrived meanwhile
    waits in `received` and is taken by the next start."""
    database = embedded_env["DATABASE_URL"]
    with FakeOpenAI(latency=3.0) as fake:
        env = {
            **embedded_env,
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": fake.base_url,
            "EMBEDDING_MODEL": "text-embedding-3-small",
        }
        with served(env, tmp_path) as server:
            first = server.upload("knieoperatie.md", KNIE)
            wait_for(lambda: fake.arrived() > 0, timeout=60, what="the embedding request")
            in_flight = rows(
                database,
                "SELECT status, lease_owner FROM document_versions WHERE lease_owner IS NOT NULL",
            )
            assert [tuple(r) for r in in_flight] == [("embedding", "serve")]
            second = server.upload("bezoek.md", THIRD)
            assert server.terminate() == 0, server.output()[-3000:]
        assert held_or_stuck(database) == []
        # The version in flight finished; the one that came meanwhile waits, with no lease.
        statuses = rows(database, "SELECT status FROM document_versions ORDER BY received_at")
        assert [status for (status,) in statuses] == ["indexed", "received"]

        with served(env, tmp_path) as again:
            again.wait_indexed(first["document_id"], second["document_id"])
            assert again.terminate() == 0
    assert held_or_stuck(database) == []


@pytest.mark.parametrize(
    ("args", "redis", "says"),
    [
        (["api"], True, ["QDRANT_URL", "`ingest serve`"]),  # beside Celery workers, no server
        (["serve"], True, ["unset REDIS_URL"]),
        (["api", "--workers", "2"], False, ["one process", "REDIS_URL"]),
    ],
)
def test_a_layout_that_would_lose_work_is_refused_in_one_line(
    embedded_env: dict[str, str], tmp_path: Path, args: list[str], redis: bool, says: list[str]
) -> None:
    env = {**os.environ, **embedded_env, "PYTHONPATH": str(ROOT)}
    if redis:
        env["REDIS_URL"] = "redis://127.0.0.1:1/0"  # refused before anything connects
    done = subprocess.run(
        [sys.executable, "-m", "worker.cli.main", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("refusing to start:"), line
    assert all(word in line for word in says), line
    assert not (tmp_path / "ingest.db").exists()  # refused before anything was set up
