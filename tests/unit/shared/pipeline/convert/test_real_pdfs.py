"""Conversion of real PDFs that nobody here wrote: a dozen test files of pypdf and OCRmyPDF, kept
in tests/real_pdfs/ (origin and licence in tests/corpus/README.md; outside tests/corpus/, whose
pages the CLI tests ingest as a folder). Nothing is downloaded; the larger run over all three
libraries' test files (about 150) is `bench/real_pdfs.py`."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shared.errors import PermanentError
from shared.pipeline.convert import convert, detect_media_type
from shared.pipeline.convert.ocr import installed_languages
from shared.settings import Settings
from tests.support.paths import ROOT

REAL_PDFS = ROOT / "tests" / "real_pdfs"
PDFS = sorted(REAL_PDFS.glob("*.pdf"))
TYPED_CODES = {"pdf_encrypted", "pdf_corrupt", "pdf_no_text", "too_large", "conversion_timeout"}
TIME_LIMIT = 30.0
# OCR at 100 dpi: the one scan takes about 5 s; its limit leaves room for a loaded machine (at
# 10 s it ended conversion_timeout on the shared 2-core machine with a load of 12).
OCR_LIMIT = 60
GRACE = 5.0  # the deadline is checked between pages and text runs, not preemptively
OCR = bool({"nld", "eng"} <= installed_languages())
EXPECTED = {
    "pypdf-crazyones.pdf": "converted",  # a plain text PDF
    "pypdf-pdflatex-outline.pdf": "converted",  # headings from the bookmarks
    "pypdf-libreoffice-writer-password.pdf": "pdf_encrypted",
    "pypdf-crazyones-encrypted-256.pdf": "pdf_encrypted",
    "ocrmypdf-invalid.pdf": "pdf_corrupt",
    # A scanned page (Huckleberry Finn): read by Tesseract, or pdf_no_text where it is missing.
    "ocrmypdf-c03-29.pdf": "converted" if OCR else "pdf_no_text",
}
SETTINGS = Settings(
    convert_timeout_seconds=TIME_LIMIT,
    ocr_dpi=100,
    ocr_timeout_seconds=OCR_LIMIT,
    ocr_page_timeout_seconds=OCR_LIMIT,
)


def outcome(path: Path) -> str:
    data = path.read_bytes()
    try:
        converted = convert(data, detect_media_type(data, path.name), path.name, settings=SETTINGS)
    except PermanentError as error:
        assert error.code in TYPED_CODES, f"{path.name}: {error.code}"
        assert error.message and "Traceback" not in error.message
        return error.code
    assert converted.markdown.strip(), path.name
    assert converted.page_starts and converted.page_starts[0][0] == 0, path.name
    assert converted.metadata["page_count"] >= 1
    return "converted"


def test_the_kept_pdfs_are_there_and_small() -> None:
    assert {path.name for path in PDFS} >= set(EXPECTED)
    assert sum(path.stat().st_size for path in PDFS) < 500_000


@pytest.mark.parametrize("path", PDFS, ids=[path.name for path in PDFS])
def test_a_real_pdf_converts_or_fails_with_a_typed_error_in_time(path: Path) -> None:
    started = time.monotonic()
    found = outcome(path)
    elapsed = time.monotonic() - started
    assert elapsed <= TIME_LIMIT + OCR_LIMIT + GRACE, f"{path.name} took {elapsed:.1f} s"
    assert found == EXPECTED.get(path.name, found)


def test_the_outline_gives_the_headings() -> None:
    path = REAL_PDFS / "pypdf-pdflatex-outline.pdf"
    data = path.read_bytes()
    converted = convert(data, detect_media_type(data, path.name), path.name, settings=SETTINGS)
    assert converted.markdown.count("\n#") + converted.markdown.startswith("#") >= 5
