"""`ingest run` converts and chunks pages a group at a time (shared.pipeline.in_process.GROUP):
each version must still move through its own states with its own events, fail on its own, and
a killed run must leave nothing that a rerun does not finish. SQLite's writers take turns on a
lock in this process (shared.db); two threads writing at once must both get through."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from shared.db import transaction
from shared.models import Event
from shared.pipeline.in_process import GROUP
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.paths import CORPUS, ROOT
from tests.support.workers import wait_for
from worker.cli.main import app

runner = CliRunner()
INDEXED = [
    (None, "received"),
    ("received", "converting"),
    ("converting", "chunking"),
    ("chunking", "embedding"),
    ("embedding", "upserting"),
    ("upserting", "indexed"),
]


def events_by_file() -> dict[str, list[tuple[str | None, str]]]:
    from shared.models import Document

    with transaction() as session:
        rows = session.execute(
            sa.select(Document.external_id, Event.from_status, Event.to_status)
            .join(Document, Document.id == Event.document_id)
            .order_by(Event.id)
        ).all()
    found: dict[str, list[tuple[str | None, str]]] = {}
    for external_id, source, target in rows:
        found.setdefault(Path(external_id).name, []).append((source, target))
    return found


def test_each_page_of_a_group_has_its_own_moves_and_a_broken_one_fails_alone(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    names = [f"page-{n:02}.md" for n in range(GROUP + 3)]  # more than one group
    for n, name in enumerate(names):
        (folder / name).write_text(f"# Page {n}\n\nVisiting hours on ward {n} are 10 to 20.\n")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nnot a pdf at all\n")  # in the first group

    result = runner.invoke(app, ["run", str(folder)])

    assert result.exit_code == 1, result.output  # one failure
    events = events_by_file()
    for name in names:
        assert events[name] == INDEXED, (name, events[name])
    assert events["broken.pdf"] == [
        (None, "received"),
        ("received", "converting"),
        ("converting", "failed"),
    ]
    assert "pdf_corrupt" in result.stdout, result.stdout
    again = runner.invoke(app, ["run", str(folder)])
    assert re.search(rf"│ unchanged\s+│ {len(names)}\s+│", again.stdout), again.stdout
    assert re.search(r"│ tokens spent\s+│ 0\s+│", again.stdout), again.stdout
    assert runner.invoke(app, ["verify"]).exit_code == 0


def _statuses(database: Path) -> dict[str, int]:
    with sqlite3.connect(database) as connection:
        return dict(
            connection.execute("SELECT status, count(*) FROM document_versions GROUP BY status")
        )


def _run_env(embedded_env: dict[str, str], fake: FakeOpenAI) -> dict[str, str]:
    """`ingest run` in a subprocess on the embedded default, embedding through the stand-in."""
    return {
        **os.environ,
        **embedded_env,
        "EMBEDDING_PROVIDER": "openai",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": fake.base_url,
        "PYTHONPATH": str(ROOT),
    }


def _current_statuses(database: Path) -> dict[str, int]:
    """How many documents' current versions are in each status."""
    with sqlite3.connect(database) as connection:
        return dict(
            connection.execute(
                "SELECT v.status, count(*) FROM documents d JOIN document_versions v "
                "ON v.id = d.current_version_id GROUP BY v.status"
            )
        )


