"""A scanned brochure uploaded through the API: the `ocr` worker reads it, the API says how,
and the editors' page warns where the text was recognised with low confidence."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from api.app import create_app
from tests.support.api import API_KEYS, EDITOR_KEY, WEBHOOK_SECRET, use_settings
from tests.support.paths import ROOT
from tests.support.pipeline import PipelineEnv
from tests.support.scans import scanned_pdf
from tests.support.system_tools import requires_tesseract
from tests.support.web import ServedApp, sign_in
from tests.support.workers import wait_for

pytestmark = requires_tesseract

EXAMPLE = (ROOT / "examples" / "heupoperatie-brochure.pdf").read_bytes()


@pytest.fixture
def site(pipeline: PipelineEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The API on the pipeline's services (whose fixture empties the Redis database)."""
    settings = use_settings(monkeypatch, API_KEYS=API_KEYS, CMS_WEBHOOK_SECRET=WEBHOOK_SECRET)
    with ServedApp(create_app(settings)) as base_url:
        yield base_url


def test_a_scan_read_with_low_confidence_is_flagged_on_the_page(
    page: Page, site: str, pipeline: PipelineEnv
) -> None:
    # A threshold above what a fair scan reaches (about 95) makes its one page "low".
    pipeline.env["OCR_LOW_CONFIDENCE"] = "99"
    headers = {"Authorization": f"Bearer {EDITOR_KEY}"}
    scan = scanned_pdf(EXAMPLE, dpi=150, pages=[1])
    with pipeline.worker(queues="cpu,io,ocr"):
        answer = httpx.post(
            site + "/v1/documents",
            headers=headers,
            files={"file": ("heup-scan.pdf", scan, "application/pdf")},
            data={"language": "nl-NL"},  # read with Tesseract's Dutch data alone
        )
        assert answer.status_code == 202, answer.text
        document_id = answer.json()["documents"][0]["document_id"]

        def indexed() -> dict | None:
            detail = httpx.get(f"{site}/v1/documents/{document_id}", headers=headers).json()
            return detail if detail["status"] in ("indexed", "failed") else None

        detail = wait_for(indexed, timeout=180, interval=0.5, what="the scan to be indexed")
    assert detail["status"] == "indexed", detail["error"]
    ocr = detail["versions"][-1]["ocr"]
    assert ocr["pages"] == [1] and ocr["low_confidence_pages"] == [1]
    assert ocr["languages"] == "nld"
    assert ocr["warning"] == (
        "scanned; text recognised with low confidence on page 1: check the chunks"
    )

    chunks = httpx.get(f"{site}/v1/documents/{document_id}/chunks", headers=headers).json()
    assert chunks["items"] and all(80 <= c["ocr_confidence"] <= 100 for c in chunks["items"])

    sign_in(page, site, EDITOR_KEY)
    page.goto(f"{site}/#/documents/{document_id}")
    notice = page.locator("#document-ocr")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("low confidence on page 1: check the chunks")
    expect(page.locator(".chunk-meta").first).to_contain_text("scanned, OCR")
