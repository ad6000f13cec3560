"""The blocks every folder ends with, and its order code, stay out of the converted text."""

from __future__ import annotations

from shared.pipeline.convert import convert
from shared.settings import Settings
from tests.support import layout_pdfs as fixtures

PDF = "application/pdf"


def test_standard_end_blocks_and_the_folder_code_are_left_out() -> None:
    converted = convert(fixtures.folder_with_end_blocks_pdf(), PDF)
    markdown = converted.markdown
    assert "## Vragen" in markdown and "Bel dan de polikliniek." in markdown
    for heading, text in fixtures.END_BLOCKS:
        assert heading not in markdown and text not in markdown, markdown
    assert fixtures.FOLDER_CODE not in markdown
    assert any("standard section left out" in warning for warning in converted.warnings)


def test_an_empty_setting_keeps_every_section() -> None:
    settings = Settings(pdf_drop_sections="")
    markdown = convert(fixtures.folder_with_end_blocks_pdf(), PDF, settings=settings).markdown
    for heading, text in fixtures.END_BLOCKS:
        assert heading in markdown and text in markdown, markdown


def test_end_blocks_read_by_ocr_without_accents_are_left_out_too() -> None:
    pdf = fixtures.folder_with_end_blocks_pdf(fixtures.OCR_READ_END_BLOCKS)
    markdown = convert(pdf, PDF).markdown
    assert "Bel dan de polikliniek." in markdown
    for heading, text in fixtures.OCR_READ_END_BLOCKS:
        assert heading not in markdown and text not in markdown, markdown
