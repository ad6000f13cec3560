"""The pipeline end to end: a real Celery worker (subprocess) on the real Redis and Postgres,
local Qdrant and the OpenAI stand-in through the real SDK."""

from __future__ import annotations

from shared import ingest
from shared import repository as repo
from shared.db import transaction
from shared.pipeline.verify import verify
from shared.states import Status
from tests.support.pdfs import brochure_pdf
from tests.support.pipeline import PipelineEnv, document_point_ids, page, point_ids_of
from tests.support.workers import wait_for


def test_markdown_page_and_pdf_brochure_end_indexed(pipeline: PipelineEnv) -> None:
    with pipeline.worker():
        md = pipeline.submit(page().encode(), "knee.md")
        pdf = pipeline.submit(brochure_pdf(), "brochure.pdf", media_type="application/pdf")
        md_version = pipeline.wait_done(md.version_id)
        pdf_version = pipeline.wait_done(pdf.version_id)
    assert md_version.status == Status.INDEXED, md_version.error_message
    assert pdf_version.status == Status.INDEXED, pdf_version.error_message
    assert md_version.chunk_count and md_version.chunk_count >= 15
    assert pdf_version.chunk_count and pdf_version.tokens_spent > 0

    expected = point_ids_of(md.version_id) | point_ids_of(pdf.version_id)
    assert len(expected) == md_version.chunk_count + pdf_version.chunk_count
    with pipeline.qdrant() as index:
        assert index.all_point_ids() == expected
        records = index.retrieve(list(expected))
    payloads = {r.payload["document_id"]: r.payload for r in records}
    pdf_payload = payloads[str(pdf.document_id)]
    assert pdf_payload["version_id"] == str(pdf.version_id)
    assert pdf_payload["page_start"] >= 1 and pdf_payload["source"] == "upload"
    md_payload = payloads[str(md.document_id)]
    assert md_payload["headings"][0] == "Knee surgery"
    assert md_payload["title"] == "Title of knee.md" and md_payload["text"]


def test_same_bytes_again_is_unchanged_and_costs_nothing(pipeline: PipelineEnv) -> None:
    content = page(sections=3).encode()
    with pipeline.worker():
        first = pipeline.submit(content, "same.md")
        assert pipeline.wait_done(first.version_id).status == Status.INDEXED
        requests_before = len(pipeline.fake.requests)
        again = pipeline.submit(content, "same.md")
    assert again.status is Status.UNCHANGED
    assert pipeline.version(again.version_id).status == Status.UNCHANGED
    assert len(pipeline.fake.requests) == requests_before


def test_editing_one_paragraph_reembeds_only_what_changed(pipeline: PipelineEnv) -> None:
    original = page()
    edited = original.replace("## Step 10\n\n", "## Step 10\n\nBring your identity card. ", 1)
    assert edited != original
    with pipeline.worker():
        v1 = pipeline.submit(original.encode(), "edit.md")
        first = pipeline.wait_done(v1.version_id)
        assert first.status == Status.INDEXED and first.chunk_count >= 20
        paid_before = pipeline.embedded_inputs()
        v2 = pipeline.submit(edited.encode(), "edit.md")
        second = pipeline.wait_done(v2.version_id)
    assert second.status == Status.INDEXED
    assert pipeline.embedded_inputs() - paid_before <= 3
    assert second.chunks_embedded <= 3
    assert pipeline.version(v1.version_id).status == Status.SUPERSEDED
    report = verify()
    assert report.ok, report
    assert report.expected == second.chunk_count


def test_three_quick_versions_end_with_the_last_one_indexed(pipeline: PipelineEnv) -> None:
    with pipeline.worker():
        versions = [pipeline.submit(page(seed=s).encode(), "rapid.md") for s in (1, 2, 3)]
        last = pipeline.wait_done(versions[-1].version_id)
        for earlier in versions[:-1]:
            pipeline.wait_done(earlier.version_id)
    assert last.status == Status.INDEXED
    assert [pipeline.version(v.version_id).status for v in versions[:-1]] == [
        Status.SUPERSEDED,
        Status.SUPERSEDED,
    ]
    with pipeline.qdrant() as index:
        assert document_point_ids(index, versions[-1].document_id) == point_ids_of(
            versions[-1].version_id
        )


def test_delete_removes_every_point(pipeline: PipelineEnv) -> None:
    from worker.enqueue import enqueue_delete

    with pipeline.worker():
        kept = pipeline.submit(page(sections=2, seed=9).encode(), "kept.md")
        gone = pipeline.submit(page(sections=4).encode(), "gone.md")
        pipeline.wait_done(kept.version_id)
        pipeline.wait_done(gone.version_id)
        assert ingest.remove(gone.document_id, enqueue_delete, actor="test")

        def purged() -> bool:
            with transaction() as session:
                return repo.find_document(session, str(gone.document_id)).purged_at is not None

        wait_for(purged, timeout=60, what="the delete task")
    with pipeline.qdrant() as index:
        assert document_point_ids(index, gone.document_id) == set()
        assert document_point_ids(index, kept.document_id) == point_ids_of(kept.version_id)


def test_a_publish_right_after_a_delete_wins_over_the_late_delete_task(
    pipeline: PipelineEnv,
) -> None:
    """Delete, then publish again before the worker has run the delete task: the last one sent
    (the publish) wins; the late delete must not delete the document or supersede the new
    version."""
    from worker.enqueue import enqueue_delete

    late: list = []
    with pipeline.worker() as worker:
        first = pipeline.submit(page(sections=2, seed=4).encode(), "back.md")
        pipeline.wait_done(first.version_id)
        assert ingest.remove(first.document_id, late.append, actor="test")  # task held back
        again = pipeline.submit(page(sections=3, seed=5).encode(), "back.md")
        assert pipeline.wait_done(again.version_id).status == Status.INDEXED
        result = enqueue_delete(late[0])  # the delete task arrives late
        wait_for(
            lambda: f"{result.id}] succeeded" in worker.output(),
            timeout=60,
            what="the late delete task",
        )
    assert pipeline.version(again.version_id).status == Status.INDEXED
    with transaction() as session:
        document = repo.find_document(session, str(again.document_id))
        assert document.deleted_at is None and document.current_version_id == again.version_id
    with pipeline.qdrant() as index:
        assert document_point_ids(index, again.document_id) == point_ids_of(again.version_id)
