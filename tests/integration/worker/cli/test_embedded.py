"""The CLI on the embedded default: SQLite, Celery in-process, local Qdrant, hashing embedder."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shared import repository as repo
from shared.db import transaction
from shared.pipeline import wiring
from shared.settings import get_settings
from tests.support.office_files import ARTICLE_PAGE, brochure_docx
from tests.support.paths import CORPUS, ROOT
from worker.app import app as celery_app
from worker.app import configure
from worker.cli.main import app

runner = CliRunner()


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in ("REDIS_URL", "OPENAI_API_KEY", "QDRANT_URL", "QDRANT_COLLECTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/ingest.db")
    monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "qdrant"))
    monkeypatch.setenv("EMBEDDING_PROVIDER", "hashing")
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()
    configure(celery_app, get_settings())


def summary(output: str) -> dict[str, int]:
    return {m[0]: int(m[1]) for m in re.findall(r"│ ([a-z ]+?)\s+│ (\d+)\s+│", output)}


def test_run_on_the_corpus_then_again_is_all_unchanged_and_free(embedded: Path) -> None:
    files = sorted(CORPUS.rglob("*.md"))
    first = runner.invoke(app, ["run", str(CORPUS)])
    assert first.exit_code == 0, first.output
    counts = summary(first.stdout)
    assert counts["indexed"] == len(files), first.stdout
    assert counts["chunks"] > len(files) and counts["tokens spent"] > 0

    second = runner.invoke(app, ["run", str(CORPUS)])
    assert second.exit_code == 0, second.output
    again = summary(second.stdout)
    assert again["unchanged"] == len(files)
    assert again["tokens spent"] == 0 and "indexed" not in again

    verified = runner.invoke(app, ["verify"])
    assert verified.exit_code == 0, verified.output


def test_reindex_fills_a_new_collection_and_switches_to_it(embedded: Path) -> None:
    assert runner.invoke(app, ["run", str(ROOT / "examples")]).exit_code == 0
    settings = get_settings()
    embedder = wiring.embedder(settings)
    before = wiring.index_for(settings, embedder)
    old_points = before.all_point_ids()
    assert old_points

    result = runner.invoke(app, ["reindex", "--collection", "chunks_rebuilt"])
    assert result.exit_code == 0, result.output
    assert "verify: ok" in result.stdout
    assert "0 tokens)" in result.stdout  # the same model: every input from the vector cache

    with transaction() as session:
        active = repo.active_collection(session, embedder.model, embedder.dimensions)
    assert active == "chunks_rebuilt"
    after = wiring.index_for(settings, embedder)
    assert after.collection == "chunks_rebuilt"
    assert after.all_point_ids() == old_points  # same chunks, same deterministic ids
    assert runner.invoke(app, ["verify"]).exit_code == 0
    hits = runner.invoke(app, ["search", "bloedverdunners", "-k", "1"])
    assert hits.exit_code == 0 and "Knieoperatie" in hits.stdout


def test_run_leaves_hidden_files_and_folders_out_unless_asked(embedded: Path) -> None:
    folder = embedded / "site"
    (folder / ".hidden").mkdir(parents=True)
    (folder / ".venv" / "lib").mkdir(parents=True)
    (folder / "page.md").write_text("# Bezoektijden\n\nBezoek is welkom van 14 tot 20 uur.\n")
    (folder / ".hidden" / "secret.md").write_text("# Geheim\n\nNiet voor de chatbot.\n")
    (folder / ".venv" / "lib" / "README.md").write_text("# A package\n\nIts readme.\n")
    (folder / ".draft.md").write_text("# Concept\n\nNog niet klaar.\n")

    first = runner.invoke(app, ["run", str(folder)])
    assert first.exit_code == 0, first.output
    assert summary(first.stdout)["indexed"] == 1, first.stdout
    assert "3 hidden files left out" in first.stdout
    with transaction() as session:
        listed, _ = repo.list_documents(session)
        names = {d.external_id.rsplit("/", 1)[-1] for d, _ in listed}
    assert names == {"page.md"}

    second = runner.invoke(app, ["run", "--include-hidden", str(folder)])
    assert second.exit_code == 0, second.output
    assert summary(second.stdout)["indexed"] == 3, second.stdout


def test_run_takes_word_documents_and_html_pages(embedded: Path) -> None:
    folder = embedded / "site"
    folder.mkdir()
    (folder / "knie.docx").write_bytes(brochure_docx())
    (folder / "knie.html").write_text(ARTICLE_PAGE, encoding="utf-8")
    result = runner.invoke(app, ["run", str(folder)])
    assert result.exit_code == 0, result.output
    assert summary(result.stdout)["indexed"] == 2, result.stdout
    found = runner.invoke(app, ["search", "tot wanneer mag ik eten voor de operatie", "--json"])
    assert found.exit_code == 0, found.output
    assert "6 uur voor de operatie" in found.stdout