def test_a_killed_run_is_finished_by_the_next_and_a_third_costs_nothing(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    files = sorted(CORPUS.rglob("*.md"))
    database = tmp_path / "ingest.db"
    with FakeOpenAI(latency=0.3) as fake:  # slow enough to be killed halfway
        env = _run_env(embedded_env, fake)
        command = [sys.executable, "-m", "worker.cli.main", "run", str(CORPUS)]
        killed = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:

            def halfway() -> bool:
                if not database.exists():
                    return False
                try:
                    statuses = _statuses(database)
                except sqlite3.OperationalError:  # no schema yet
                    return False
                return bool(statuses.get("indexed")) and statuses.get("indexed", 0) < len(files)

            wait_for(halfway, timeout=120, what="a run halfway")
        finally:
            killed.send_signal(signal.SIGKILL)
            killed.wait()
        left = _statuses(database)
        assert sum(left.values()) == len(files) and left.get("indexed", 0) < len(files), left

        rerun = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        third = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert third.returncode == 0, third.stdout + third.stderr

    latest = _current_statuses(database)
    with sqlite3.connect(database) as connection:
        in_flight = connection.execute(
            "SELECT count(*) FROM document_versions WHERE status IN "
            "('received', 'converting', 'chunking', 'embedding', 'upserting')"
        ).fetchone()[0]
    assert latest == {"indexed": len(files)}, latest
    assert in_flight == 0
    assert re.search(rf"│ unchanged\s+│ {len(files)}\s+│", third.stdout), third.stdout
    assert re.search(r"│ tokens spent\s+│ 0\s+│", third.stdout), third.stdout
    verified = subprocess.run(
        [sys.executable, "-m", "worker.cli.main", "verify"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _free_for_another_thread(lock: object) -> bool:
    """Whether a thread other than the caller could take `lock` now."""
    free: list[bool] = []

    def attempt() -> None:
        took = lock.acquire(blocking=False)  # type: ignore[attr-defined]
        if took:
            lock.release()  # type: ignore[attr-defined]
        free.append(took)

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return free[0]


def test_a_transaction_holds_the_writers_lock_from_its_first_write_until_it_ends(
    embedded_env: dict[str, str],
) -> None:
    """Threads of one process take SQLite's write lock in turn on a lock of ours, not by
    SQLite's sleep-polling busy handler: taken at the first write, given back at the end."""
    from shared import migrate
    from shared.db import WRITERS, engine

    migrate.ensure_embedded_schema()
    writer = WRITERS[engine()]
    insert = sa.text(
        "INSERT INTO webhook_deliveries (delivery_id, event, received_at) VALUES (:id, 'x', '')"
    )
    with transaction() as session:
        session.execute(sa.text("SELECT count(*) FROM webhook_deliveries"))
        assert _free_for_another_thread(writer)  # reads take nothing
        session.execute(insert, {"id": "a"})
        assert not _free_for_another_thread(writer)
        session.execute(insert, {"id": "b"})  # the same transaction goes on
    assert _free_for_another_thread(writer)

    with pytest.raises(RuntimeError), transaction() as session:
        session.execute(insert, {"id": "c"})
        assert not _free_for_another_thread(writer)
        raise RuntimeError("rolled back")
    assert _free_for_another_thread(writer)

    wrote: list[str] = []

    def other() -> None:
        with transaction() as session:
            session.execute(insert, {"id": "from another thread"})
        wrote.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(timeout=60)
    assert wrote == ["other"]
    with transaction() as session:
        assert session.execute(sa.text("SELECT count(*) FROM webhook_deliveries")).scalar() == 3


def test_a_run_does_not_wait_for_the_leases_a_killed_run_left(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    """A killed run leaves versions leased to `ingest run`'s owner. The next run supersedes
    them with the same bytes; its finalize must not wait for those leases (LEASE_SECONDS) and
    leave the document in `upserting` while the command says all is well."""
    from datetime import timedelta

    from shared import documents, ingest
    from shared import repository as repo
    from shared.models import Document, DocumentVersion
    from shared.pipeline.in_process import OWNER
    from shared.states import Status
    from tests.support.versions import new_version

    page = tmp_path / "visiting.md"
    page.write_text("# Visiting\n\nVisiting hours are 10 to 20.\n")
    assert runner.invoke(app, ["run", str(page)]).exit_code == 0
    edited = b"# Visiting\n\nVisiting hours are 11 to 19.\n"
    with transaction() as session:
        document = session.scalars(sa.select(Document)).one()
        source, external_id = document.source, document.external_id
    # What a run killed while converting the edit leaves behind.
    left = ingest.submit(new_version(edited, external_id, source=source), lambda _: None)
    with transaction() as session:
        claim = repo.claim(
            session, Status.CONVERTING, OWNER, timedelta(minutes=15), [left.version_id]
        )
    assert left.version_id in claim.claimed

    page.write_bytes(edited)
    result = runner.invoke(app, ["run", str(page)])

    assert result.exit_code == 0, result.output
    with transaction() as session:
        document = session.scalars(sa.select(Document)).one()
        current = session.get(DocumentVersion, document.current_version_id)
        assert current is not None and current.sha256 == documents.sha256(edited)
        assert current.status == Status.INDEXED
        assert session.get(DocumentVersion, left.version_id).status == Status.SUPERSEDED


def test_ctrl_c_stops_a_run_cleanly_and_the_next_goes_on(
    embedded_env: dict[str, str], tmp_path: Path
) -> None:
    """Ctrl-C: the batch being embedded finishes, the leases are given back without using up
    an attempt, exit 130 with one line; the same command again finishes the rest."""
    files = sorted(CORPUS.rglob("*.md"))
    database = tmp_path / "ingest.db"
    with FakeOpenAI(latency=0.3) as fake:
        env = _run_env(embedded_env, fake)
        command = [sys.executable, "-m", "worker.cli.main", "run", str(CORPUS)]
        interrupted = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

        def started() -> bool:
            try:
                return database.exists() and bool(_statuses(database).get("indexed"))
            except sqlite3.OperationalError:  # no schema yet
                return False

        wait_for(started, timeout=120, what="a run under way")
        interrupted.send_signal(signal.SIGINT)
        out, err = interrupted.communicate(timeout=120)
        assert interrupted.returncode == 130, out + err
        assert b"stopped: what was finished is kept" in err, err
        assert b"Traceback" not in err
        with sqlite3.connect(database) as connection:
            held = connection.execute(
                "SELECT count(*) FROM document_versions WHERE lease_owner IS NOT NULL "
                "OR attempts > 1"
            ).fetchone()[0]
        assert held == 0

        rerun = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    latest = _current_statuses(database)
    assert latest == {"indexed": len(files)}, latest
