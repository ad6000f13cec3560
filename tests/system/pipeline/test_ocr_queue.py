"""A scanned brochure through the real pipeline: the `cpu` worker's convert hands it to the
`ocr` queue, a worker of its own reads it, and its chunks say they come from OCR."""

from __future__ import annotations

import redis

from shared import repository as repo
from shared.db import transaction
from shared.states import Status
from tests.support.paths import ROOT
from tests.support.pipeline import PipelineEnv
from tests.support.scans import scanned_pdf
from tests.support.system_tools import requires_tesseract
from tests.support.workers import wait_for

EXAMPLE = (ROOT / "examples" / "heupoperatie-brochure.pdf").read_bytes()


@requires_tesseract
def test_a_scan_is_converted_on_the_ocr_queue_and_its_chunks_say_so(
    pipeline: PipelineEnv, redis_url: str
) -> None:
    scan = scanned_pdf(EXAMPLE, dpi=150)
    text = pipeline.submit(EXAMPLE, "text.pdf", media_type="application/pdf")
    with pipeline.worker(queues="cpu,io") as main:
        scanned = pipeline.submit(scan, "scan.pdf", media_type="application/pdf")
        assert pipeline.wait_done(text.version_id).status == Status.INDEXED
        # Without an `ocr` worker the scan waits on its own queue; small documents go on.
        queue = redis.Redis.from_url(redis_url)
        wait_for(lambda: queue.llen("ocr") == 1, timeout=60, what="the scan on the ocr queue")
        assert pipeline.version(scanned.version_id).status == Status.CONVERTING
        with pipeline.worker(queues="ocr", concurrency=1) as ocr_worker:
            version = pipeline.wait_done(scanned.version_id, timeout=240)
    assert version.status == Status.INDEXED, version.error_message
    ran_ocr = '"task_name": "ingest.ocr"'
    assert ran_ocr in ocr_worker.output() and ran_ocr not in main.output()
    with transaction() as session:
        loaded = repo.load_version(session, scanned.version_id, "markdown")
        assert loaded is not None
        assert (loaded.conversion or {})["ocr"]["pages"] == [1, 2]
        assert (loaded.markdown or "").startswith("# Heupoperatie\n")
        chunks = repo.version_chunks(session, scanned.version_id, limit=100, offset=0)[0]
    assert chunks and all(chunk.extra["ocr"] is True for chunk in chunks)
    assert all(80 <= chunk.extra["ocr_confidence"] <= 100 for chunk in chunks)
    with pipeline.qdrant() as index:
        records = index.retrieve([c.point_id for c in chunks])
    assert records and all(r.payload["ocr"] is True for r in records)
    assert all(
        r.payload["ocr_confidence"] == c.extra["ocr_confidence"]
        for r, c in zip(
            sorted(records, key=lambda r: r.payload["chunk_index"]), chunks, strict=True
        )
    )


def test_scans_waiting_on_the_ocr_queue_count_as_the_convert_backlog(
    pipeline: PipelineEnv, redis_url: str
) -> None:
    """So the reaper leaves a scan queued behind others alone instead of sending it again."""
    from worker.enqueue import backlog

    queue = redis.Redis.from_url(redis_url)
    queue.delete("cpu", "ocr")
    assert backlog(Status.CONVERTING) == 0
    queue.rpush("ocr", "a scan's message")
    try:
        assert backlog(Status.CONVERTING) == 1
        assert backlog(Status.CHUNKING) == 0
    finally:
        queue.delete("ocr")
