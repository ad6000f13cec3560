"""`ingest run | status | verify | delete | reindex`: the pipeline from the command line.

`ingest run` sends files through the same Celery chain as the API, run in-process (the
embedded default: SQLite, local Qdrant, hashing embedder unless OPENAI_API_KEY is set).
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from shared import ingest, migrate
from shared import repository as repo
from shared.db import transaction
from shared.pipeline.convert import detect_media_type
from shared.pipeline.local_run import run_local
from shared.pipeline.verify import verify as verify_index
from shared.settings import get_settings
from worker.cli.files import document_files

console = Console()
errors = Console(stderr=True)


def _in_process() -> None:
    """Run Celery tasks in this process and make sure the schema exists."""
    from worker.app import app

    app.conf.task_always_eager = True
    migrate.ensure_embedded_schema()


def run(paths: list[Path] = typer.Argument(..., help="Files and folders to ingest.")) -> None:
    """Ingest files and folders (Markdown, text, PDF) and print a summary."""
    _in_process()
    settings = get_settings()
    if not settings.use_openai:
        errors.print("[yellow]embeddings: hashing embedder (lexical, offline, not for production)")
    try:
        files = document_files(paths)
    except FileNotFoundError as exc:
        errors.print(f"[red]{exc}")
        raise typer.Exit(2) from exc

    registered: list[tuple[Path, repo.Registered]] = []
    to_run: list[uuid.UUID] = []
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=errors, transient=True) as progress:
        task = progress.add_task("registering", total=len(files))
        for path in files:
            data = path.read_bytes()
            new = repo.NewVersion(
                source="files",
                external_id=Path(os.path.relpath(path)).as_posix(),
                content=data,
                sha256=ingest.sha256(data),
                media_type=detect_media_type(data, path.name),
                filename=path.name,
                uploaded_by="cli",
            )
            try:
                registered.append((path, ingest.submit(new, to_run.append)))
            except Exception as exc:  # a crash in one file must not stop the others
                errors.print(f"[red]{path}: {exc}")
            progress.advance(task)
        # Convert and chunk here while a second thread embeds what is ready in full requests.
        progress.update(task, description="ingesting", total=len(to_run), completed=0)
        run_local(to_run, progress=lambda _: progress.advance(task))
    failed = _summary(registered)
    raise typer.Exit(1 if failed else 0)


def _summary(registered: list[tuple[Path, repo.Registered]]) -> int:
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
    summary.add_row("chunks", str(chunks))
    summary.add_row("tokens spent", str(tokens))
    console.print(summary)
    if failures.row_count:
        console.print(failures)
    return counts["failed"]


def status(document: str | None = typer.Argument(None, help="Document id or external id.")) -> None:
    """Documents by status, or one document's versions and history."""
    migrate.ensure_embedded_schema()
    with transaction() as session:
        if document is None:
            table = Table("status", "documents", title="documents")
            for name, count in sorted(repo.status_counts(session).items()):
                table.add_row(name, str(count))
            console.print(table)
            recent = Table("id", "external id", "title", "updated", title="recently changed")
            for doc in repo.recent_documents(session):
                recent.add_row(
                    str(doc.id),
                    doc.external_id,
                    doc.title or "",
                    f"{doc.updated_at:%Y-%m-%d %H:%M:%S}",
                )
            console.print(recent)
            return
        found = repo.find_document(session, document)
        if found is None:
            errors.print(f"[red]no document {document}")
            raise typer.Exit(1)
        console.print(f"[bold]{found.title or found.external_id}[/] {found.id} ({found.source})")
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


def verify() -> None:
    """Check that Qdrant holds exactly the current chunks (exit 1 otherwise)."""
    migrate.ensure_embedded_schema()
    report = verify_index()
    console.print(
        f"current chunks: {report.expected}, points: {report.stored}, "
        f"missing points: {len(report.missing)}, orphan points: {len(report.orphans)}"
    )
    if report.sparse_missing is None:
        errors.print(
            "[red]the collection has no sparse vectors (made before hybrid search): "
            "run `ingest reindex` to build one that has them"
        )
    elif report.sparse_missing:
        errors.print(f"[red]points without a sparse vector: {report.sparse_missing}")
    if not report.ok:
        raise typer.Exit(1)
    console.print("[green]ok: the index matches the database")


def delete(document: str = typer.Argument(..., help="Document id or external id.")) -> None:
    """Delete a document: its points leave the index, its history stays."""
    from worker.chain import enqueue_delete

    _in_process()
    with transaction() as session:
        found = repo.find_document(session, document)
        document_id = found.id if found else None
    if document_id is None or not ingest.remove(document_id, enqueue_delete, actor="cli"):
        errors.print(f"[red]no document {document}")
        raise typer.Exit(1)
    console.print(f"deleted {document_id}")


def reindex(
    collection: str | None = typer.Option(None, help="Name of the new collection."),
    reuse_vectors: bool = typer.Option(
        False, help="Copy vectors from the current collection instead of embedding again."
    ),
) -> None:
    """Rebuild Qdrant from Postgres into a new collection, then switch the fleet to it."""
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
        f"reindexed {report.versions} documents ({report.chunks} chunks, {report.tokens} "
        f"tokens) into {report.collection}; the fleet now uses it (was {report.previous})."
    )
    if not report.verified.ok:
        errors.print(f"[red]verify failed after the switch: {report.verified}")
        raise typer.Exit(1)
    console.print("[green]verify: ok")
