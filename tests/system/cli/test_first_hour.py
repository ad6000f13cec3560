"""The CLI as a new user meets it, on the embedded default (SQLite, local Qdrant, hashing):
which file is which document, bad input, what the output looks like, how fast it starts."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.paths import ROOT
from worker.cli.main import app

runner = CliRunner()
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
KNIE = (ROOT / "examples" / "knieoperatie.md").read_bytes()


def ingest(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real `ingest` console entry point in a subprocess (stdout and stderr apart)."""
    return subprocess.run(
        [sys.executable, "-m", "worker.cli.main", *args],
        cwd=cwd,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT), "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def pages(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "knieoperatie.md").write_bytes(KNIE)
    return folder


# --- identity ---------------------------------------------------------------------------------


def test_the_same_file_is_the_same_document_from_any_working_directory(
    embedded_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = pages(tmp_path)
    monkeypatch.chdir(folder)
    first = runner.invoke(app, ["run", "knieoperatie.md"])
    assert first.exit_code == 0, first.output
    monkeypatch.chdir(tmp_path)
    second = runner.invoke(app, ["run", "site/"])
    assert second.exit_code == 0, second.output
    listed = runner.invoke(app, ["status"])
    assert len(set(UUID.findall(listed.stdout))) == 1, listed.stdout
    shown = runner.invoke(app, ["status", str(folder / "knieoperatie.md")])
    assert f"external id: {(folder / 'knieoperatie.md').resolve().as_posix()}" in shown.stdout


def test_an_id_prefix_names_documents_by_their_path_in_the_folder(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    folder = pages(tmp_path)
    (folder / "orthopedie").mkdir()
    (folder / "orthopedie" / "heup.md").write_text("# Heup\n\nNeem uw medicijnlijst mee.\n")
    result = runner.invoke(app, ["run", str(folder), "--id-prefix", "site:"])
    assert result.exit_code == 0, result.output
    for key in ("site:knieoperatie.md", "site:orthopedie/heup.md"):
        shown = runner.invoke(app, ["status", key])
        assert shown.exit_code == 0 and f"external id: {key}" in shown.stdout, shown.output


# --- bad input --------------------------------------------------------------------------------


def test_empty_and_unsupported_files_are_named_and_counted(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    folder = pages(tmp_path)
    (folder / "leeg.md").write_bytes(b"")
    (folder / "foto.png").write_bytes(b"\x89PNG\r\n")
    result = ingest("run", str(folder), cwd=tmp_path, env=embedded_env)
    assert result.returncode == 1  # the empty file is refused
    assert re.search(r"│ indexed\s+│ 1\s+│", result.stdout), result.stdout
    assert re.search(r"│ empty\s+│ 1\s+│", result.stdout)
    assert re.search(r"│ unsupported\s+│ 1\s+│", result.stdout)
    assert "not ingested (2 files)" in result.stdout
    assert re.search(r"leeg\.md\s+│ empty file", result.stdout)
    assert re.search(r"foto\.png\s+│ unsupported type", result.stdout)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["convert", "nowhere.md"], "error: nowhere.md: no such file\n"),
        (["convert", "."], "error: . is a folder: give one file (`ingest chunk` takes folders)\n"),
        (["run", "nowhere"], "error: nowhere: no such file or folder\n"),
        (["status", "no-such-document"], "error: no document 'no-such-document'"),
    ],
)
def test_bad_paths_get_one_line_not_a_usage_screen(
    embedded_env: dict[str, str], tmp_path: Path, args: list[str], message: str
) -> None:
    if args[0] == "status":
        assert runner.invoke(app, ["run", str(pages(tmp_path))]).exit_code == 0
    result = ingest(*args, cwd=tmp_path, env=embedded_env)
    assert result.returncode != 0
    assert result.stderr.startswith(message), result.stderr
    assert "Usage" not in result.stderr and "╭" not in result.stderr


def test_an_empty_file_is_refused_by_convert(embedded_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "leeg.md").write_bytes(b"")
    result = ingest("convert", "leeg.md", cwd=tmp_path, env=embedded_env)
    assert result.returncode == 2
    assert result.stderr == "error: leeg.md is empty: nothing to convert\n"


