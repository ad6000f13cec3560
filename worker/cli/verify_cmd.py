"""`ingest verify [--repair] [--json]`: does the index equal the record?

Imports the service parts inside the command (see `pipeline_cmds`: `ingest --help` stays fast).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from worker.cli.files import plural
from worker.cli.output import console, errors

if TYPE_CHECKING:
    from shared.pipeline.verify import VerifyReport

#: Documents with drifted payloads named one a line; `--json` names them all.
SHOWN = 50


def verify(
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Make the index match: overwrite drifted payloads with the record's, delete "
            "orphan points, embed missing points again (costs their tokens) and upsert them. "
            "Documents with a version in the pipeline are left to it; points without a sparse "
            "vector need `ingest reindex`. Then verify again.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON.")] = False,
) -> None:
    """Check that Qdrant holds exactly the current chunks, each with the payload the record
    gives it (title, link, language, tags, headings, hidden, ...): exit 1 otherwise."""
    from shared import migrate
    from shared.pipeline.verify import verify as verify_index

    migrate.ensure_embedded_schema()
    report = verify_index(repair=repair)
    after = verify_index() if repair else None
    if as_json:
        body = to_dict(report)
        if after is not None:
            body["after_repair"] = to_dict(after)
        typer.echo(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        show(report)
        if after is not None:
            show_repair(report)
            console.print("after the repair:")
            show(after)
    final = after or report
    if not final.ok:
        raise typer.Exit(1)
    if not as_json:
        console.print("[green]ok: the index matches the database")


def show(report: VerifyReport) -> None:
    console.print(
        f"current chunks: {report.expected}, points: {report.stored}, "
        f"missing points: {len(report.missing)}, orphan points: {len(report.orphans)}, "
        f"points with other payloads: {report.drifted_points}",
        soft_wrap=True,
    )
    for drift in report.drifted[:SHOWN]:
        title = f" ({drift.title})" if drift.title else ""
        console.print(
            f"[red]payload differs[/red] {drift.external_id}{title} {drift.document_id}: "
            f"{', '.join(drift.fields)} on {plural(drift.points, 'point')}",
            highlight=False,
            soft_wrap=True,
        )
    if len(report.drifted) > SHOWN:
        console.print(f"... and {len(report.drifted) - SHOWN} more documents (--json names all)")
    if report.sparse_missing is None:
        errors.print(
            "[red]the collection has no sparse vectors (made before hybrid search): "
            "run `ingest reindex` to build one that has them"
        )
    elif report.sparse_missing:
        errors.print(f"[red]points without a sparse vector: {report.sparse_missing}")


def show_repair(report: VerifyReport) -> None:
    done = report.repair
    if done is None:
        return
    console.print(
        f"repaired: {plural(done.rewritten, 'payload')} rewritten, "
        f"{plural(done.deleted, 'orphan point')} deleted, "
        f"{plural(done.restored, 'missing point')} embedded again "
        f"({plural(done.tokens, 'token')})",
        soft_wrap=True,
    )
    if done.left:
        errors.print(
            f"left to the pipeline (a version in flight): {plural(len(done.left), 'document')}"
        )


def to_dict(report: VerifyReport) -> dict[str, Any]:
    body: dict[str, Any] = {
        "ok": report.ok,
        "current_chunks": report.expected,
        "points": report.stored,
        "missing_points": sorted(str(p) for p in report.missing),
        "orphan_points": sorted(str(p) for p in report.orphans),
        "points_without_sparse_vector": report.sparse_missing,
        "drifted": [
            {
                "document_id": str(d.document_id),
                "external_id": d.external_id,
                "title": d.title,
                "fields": list(d.fields),
                "points": d.points,
            }
            for d in report.drifted
        ],
    }
    if report.repair is not None:
        done = report.repair
        body["repair"] = {
            "rewritten": done.rewritten,
            "deleted": done.deleted,
            "restored": done.restored,
            "tokens": done.tokens,
            "left_in_flight": sorted(str(d) for d in done.left),
        }
    return body
