"""A PDF text bomb is refused while pypdf reads it: a page's text beyond
PDF_MAX_CHARS_PER_PAGE, or the document's beyond PDF_MAX_CHARS, fails `too_large` before the
lines, layout and Markdown of the rest are built. Ordinary brochures convert as before."""

from __future__ import annotations

import tracemalloc

import pytest

from shared.errors import PermanentError
from shared.pipeline.convert import convert
from shared.settings import Settings
from tests.support import pdfs


def _refusal(data: bytes, settings: Settings) -> PermanentError:
    with pytest.raises(PermanentError) as refused:
        convert(data, "application/pdf", "folder.pdf", settings=settings)
    return refused.value


def test_a_form_drawn_hundreds_of_times_is_refused_early_and_small() -> None:
    bomb = pdfs.text_bomb_pdf(uses=500)  # about 7 million characters from a few KB
    assert len(bomb) < 10_000
    tracemalloc.start()
    try:
        refused = _refusal(bomb, Settings())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refused.code == "too_large" and refused.retryable is False
    assert "Page 1" in refused.message and "50,000 characters" in refused.message
    # Refused at the first run over the bound: nothing near the 7 million characters is kept.
    assert peak < 20 * 1024 * 1024


def test_the_text_of_the_whole_document_is_bounded_too() -> None:
    brochure = pdfs.brochure_pdf()
    assert convert(brochure, "application/pdf", settings=Settings()).markdown  # fits
    refused = _refusal(brochure, Settings(pdf_max_chars=2_000))
    assert refused.code == "too_large" and "2,000 characters" in refused.message
    assert "page" in refused.message


def test_a_page_over_its_own_bound_names_the_page() -> None:
    refused = _refusal(pdfs.brochure_pdf(), Settings(pdf_max_chars_per_page=300))
    assert refused.code == "too_large"
    assert refused.message.startswith("Page 1 of this PDF holds more than 300 characters")
