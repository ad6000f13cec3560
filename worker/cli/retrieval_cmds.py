"""`ingest search` and `ingest eval`: the retrieval the chatbot uses, from the command line.

Heavy modules (Qdrant, the embedders, the search itself) are imported inside the commands, so
`ingest --help` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

console = Console()
errors = Console(stderr=True)


def _filters(pairs: list[str]) -> dict[str, object]:
    """`--filter tags=a,b --filter language=nl` -> {"tags": "a,b", "language": "nl"}."""
    found: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{pair!r}: write KEY=VALUE", param_hint="--filter")
        found[key.strip()] = value.strip()
    return found


def search(
    query: str = typer.Argument(..., help="A question or words to look for."),
    top_k: int | None = typer.Option(None, "--top-k", "-k", help="Hits (SEARCH_TOP_K)."),
    filters: list[str] = typer.Option(
        [],
        "--filter",
        help="KEY=VALUE: document_ids, source, tags, language, heading_prefix, updated_since "
        "(lists comma-separated). Repeat for more.",
    ),
    hybrid: bool | None = typer.Option(None, "--hybrid/--dense-only", help="SEARCH_HYBRID."),
    rerank: bool | None = typer.Option(None, "--rerank/--no-rerank", help="SEARCH_RERANK."),
    as_json: bool = typer.Option(False, "--json", help="The whole result as JSON."),
) -> None:
    """Search like the chatbot does: citations and the passage that matched, in document order."""
    from shared import migrate
    from shared.retrieval.filters import SearchFilters
    from shared.retrieval.search import QueryError, SearchRequest
    from shared.retrieval.search import search as run_search

    migrate.ensure_embedded_schema()
    try:
        request = SearchRequest(
            query, SearchFilters.from_dict(_filters(filters)), top_k, None, hybrid, rerank
        )
        result = run_search(request)
    except (QueryError, ValueError, TypeError) as exc:
        errors.print(f"[red]{exc}")
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        return
    for note in result.notes:
        errors.print(f"[yellow]{note}")
    if not result.hits:
        console.print("no hits")
    if result.hits and result.weak:
        errors.print(
            f"[yellow]no good answer: every hit's cosine is below {result.weak_threshold} "
            "(SEARCH_WEAK_THRESHOLD)"
        )
    for hit in result.hits:
        line = f"#{hit.rank} {hit.final_score:.3f}{' weak' if hit.weak else ''}  {hit.citation}"
        console.print(line, markup=False, highlight=False, soft_wrap=True)
        console.print(f"    {hit.passage}", markup=False, highlight=False, soft_wrap=True)
        if hit.also_in:  # the same passage in other documents
            also = ", ".join(other.citation for other in hit.also_in)
            console.print(f"    also in: {also}", markup=False, highlight=False, soft_wrap=True)
    timings = ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
    errors.print(f"[dim]{'hybrid' if result.hybrid else 'dense'}; {timings}")


def evaluate(
    questions: list[Path] = typer.Argument(
        ...,
        help="QUESTIONS.jsonl, one or more (e.g. the answerable and the absent questions).",
        exists=True,
        dir_okay=False,
    ),
    corpus: Path | None = typer.Option(
        None,
        "--corpus",
        help="Build a throw-away in-memory index from this folder instead of searching the "
        "live index.",
        exists=True,
        file_okay=False,
    ),
    overrides: list[str] = typer.Option(
        [], "--set", help="KEY=VALUE setting for this run (e.g. CHUNK_TARGET_TOKENS=300)."
    ),
    budget: int = typer.Option(1500, help="Context budget in tokens for recall-in-budget."),
    as_json: bool = typer.Option(False, "--json", help="The report as JSON."),
) -> None:
    """Measure retrieval: recall@1/5/10, MRR, recall within a token budget, misses; with
    `"absent": true` questions, the weak marks ("no good answer") and a threshold sweep."""
    from shared.pipeline import wiring
    from shared.retrieval import evaluate as ev
    from shared.settings import Settings, get_settings

    try:
        asked = [q for path in questions for q in ev.load_questions(path)]
        values = {k.strip().lower(): v for k, _, v in (o.partition("=") for o in overrides)}
        settings = Settings(**{**get_settings().model_dump(), **values}) if values else None
    except ValueError as exc:
        errors.print(f"[red]{exc}")
        raise typer.Exit(2) from exc
    settings = settings or get_settings()
    embedder = wiring.embedder(settings)
    index = None
    if corpus is not None:
        from shared.retrieval.memory_index import build, corpus_files

        index, tokens = build(corpus_files(corpus), corpus, settings, embedder)
        errors.print(f"[dim]in-memory index: {index.count()} chunks, {tokens} tokens embedded")
    else:
        from shared import migrate

        migrate.ensure_embedded_schema()
    try:
        report = ev.evaluate(asked, settings, budget=budget, embedder=embedder, index=index)
    finally:
        if index is not None:
            index.close()  # the temporary folder goes
    if as_json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return
    table = Table("metric", "value", title=f"{report.questions} questions")
    for name in ("recall_at_1", "recall_at_5", "recall_at_10", "mrr"):
        table.add_row(name.replace("_at_", "@"), f"{getattr(report, name):.3f}")
    table.add_row(f"recall in {report.budget} tokens", f"{report.recall_in_budget:.3f}")
    table.add_row("mean context tokens", f"{report.mean_context_tokens:.0f}")
    table.add_row("passage shows the answer", f"{report.passage_shows_answer:.3f}")
    table.add_row(
        f"duplicates in top {settings.search_top_k}",
        f"{report.duplicate_lists_uncollapsed} of {report.questions} lists -> "
        f"{report.duplicate_lists}",
    )
    console.print(table)
    if report.misses:
        misses = Table("question", "document", "best-ranked chunk", title="misses")
        for miss in report.misses:
            misses.add_row(miss.question, miss.document, miss.best_chunk)
        console.print(misses)
    if report.weak:
        _print_weak(report.weak)


def _print_weak(weak: object) -> None:
    """The "no good answer" table: weak marks on absent (right) and answerable (wrong)."""
    from shared.retrieval.evaluate import WeakReport

    assert isinstance(weak, WeakReport)
    table = Table(
        "threshold",
        f"absent weak (of {weak.absent})",
        f"answerable weak (of {weak.answerable})",
        "precision",
        "recall",
        title="no good answer: weak marks by SEARCH_WEAK_THRESHOLD",
    )
    table.add_column("", no_wrap=True)
    for row in weak.sweep:
        notes = []
        if row.threshold == round(weak.threshold, 4):
            notes.append("this run")
        if row.threshold == weak.suggested.threshold:
            notes.append("best balance")
        if row.threshold == weak.cautious.threshold:
            notes.append("cautious")
        table.add_row(
            f"{row.threshold:.4g}",
            str(row.absent_weak),
            str(row.answerable_weak),
            f"{row.precision:.3f}",
            f"{row.recall:.3f}",
            ", ".join(notes),
        )
    console.print(table)
