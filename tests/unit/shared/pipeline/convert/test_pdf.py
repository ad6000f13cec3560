"""PDF conversion on PDFs the tests build with reportlab (see tests/support/pdfs.py)."""

from __future__ import annotations

import random
import re

import pytest

from shared.errors import PermanentError
from shared.pipeline.convert import Converted, convert
from shared.pipeline.convert.text import clean_pdf_line
from shared.settings import Settings
from tests.support import pdfs

PDF = "application/pdf"
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)


@pytest.fixture(scope="module")
def brochure() -> Converted:
    return convert(pdfs.brochure_pdf(), PDF, "knie.pdf")


def _code(data: bytes, settings: Settings | None = None) -> str:
    with pytest.raises(PermanentError) as info:
        convert(data, PDF, settings=settings)
    assert info.value.message and "Traceback" not in info.value.message
    return info.value.code


def _blocks(markdown: str) -> list[str]:
    return [block.strip("\n") for block in markdown.split("\n\n") if block.strip()]


def test_brochure_headings_are_recovered_with_their_levels_in_order(brochure: Converted) -> None:
    found = [(len(marks), text) for marks, text in HEADING.findall(brochure.markdown)]
    assert found == [(level, text) for level, text, _ in pdfs.BROCHURE_SECTIONS]


def test_each_heading_maps_to_the_page_it_is_printed_on(brochure: Converted) -> None:
    for level, text, page in pdfs.BROCHURE_SECTIONS:
        offset = brochure.markdown.index(f"{'#' * level} {text}\n")
        assert brochure.pages_for(offset, offset + len(text)) == (page, page), text


def test_page_map_skips_the_blank_page_and_covers_the_whole_text(brochure: Converted) -> None:
    assert [page for _, page in brochure.page_starts] == [1, 2, 3, 5]
    assert brochure.page_starts[0][0] == 0
    assert brochure.pages_for(0, len(brochure.markdown)) == (1, 5)
    assert any("page 4" in warning for warning in brochure.warnings)


def test_running_header_footer_and_page_numbers_are_gone(brochure: Converted) -> None:
    text = brochure.markdown
    assert pdfs.RUNNING_HEADER not in text
    assert "versie maart" not in text
    assert "Pagina" not in text
    assert not re.search(r"^\d+$", text, re.M)
    assert any("running header" in warning for warning in brochure.warnings)


def test_bullets_become_markdown_list_items(brochure: Converted) -> None:
    lines = brochure.markdown.splitlines()
    for item in pdfs.BROCHURE_BULLETS:
        assert f"- {item}" in lines
    assert "•" not in brochure.markdown and "\x7f" not in brochure.markdown
    # A wrapped item stays one item; the square bullets of the second list work too.
    assert any(
        line.startswith("- Leg het been hoog") and "warm kan aanvoelen." in line for line in lines
    )


def test_hyphenated_line_break_is_joined(brochure: Converted) -> None:
    assert pdfs.HYPHENATED_WORD in brochure.markdown
    assert "zieken-" not in brochure.markdown and "zieken huis" not in brochure.markdown


def test_no_paragraph_is_broken_in_the_middle_of_a_sentence(brochure: Converted) -> None:
    for block in _blocks(brochure.markdown):
        if block.startswith(("#", "- ")):
            continue
        assert "\n" not in block
        assert block.rstrip().endswith((".", "?", "!", ":")), block[-60:]
    # The paragraph that runs on from page 2 to page 3 is one paragraph spanning both.
    start = brochure.markdown.index("Ook op de dag")
    end = brochure.markdown.index("\n", start)
    assert "bloeddruk, hartslag en pijn" in brochure.markdown[start:end]
    assert brochure.pages_for(start, end) == (2, 3)


def test_brochure_metadata(brochure: Converted) -> None:
    assert brochure.metadata["title"] == "Knieoperatie - patiëntenfolder"
    assert brochure.metadata["author"] == "Afdeling Orthopedie"
    assert brochure.metadata["page_count"] == 5
    assert brochure.metadata["has_outline"] is False


def test_outline_gives_the_headings_when_fonts_do_not() -> None:
    converted = convert(pdfs.outlined_pdf(), PDF)
    found = [(len(marks), text) for marks, text in HEADING.findall(converted.markdown)]
    assert found == [(level, text) for level, text, _ in pdfs.OUTLINE_SECTIONS]
    for level, text, page in pdfs.OUTLINE_SECTIONS:
        offset = converted.markdown.index(f"{'#' * level} {text}\n")
        assert converted.pages_for(offset, offset + 1) == (page, page)
    assert converted.metadata["has_outline"] is True
    assert "ruggenprik" in converted.markdown


def test_fonts_give_the_subheadings_an_outline_leaves_out() -> None:
    converted = convert(pdfs.partly_outlined_pdf(), PDF)
    found = [(len(marks), text) for marks, text in HEADING.findall(converted.markdown)]
    assert found == [(level, text) for level, text, _ in pdfs.PARTLY_OUTLINED_SECTIONS]
    assert converted.metadata["has_outline"] is True
    assert not converted.warnings  # every bookmark was found in the text


