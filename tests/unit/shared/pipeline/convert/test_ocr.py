"""OCR of scanned PDFs made from the tests' own brochures (tests/support/scans.py): the scan
converts to what the text layer converts to, up to a few misread characters.

Needs Tesseract with the Dutch and English data (.ci/system-packages installs it). Kept small:
OCR is CPU-heavy, so the scans are of two and three pages.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfWriter

from shared.errors import PermanentError
from shared.pipeline.convert import Converted, Ocr, OcrNeeded, convert
from shared.pipeline.convert.confidence import page_ranges
from shared.pipeline.convert.ocr import choose_languages
from shared.settings import Settings
from tests.support import layout_pdfs, pdfs
from tests.support.paths import ROOT
from tests.support.scans import _first_pages, _plain, character_error_rate, mixed_pdf, scanned_pdf
from tests.support.system_tools import requires_tesseract

PDF = "application/pdf"
EXAMPLE = (ROOT / "examples" / "heupoperatie-brochure.pdf").read_bytes()
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)
ITEM = re.compile(r"^- (.+)$", re.M)


def _headings(converted: Converted, levels: tuple[int, ...] = (1, 2)) -> list[tuple[int, str]]:
    found = [(len(marks), text) for marks, text in HEADING.findall(converted.markdown)]
    return [(level, text) for level, text in found if level in levels]


def _heading_pages(converted: Converted) -> list[int]:
    pages = []
    for match in HEADING.finditer(converted.markdown):
        span = converted.pages_for(match.start(), match.end())
        assert span is not None
        pages.append(span[0])
    return pages


@pytest.fixture(scope="module")
def example_text() -> Converted:
    return convert(EXAMPLE, PDF)


@pytest.fixture(scope="module")
def example_scan() -> Converted:
    """The example brochure scanned at 150 dpi, turned by 0.8 degrees, noisy."""
    return convert(scanned_pdf(EXAMPLE, dpi=150, angle=0.8, noise=12), PDF)


@pytest.fixture(scope="module")
def brochure_text() -> Converted:
    return convert(_first_pages(pdfs.brochure_pdf(), 3), PDF)


@pytest.fixture(scope="module")
def brochure_scan() -> Converted:
    """The tests' canvas brochure (running header and footer, page numbers, a hyphenated
    word), pages 1-3, scanned at 300 dpi and turned by half a degree."""
    data = scanned_pdf(_first_pages(pdfs.brochure_pdf(), 3), dpi=300, angle=0.5, noise=10)
    return convert(data, PDF)


@requires_tesseract
@pytest.mark.parametrize("name", ["example", "brochure"])
def test_scan_reads_within_two_percent_of_the_text_layer(
    name: str, request: pytest.FixtureRequest
) -> None:
    text = request.getfixturevalue(f"{name}_text")
    scan = request.getfixturevalue(f"{name}_scan")
    rate = character_error_rate(_plain(text.markdown), _plain(scan.markdown))
    print(f"\n{name}: character error rate {rate:.2%}")
    assert rate <= 0.02, scan.markdown


@requires_tesseract
@pytest.mark.parametrize("name", ["example", "brochure"])
def test_scan_recovers_every_h1_and_h2_at_its_level_on_its_page(
    name: str, request: pytest.FixtureRequest
) -> None:
    text = request.getfixturevalue(f"{name}_text")
    scan = request.getfixturevalue(f"{name}_scan")
    assert _headings(scan) == _headings(text)
    h12 = [i for i, m in enumerate(HEADING.finditer(text.markdown)) if len(m.group(1)) <= 2]
    scan_h12 = [i for i, m in enumerate(HEADING.finditer(scan.markdown)) if len(m.group(1)) <= 2]
    assert [_heading_pages(scan)[i] for i in scan_h12] == [_heading_pages(text)[i] for i in h12]


@requires_tesseract
def test_scan_keeps_lists_as_lists(example_text: Converted, example_scan: Converted) -> None:
    expected = ITEM.findall(example_text.markdown)
    found = ITEM.findall(example_scan.markdown)
    assert len(found) == len(expected) == 6
    for want, got in zip(expected, found, strict=True):
        assert character_error_rate(want, got) <= 0.05, (want, got)


@requires_tesseract
def test_scan_keeps_the_page_map_and_drops_running_lines(
    brochure_text: Converted, brochure_scan: Converted
) -> None:
    assert [page for _, page in brochure_scan.page_starts] == [1, 2, 3]
    assert pdfs.RUNNING_HEADER not in brochure_scan.markdown
    assert "versie maart" not in brochure_scan.markdown
    assert not re.search(r"^\s*\d+\s*$", brochure_scan.markdown, re.M)  # no page numbers
    assert pdfs.HYPHENATED_WORD in brochure_scan.markdown  # "zieken-" + "huisapotheek"
    for text_start, scan_start in zip(
        brochure_text.page_starts, brochure_scan.page_starts, strict=True
    ):
        assert abs(text_start[0] - scan_start[0]) <= 0.02 * len(brochure_text.markdown)


@requires_tesseract
def test_scan_reports_its_pages_and_confidence(example_scan: Converted) -> None:
    assert example_scan.ocr is not None
    assert example_scan.ocr["pages"] == [1, 2]
    assert example_scan.ocr["languages"] == "nld+eng"
    assert 80 <= example_scan.ocr["confidence"] <= 100  # type: ignore[operator]
    assert example_scan.ocr["low_confidence_pages"] == []
    whole = example_scan.ocr_confidence(0, len(example_scan.markdown))
    assert whole is not None and abs(whole - example_scan.ocr["confidence"]) < 1  # type: ignore[operator]


@requires_tesseract
def test_mixed_pdf_keeps_text_pages_and_reads_scanned_ones(example_text: Converted) -> None:
    mixed = convert(mixed_pdf(EXAMPLE, scanned=[2], dpi=200), PDF)
    assert mixed.ocr is not None and mixed.ocr["pages"] == [2]
    assert _headings(mixed) == _headings(example_text)
    assert [page for _, page in mixed.page_starts] == [1, 2]
    second = mixed.page_starts[1][0]
    assert mixed.ocr_confidence(0, second) is None  # page 1: the text layer
    assert mixed.ocr_confidence(second, len(mixed.markdown)) is not None
    assert mixed.markdown[:second] == example_text.markdown[:second]
    rate = character_error_rate(_plain(example_text.markdown), _plain(mixed.markdown))
    assert rate <= 0.01


@requires_tesseract
def test_a_low_confidence_page_gets_a_warning_an_editor_can_act_on() -> None:
    """The threshold set above what a fair scan reaches (about 95) makes page 1 'low'."""
    scan = scanned_pdf(_first_pages(EXAMPLE, 1), dpi=150, noise=30)
    converted = convert(scan, PDF, settings=Settings(ocr_low_confidence=99))
    assert converted.ocr is not None and converted.ocr["low_confidence_pages"] == [1]
    assert "scanned; text recognised with low confidence on page 1: check the chunks" in (
        converted.warnings
    )


def test_deferred_ocr_names_the_pages_instead_of_reading_them() -> None:
    with pytest.raises(OcrNeeded) as info:
        convert(mixed_pdf(EXAMPLE, scanned=[2]), PDF, ocr=Ocr.DEFER)
    assert info.value.pages == [2]
    assert convert(EXAMPLE, PDF, ocr=Ocr.DEFER).ocr is None  # text only: nothing to defer


def test_ocr_switched_off_keeps_pdf_no_text_and_says_why() -> None:
    with pytest.raises(PermanentError) as info:
        convert(scanned_pdf(_first_pages(EXAMPLE, 1)), PDF, settings=Settings(ocr_enabled=False))
    assert info.value.code == "pdf_no_text"
    assert "OCR_ENABLED" in info.value.message


def test_without_tesseract_pdf_no_text_says_how_to_install_it(tmp_path: Path) -> None:
    """A machine without Tesseract: the same code in a process whose PATH has no tesseract."""
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scanned_pdf(_first_pages(EXAMPLE, 1)))
    script = (
        "import sys\n"
        "from shared.errors import PermanentError\n"
        "from shared.pipeline.convert import convert\n"
        "try:\n"
        f"    convert(open({str(scan)!r}, 'rb').read(), 'application/pdf')\n"
        "except PermanentError as error:\n"
        "    print(error.code); print(error.message)\n"
    )
    env = {**os.environ, "PATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    code, message = result.stdout.split("\n", 1)
    assert code == "pdf_no_text"
    assert "apt-get install tesseract-ocr tesseract-ocr-nld tesseract-ocr-eng" in message


@requires_tesseract
@pytest.mark.parametrize(
    ("language", "expected"),
    [("nl", "nld"), ("nl-BE", "nld"), ("en_GB", "eng"), (None, "nld+eng"), ("xx", "nld+eng")],
)
def test_languages_follow_the_document(language: str | None, expected: str) -> None:
    assert choose_languages(language, "nld+eng") == expected


def test_page_ranges_read_like_a_person_writes_them() -> None:
    assert page_ranges([7, 3, 4]) == "3-4, 7"


@requires_tesseract
def test_a_poster_sized_page_is_read_within_the_pixel_limit_and_a_scan_at_its_own_dpi() -> None:
    import pypdfium2 as pdfium
    from reportlab.pdfgen.canvas import Canvas

    from shared.pipeline.convert.ocr import MAX_PIXELS, render_dpi

    buffer = io.BytesIO()
    poster = Canvas(buffer, pagesize=(200 * 72, 100 * 72))  # 200 by 100 inches
    poster.drawString(72, 72, "Poster")
    poster.save()
    page = pdfium.PdfDocument(buffer.getvalue())[0]
    dpi = render_dpi(page, 300, page.get_size())
    assert (200 * dpi) * (100 * dpi) <= MAX_PIXELS and dpi >= 40
    scan = pdfium.PdfDocument(scanned_pdf(_first_pages(EXAMPLE, 1), dpi=150))[0]
    assert render_dpi(scan, 300, scan.get_size()) == 150


@requires_tesseract
def test_a_page_over_the_time_limit_is_skipped_and_a_scan_of_only_such_pages_times_out() -> None:
    scan = scanned_pdf(_first_pages(EXAMPLE, 1))
    with pytest.raises(PermanentError) as info:
        convert(scan, PDF, settings=Settings(ocr_page_timeout_seconds=0.01))
    assert info.value.code == "conversion_timeout"
    assert "OCR_PAGE_TIMEOUT_SECONDS" in info.value.message


def test_a_blank_page_is_not_a_scan_so_a_text_brochure_stays_on_the_cpu_queue() -> None:
    converted = convert(pdfs.brochure_pdf(), PDF, ocr=Ocr.DEFER)  # page 4 is blank
    assert converted.ocr is None
    assert f"page {pdfs.BLANK_PAGE} is empty; skipped" in converted.warnings


def test_a_pdf_of_blank_pages_says_so_rather_than_asking_for_ocr() -> None:
    blank = io.BytesIO()
    writer = PdfWriter()
    writer.add_blank_page(595, 842)
    writer.write(blank)
    with pytest.raises(PermanentError) as info:
        convert(blank.getvalue(), PDF)
    assert info.value.code == "pdf_no_text" and "blank" in info.value.message


def test_a_running_footer_ocr_reads_with_other_noise_on_each_page_is_left_out() -> None:
    """A logo beside a footer reads as "4." on one page and "rf" on the next."""
    markdown = convert(scanned_pdf(layout_pdfs.ocr_read_footers_pdf()), PDF).markdown
    assert "Zuidwest" not in markdown, markdown
    for title, _ in layout_pdfs.OCR_READ_PAGES:
        assert title in markdown, markdown


def test_a_scan_keeps_the_heading_levels_of_its_text_layer() -> None:
    """Sections at 14 pt and sub-sections at 12 pt over a 10 pt body: OCR measures each a
    little off, and the levels must still come out as the text layer's."""
    original = layout_pdfs.section_levels_pdf()
    heading = re.compile(r"^#{1,6} .+$", re.M)
    expected = heading.findall(convert(original, PDF).markdown)
    assert len(expected) == 7, expected
    scanned = heading.findall(convert(scanned_pdf(original, dpi=300), PDF).markdown)
    assert scanned == expected
