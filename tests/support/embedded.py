"""The embedded default (SQLite, local Qdrant, the hashing embedder) in a test's tmp_path: a
fixture for the integration tests and the `ingest` command runs (tests/system/cli)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.settings import get_settings
from worker.app import app as celery_app
from worker.app import configure


@pytest.fixture
def embedded_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The embedded default in tmp_path, for this process and for `ingest` subprocesses."""
    for name in ("REDIS_URL", "OPENAI_API_KEY", "QDRANT_URL", "QDRANT_COLLECTION"):
        monkeypatch.delenv(name, raising=False)
    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path}/ingest.db",
        "QDRANT_PATH": str(tmp_path / "qdrant"),
        "EMBEDDING_PROVIDER": "hashing",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    get_settings.cache_clear()
    yield env
    get_settings.cache_clear()
    configure(celery_app, get_settings())
