"""The vector index (or the embeddings API a search needs) out of reach in a route: a 503
problem document with its `code`, a plain message and Retry-After, never a 500 with a
traceback. Real failures: a Qdrant server on a closed loopback port, a local index folder held
by another process, an embeddings API on a closed loopback port."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from shared.settings import Settings
from tests.support.api import EDITOR_KEY, assert_problem, use_settings

CLOSED_PORT_QDRANT = "http://127.0.0.1:1"  # nothing listens on port 1 of loopback
HOLD = (
    "import sys; from shared.adapters.index import collection_name; "
    "from shared.adapters.qdrant_edge import EdgeIndex; from shared.pipeline import wiring; "
    "from shared.settings import get_settings; model = wiring.embedder(get_settings()); "
    "index = EdgeIndex.open(sys.argv[1], collection_name(model.model, model.dimensions), "
    "model.dimensions); index.count(); print('held', flush=True); sys.stdin.read()"
)


@contextmanager
def held_by_another_process(folder: Path) -> Iterator[None]:
    """A second process opens the collection's Qdrant Edge shard in the local index folder
    (Edge locks it to one process) and keeps it until its standard input closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def search(settings: Settings) -> object:
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {EDITOR_KEY}"}
    ) as client:
        return client.post("/v1/search", json={"query": "Wanneer is bezoek welkom?"})


def test_a_qdrant_server_out_of_reach_is_a_503_problem(
    api_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = use_settings(
        monkeypatch, QDRANT_URL=CLOSED_PORT_QDRANT, EMBEDDING_PROVIDER="hashing"
    )
    response = search(settings)
    problem = assert_problem(response, 503)
    assert problem["code"] == "index_unavailable"
    assert problem["detail"].startswith("The search index cannot be reached right now.")
    assert response.headers["Retry-After"] == "10"  # type: ignore[attr-defined]


def test_a_local_folder_held_by_another_process_is_a_503_problem(
    api_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "qdrant"
    settings = use_settings(monkeypatch, QDRANT_PATH=str(folder), EMBEDDING_PROVIDER="hashing")
    with held_by_another_process(folder):
        response = search(settings)
    problem = assert_problem(response, 503)
    assert problem["code"] == "qdrant_locked"
    assert "held by another process" in problem["detail"]
    assert response.headers["Retry-After"] == "10"  # type: ignore[attr-defined]


def test_an_embeddings_api_out_of_reach_is_a_503_problem_for_a_search(
    api_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = use_settings(
        monkeypatch,
        QDRANT_PATH=str(tmp_path / "qdrant"),
        EMBEDDING_PROVIDER="openai",
        OPENAI_API_KEY="sk-test-not-used",
        OPENAI_BASE_URL="http://127.0.0.1:1/v1",  # nothing listens on port 1 of loopback
        EMBEDDING_MAX_RETRIES="0",
    )
    response = search(settings)
    problem = assert_problem(response, 503)
    assert problem["code"] == "embedding_unavailable"
    assert "Nothing was lost" in problem["detail"] and "Traceback" not in response.text  # type: ignore[attr-defined]
    assert response.headers["Retry-After"] == "10"  # type: ignore[attr-defined]
