"""`ingest reindex --batch | --resume | --cancel | --dry-run`: the re-index through OpenAI's
Batch API from the command line (`shared.pipeline.batch_reindex`). On a fleet Celery beat
polls (`ingest.reindex_poll`); on the embedded default `--resume` does, once a run."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from worker.cli.files import plural
from worker.cli.output import console, errors

if TYPE_CHECKING:
    from shared.pipeline.batch_reindex import JobReport, Plan


def batch_reindex(
    collection: str | None, *, batch: bool, dry_run: bool, resume: bool, cancel: bool
) -> None:
    from shared import migrate
    from shared.pipeline import batch_poll, batch_reindex
    from shared.settings import get_settings

    migrate.ensure_embedded_schema()
    settings = get_settings()
    try:
        if dry_run:
            print_plan(batch_reindex.plan(settings))
            return
        if cancel:
            report = batch_reindex.cancel(settings)
            if report is None:
                errors.print("[red]no batch re-index is running")
                raise typer.Exit(1)
        elif resume:
            report = batch_poll.poll(settings) or batch_reindex.status(settings)
            if report is None:
                errors.print("[red]no batch re-index was ever started (`ingest reindex --batch`)")
                raise typer.Exit(1)
        else:
            started = batch_reindex.start(collection, settings=settings)
            assert not isinstance(started, batch_reindex.Plan)
            report = started
    except ValueError as exc:
        errors.print(f"[red]{exc}")
        raise typer.Exit(2) from exc
    print_job(report)
    if report.state in ("switched", "done") and settings.embedding_model == report.model:
        from shared.pipeline.verify import verify

        verified = verify(settings)
        if not verified.ok:
            errors.print(f"[red]verify failed after the switch: {verified}")
            raise typer.Exit(1)
        console.print("[green]verify: ok")
    if report.state == "failed":
        raise typer.Exit(1)


def print_plan(plan: Plan) -> None:
    console.print(
        f"{plural(plan.chunks, 'current chunk')}: {plural(plan.inputs, 'input')} to embed "
        f"({plural(plan.tokens, 'token')}), {plural(plan.reused, 'vector')} known already"
    )
    console.print(
        f"  embeddings API: ${plan.sync_cost:.4f} (at ${plan.prices[0]:g} per 1M tokens), "
        "bounded by the account's tokens per minute"
    )
    console.print(
        f"  Batch API:      ${plan.batch_cost:.4f} (at ${plan.prices[1]:g} per 1M tokens), "
        f"{plural(plan.requests, 'request')} in {plural(len(plan.files), 'file')}, "
        "done within 24 hours"
    )


def print_job(report: JobReport) -> None:
    console.print(
        f"batch re-index {report.id} into {report.collection} ({report.model}): {report.state}"
    )
    for line in report.batches:
        read = ", read" if line.read else ""
        console.print(
            f"  file {line.number}: {line.batch_id or '-'} {line.state}{read} "
            f"({line.completed} of {plural(line.inputs, 'input')} lines done, "
            f"{line.failed} failed)"
        )
    console.print(
        f"  tokens: {report.batch_tokens} of about {report.tokens_estimated} through batches, "
        f"{report.sync_tokens} through the embeddings API; cost ${report.cost:.4f} "
        f"(${report.sync_cost_estimate:.4f} all through the embeddings API)"
    )
    if report.error:
        errors.print(f"[red]{report.error}")
    if report.state == "running":
        console.print("  carried on by Celery beat, or `ingest reindex --resume`")
    was = "" if report.previous == "-" else f" (was {report.previous})"
    if report.state == "switched":
        console.print(
            f"  the fleet now uses {report.collection}{was} once it runs {report.model}; its "
            "first poll then copies what the old model indexed meanwhile"
        )
    elif report.state == "done":
        console.print(f"  the fleet uses {report.collection}{was}")
    elif report.state in ("cancelled", "failed"):
        console.print(f"  the fleet keeps the collection it used; {report.collection} can go")
