"""Cost bounds through the real worker: a document over its chunking CPU budget
and a PDF text bomb each fail their version at once with a typed code, and the worker goes on
with the next page. Real Postgres, Redis, a Celery worker subprocess, local Qdrant, the OpenAI
stand-in."""

from __future__ import annotations

from shared.states import Status
from tests.support.chunk_shapes import table
from tests.support.pdfs import text_bomb_pdf
from tests.support.pipeline import PipelineEnv

PAGE = b"# Knieoperatie\n\n## Voorbereiding\n\nNeem uw identiteitskaart mee naar het ziekenhuis.\n"


def test_a_document_over_its_cpu_budget_fails_too_complex_and_the_worker_goes_on(
    pipeline: PipelineEnv,
) -> None:
    pipeline.env["CHUNK_CPU_SECONDS"] = "0.2"  # a 2 MB table takes about 1 s, the page 5 ms
    with pipeline.worker() as worker:
        heavy = pipeline.submit(table(2_000_000).encode(), "tabel.md")
        fine = pipeline.submit(PAGE, "knie.md")
        failed = pipeline.wait_done(heavy.version_id)
        indexed = pipeline.wait_done(fine.version_id)
        assert worker.process.poll() is None
    assert failed.status == Status.FAILED and failed.error_code == "too_complex"
    assert failed.retryable is False
    assert failed.error_message and "0.2 seconds" in failed.error_message
    assert failed.attempts == 1
    assert indexed.status == Status.INDEXED


def test_a_pdf_text_bomb_fails_too_large_and_the_worker_goes_on(pipeline: PipelineEnv) -> None:
    with pipeline.worker() as worker:
        bomb = pipeline.submit(text_bomb_pdf(uses=5000), "bom.pdf", "application/pdf")
        fine = pipeline.submit(PAGE, "knie.md")
        failed = pipeline.wait_done(bomb.version_id)
        indexed = pipeline.wait_done(fine.version_id)
        assert worker.process.poll() is None
    assert failed.status == Status.FAILED and failed.error_code == "too_large"
    assert failed.retryable is False and failed.attempts == 1
    assert failed.error_message and failed.error_message.startswith("Page 1 of this PDF")
    assert indexed.status == Status.INDEXED