def test_no_traceback_when_the_database_cannot_be_reached(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    unreachable = {**embedded_env, "DATABASE_URL": "postgresql+psycopg://127.0.0.1:9/nothing"}
    result = ingest("status", cwd=tmp_path, env=unreachable)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith("error [database]: OperationalError")


# --- output -----------------------------------------------------------------------------------


def test_logs_go_to_the_log_file_not_into_the_progress_bar(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    folder = pages(tmp_path)
    (folder / "bezoek.md").write_bytes((ROOT / "examples" / "visiting-hours.md").read_bytes())
    result = ingest("run", str(folder), "--log-file", "run.log", cwd=tmp_path, env=embedded_env)
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert "stage done" not in output and "ingest finished" not in output
    assert output.lower().count("hashing embedder") == 1, output
    log = (tmp_path / "run.log").read_text()
    assert "stage done" in log and "ingest finished" in log
    assert "log: run.log" in result.stdout


def test_status_shows_whole_ids_and_takes_a_unique_prefix(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    assert runner.invoke(app, ["run", str(ROOT / "examples")]).exit_code == 0
    listed = ingest("status", cwd=tmp_path, env=embedded_env)
    ids = UUID.findall(listed.stdout)
    assert len(set(ids)) == 4, listed.stdout
    shown = ingest("status", ids[0][:8], cwd=tmp_path, env=embedded_env)
    assert shown.returncode == 0, shown.stderr
    assert ids[0] in shown.stdout and "history" in shown.stdout


def test_plurals(embedded_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "kort.md").write_text("# Kort\n\nEen zin.\n")
    result = runner.invoke(app, ["chunk", str(tmp_path / "kort.md")])
    assert "(1 chunk)" in result.stdout
    (tmp_path / "leeg.md").write_bytes(b"")
    run = ingest("run", "kort.md", "leeg.md", cwd=tmp_path, env=embedded_env)
    assert "not ingested (1 file)" in run.stdout, run.stdout


# --- start-up ---------------------------------------------------------------------------------

HEAVY = ("celery", "qdrant_client", "tiktoken", "openai", "fastapi", "alembic", "mistune", "pypdf")


def imported(*args: str, cwd: Path, env: dict[str, str]) -> set[str]:
    """The top-level packages `ingest ARGS` imports (python -X importtime)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "worker.cli.main", *args],
        cwd=cwd,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", result.stderr, re.M)
    return {name.split(".")[0] for name in names}


def test_help_and_status_import_only_what_they_use(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    helped = imported("--help", cwd=tmp_path, env=embedded_env)
    assert not helped & {*HEAVY, "sqlalchemy", "shared"}, helped & {*HEAVY, "sqlalchemy"}
    assert runner.invoke(app, ["run", str(pages(tmp_path))]).exit_code == 0
    status = imported("status", cwd=tmp_path, env=embedded_env)
    # It reads the database through the plain driver (shared/repository/overview.py).
    assert "sqlite3" in status
    assert not status & {*HEAVY, "sqlalchemy"}, status & {*HEAVY, "sqlalchemy"}


def test_run_on_markdown_loads_no_pdf_reader_worker_or_web_server(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    """`ingest run` is timed against LlamaIndex as a whole command: what Markdown pages do
    not use (pypdf and the PDF layout code, Celery, the web stack) is not imported."""
    ran = imported("run", str(pages(tmp_path)), cwd=tmp_path, env=embedded_env)
    assert {"shared", "mistune", "sqlalchemy"} <= ran  # it did the work
    assert not ran & {"pypdf", "celery", "fastapi", "uvicorn"}, ran & {"pypdf", "celery"}


def test_run_on_markdown_with_the_embedded_index_loads_no_qdrant_client(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    """Qdrant Edge speaks the port's own filter and sparse types: qdrant-client (1.2 s of
    pydantic models at start-up) is for a server (`QDRANT_URL`) only."""
    ran = imported("run", str(pages(tmp_path)), cwd=tmp_path, env=embedded_env)
    assert {"shared", "qdrant_edge"} <= ran  # it indexed, embedded
    assert "qdrant_client" not in ran


def test_a_second_run_finds_the_schema_at_head_without_alembic(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    """The first command migrates the new database; later ones recognise it at head with
    one query and do not import Alembic."""
    first = imported("run", str(pages(tmp_path)), cwd=tmp_path, env=embedded_env)
    assert "alembic" in first
    again = imported("run", str(tmp_path / "site"), cwd=tmp_path, env=embedded_env)
    assert "shared" in again and "alembic" not in again
