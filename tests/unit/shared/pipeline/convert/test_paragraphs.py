"""Paragraph breaks of PDF text: the usual line gap is the in-paragraph one."""

from __future__ import annotations

from shared.pipeline.convert import convert
from shared.pipeline.convert.lines import Line
from shared.pipeline.convert.render import usual_line_gap
from tests.support import layout_pdfs as fixtures

PDF = "application/pdf"


def test_one_line_paragraphs_stay_apart_when_they_outnumber_the_line_gaps() -> None:
    markdown = convert(fixtures.short_paragraphs_pdf(), PDF).markdown
    blocks = [block.strip() for block in markdown.split("\n\n") if block.strip()]
    assert blocks == [" ".join(fixtures.SHORT_INTRO.split()), *fixtures.SHORT_ITEMS], markdown


def test_usual_gap_is_the_smallest_common_gap_not_the_median() -> None:
    ys = [700.0, 685.0, 670.0]  # three lines of one paragraph
    for _ in range(6):  # then six one-line paragraphs
        ys.append(ys[-1] - 20.2)
    lines = [Line("tekst", 1, 50.0, y, 10.0, False) for y in ys]
    assert abs(usual_line_gap([lines]) - 15.0) < 0.5


def test_a_wider_gap_in_the_middle_of_a_sentence_does_not_cut_it() -> None:
    markdown = convert(fixtures.sentence_over_a_wide_gap_pdf(), PDF).markdown
    assert f"{fixtures.TALL_LINE_BEFORE} {fixtures.TALL_LINE_AFTER}" in markdown, markdown


def test_a_hyphen_after_an_abbreviation_at_a_line_end_is_kept() -> None:
    markdown = convert(fixtures.hyphenated_pdf(), PDF).markdown
    assert "de MDL-artsen de uitslag" in markdown, markdown
    assert "een CT-scanner nodig" in markdown, markdown
    assert "de ziekenhuisapotheek" in markdown, markdown
