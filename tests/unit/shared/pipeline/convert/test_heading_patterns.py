"""Headings on real brochures' patterns that the 48 development folders showed."""

from __future__ import annotations

import re

from shared.pipeline.convert import convert
from tests.support import heading_pdfs as fixtures

PDF = "application/pdf"
HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def test_a_bold_telephone_line_set_apart_is_no_heading() -> None:
    markdown = convert(fixtures.bold_phone_lines_pdf(), PDF).markdown
    assert HEADING.findall(markdown) == [fixtures.TITLE, fixtures.SUBHEADING], markdown
    for line in fixtures.PHONE_LINES:
        assert line in markdown
