"""`ingest reindex --dry-run | --batch | --resume | --cancel` on the embedded default (SQLite,
local Qdrant) with the OpenAI stand-in's Batch API: no Celery, `--resume` polls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from shared.settings import get_settings
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.paths import ROOT
from tests.support.workers import wait_for
from worker.cli.main import app

runner = CliRunner()


@pytest.fixture
def fake(embedded_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        for key, value in {
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": server.base_url,
            "EMBEDDING_MODEL": "text-embedding-3-large",
            "EMBEDDING_DIMENSIONS": "256",
        }.items():
            monkeypatch.setenv(key, value)
        get_settings.cache_clear()
        assert runner.invoke(app, ["run", str(ROOT / "examples")]).exit_code == 0
        monkeypatch.setenv("EMBEDDING_MODEL", "text-embedding-3-small")
        get_settings.cache_clear()
        yield server


def test_a_batch_reindex_from_the_command_line_priced_started_resumed_switched(
    fake: FakeOpenAI,
) -> None:
    dry = runner.invoke(app, ["reindex", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "embeddings API: $" in dry.stdout and "Batch API:      $" in dry.stdout
    assert fake.batches.uploads() == []

    started = runner.invoke(app, ["reindex", "--batch", "--collection", "chunks_small"])
    assert started.exit_code == 0, started.output
    assert "running" in started.stdout and "file 0: batch_" in started.stdout
    shown = runner.invoke(app, ["status"])
    assert shown.exit_code == 0 and "batch re-index into chunks_small" in shown.stdout

    def switched() -> str:
        resumed = runner.invoke(app, ["reindex", "--resume"])
        assert resumed.exit_code == 0, resumed.output
        return resumed.stdout if "switched" in resumed.stdout else ""

    out = wait_for(switched, timeout=60, what="the batch re-index to switch")
    assert "the fleet now uses chunks_small" in out and "verify: ok" in out
    assert runner.invoke(app, ["verify"]).exit_code == 0
    again = runner.invoke(app, ["reindex", "--resume"])  # caught up: done
    assert again.exit_code == 0 and "done" in again.stdout and "verify: ok" in again.stdout
    last = runner.invoke(app, ["reindex", "--resume"])  # nothing to do: the last job, said again
    assert last.exit_code == 0 and "the fleet uses chunks_small" in last.stdout


def test_cancel_from_the_command_line(fake: FakeOpenAI) -> None:
    fake.batches.hold()
    assert runner.invoke(app, ["reindex", "--batch"]).exit_code == 0
    twice = runner.invoke(app, ["reindex", "--batch"])
    assert twice.exit_code == 2 and "--cancel" in twice.output
    cancelled = runner.invoke(app, ["reindex", "--cancel"])
    assert cancelled.exit_code == 0, cancelled.output
    assert "cancelled" in cancelled.stdout and "keeps the collection" in cancelled.stdout
    assert runner.invoke(app, ["reindex", "--cancel"]).exit_code == 1