def test_password_protected_pdf_fails_clearly() -> None:
    with pytest.raises(PermanentError) as info:
        convert(pdfs.encrypted_pdf(), PDF)
    assert info.value.code == "pdf_encrypted"
    assert "password" in info.value.message


def test_empty_user_password_opens_without_asking() -> None:
    converted = convert(pdfs.empty_password_pdf(), PDF)
    assert converted.markdown.startswith("# Beveiligde folder\n")
    assert any("encrypted" in warning for warning in converted.warnings)


def test_scanned_pdf_asks_for_ocr() -> None:
    with pytest.raises(PermanentError) as info:
        convert(pdfs.image_only_pdf(), PDF)
    assert info.value.code == "pdf_no_text"
    assert "OCR" in info.value.message


def test_an_image_only_page_is_skipped_with_a_warning() -> None:
    converted = convert(pdfs.with_image_page_pdf(), PDF)
    assert [page for _, page in converted.page_starts] == [1, 3]
    assert any("page 2" in w and "image" in w for w in converted.warnings)


@pytest.mark.parametrize("cut", [0.2, 0.5, 0.9, 0.99])
def test_truncated_pdf_is_corrupt_or_still_readable(cut: float) -> None:
    data = pdfs.brochure_pdf()
    truncated = data[: int(len(data) * cut)]
    try:
        converted = convert(truncated, PDF)
    except PermanentError as error:
        assert error.code in {"pdf_corrupt", "pdf_no_text"}
    else:  # pypdf rebuilt the cross-reference table: what it read must be real text
        assert "Knieoperatie" in converted.markdown


@pytest.mark.parametrize(
    "data",
    [b"", b"%PDF-1.7\n", b"%PDF-1.4\n" + bytes(range(256)) * 40, b"not a pdf at all"],
    ids=["empty", "header-only", "garbage", "text"],
)
def test_garbage_is_corrupt(data: bytes) -> None:
    assert _code(data) == "pdf_corrupt"


def test_damaged_bytes_never_raise_anything_untyped() -> None:
    """Random damage to a real PDF: every outcome is a conversion or a typed failure."""
    original = pdfs.brochure_pdf()
    rng = random.Random(4)
    codes: set[str] = set()
    for _ in range(40):
        data = bytearray(original)
        for _ in range(rng.randint(1, 30)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            convert(bytes(data), PDF)
            codes.add("converted")
        except PermanentError as error:
            codes.add(error.code)
    assert codes <= {"converted", "pdf_corrupt", "pdf_no_text"}


def test_page_limit_makes_it_too_large() -> None:
    settings = Settings(pdf_max_pages=3)
    with pytest.raises(PermanentError) as info:
        convert(pdfs.brochure_pdf(), PDF, settings=settings)
    assert info.value.code == "too_large"
    assert "5 pages" in info.value.message and "3" in info.value.message


def test_byte_limit_makes_it_too_large() -> None:
    assert _code(pdfs.brochure_pdf(), Settings(max_upload_bytes=1000)) == "too_large"


def test_time_limit_gives_conversion_timeout() -> None:
    assert _code(pdfs.brochure_pdf(), Settings(convert_timeout_seconds=0)) == "conversion_timeout"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("ﬁnd the ﬂoor", "find the floor"),
        ("e\u0301e\u0300n", "éèn"),  # combining accents
        ("cafe\u00b4 Mu\u00a8ller", "café Müller"),  # spacing accents after the letter
        ("\uf0b7 item", "• item"),  # Symbol-font bullet
        ("\x7f item", "• item"),  # WinAnsi bullet as pypdf reports it
        ("a\u00a0b\u200bc", "a bc"),
        ("zieken\u00ad", "zieken-"),  # soft hyphen at the end of a line
    ],
)
def test_clean_pdf_line(raw: str, clean: str) -> None:
    assert clean_pdf_line(raw) == clean


def test_brochure_laid_out_by_platypus() -> None:
    converted = convert(pdfs.flowing_brochure_pdf(), PDF)
    found = [(len(marks), text) for marks, text in HEADING.findall(converted.markdown)]
    assert found == pdfs.FLOWING_SECTIONS
    assert "Ziekenhuis Noord" not in converted.markdown
    assert not re.search(r"\d / 3", converted.markdown)
    lines = converted.markdown.splitlines()
    assert [line for line in lines if line.startswith("- ")] == [
        f"- {item}" for item in pdfs.BROCHURE_BULLETS
    ]
    for block in _blocks(converted.markdown):
        if not block.startswith(("#", "- ")):
            assert block.endswith("."), block[-60:]
    assert [page for _, page in converted.page_starts] == list(
        range(1, converted.metadata["page_count"] + 1)
    )
