"""Test-wide setup: the tests' own corpus and the shared fixtures. Without internet, set
TIKTOKEN_CACHE_DIR (README, "tiktoken's vocabulary"); `.ci/run` does.
"""

from __future__ import annotations

import os
from pathlib import Path

# The API and web tests' fixtures (api_settings, client, anonymous, browser pages), loaded once.
pytest_plugins = ["tests.support.api", "tests.support.web"]

# ruff: noqa: E402
from collections.abc import Iterator

import pytest

from shared.settings import get_settings
from tests.support.private_services import Services
from tests.support.services import (
    empty_redis_database,
    reserved_redis_database,
    temporary_postgres_database,
    truncate_all,
)

SERVICES = Services()  # the servers this session uses; the summary says which

# Markers by folder: the folder a test is in says what it needs, so no module marks itself.
FOLDER_MARKERS = {"integration": "integration", "system": "system"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`integration` for everything under tests/integration, `system` under tests/system."""
    tests = Path(__file__).resolve().parent
    for item in items:
        try:
            folder = item.path.resolve().relative_to(tests).parts[0]
        except ValueError:
            continue
        if folder in FOLDER_MARKERS:
            item.add_marker(FOLDER_MARKERS[folder])


@pytest.fixture(scope="session")
def test_services() -> Iterator[Services]:
    """Chooses the servers when a test first needs one; stops the private ones at the end."""
    yield SERVICES
    SERVICES.stop()


@pytest.fixture(scope="session")
def postgres_admin_url(test_services: Services) -> str:
    """A Postgres database the run may connect to in order to create (and drop) its own."""
    return test_services.postgres_admin_url()


@pytest.fixture(scope="session")
def redis_server_url(test_services: Services) -> str:
    return test_services.redis_server_url()


@pytest.fixture(scope="session")
def postgres_url(postgres_admin_url: str) -> Iterator[str]:
    """A Postgres database of this test run's own, migrated to head."""
    from shared.migrate import upgrade

    with temporary_postgres_database(postgres_admin_url) as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="session")
def redis_url(redis_server_url: str) -> Iterator[str]:
    with reserved_redis_database(redis_server_url) as url:
        yield url


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which Postgres and Redis the run used (the machine's, or private ones)."""
    for line in SERVICES.lines:
        terminalreporter.write_line(f"services: {line}")


@pytest.fixture
def pg(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Settings point at the test run's Postgres, emptied before the test."""
    truncate_all(postgres_url)
    monkeypatch.setenv("DATABASE_URL", postgres_url)
    get_settings.cache_clear()
    yield postgres_url
    get_settings.cache_clear()


@pytest.fixture
def pipeline(
    pg: str, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[object]:
    """Postgres, Redis, local Qdrant and the OpenAI stand-in, wired through the settings, for
    this process (which sends chains) and for the worker subprocesses it starts."""
    from tests.support.fakes.openai_server import FakeOpenAI
    from tests.support.pipeline import PipelineEnv
    from worker.app import app, configure

    empty_redis_database(redis_url)  # no message an earlier test's worker left (an OCR redelivery)
    with FakeOpenAI() as fake:
        env = {
            "DATABASE_URL": pg,
            "REDIS_URL": redis_url,
            "QDRANT_PATH": str(tmp_path / "qdrant"),
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": fake.base_url,
            "EMBEDDING_MODEL": "text-embedding-3-large",
            "EMBEDDING_DIMENSIONS": "256",
            "LEASE_SECONDS": "6",
            "VISIBILITY_TIMEOUT_SECONDS": "8",
            "STUCK_AFTER_SECONDS": "2",
            "RECEIVED_GRACE_SECONDS": "1",
            "RETRY_BACKOFF_MAX_SECONDS": "2",
            "TIKTOKEN_CACHE_DIR": os.environ.get("TIKTOKEN_CACHE_DIR", ""),
        }
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        get_settings.cache_clear()
        configure(app, get_settings())
        yield PipelineEnv(env, fake, tmp_path)
    get_settings.cache_clear()
    configure(app, get_settings())
